(function () {
  'use strict';
  var B = window.BENCH, C = {};
  B.columns.forEach(function (c, i) { C[c] = i; });
  var ANCHORS = __ANCHORS__;
  function get(r, c) { return r[C[c]]; }
  function median(v) {
    v = v.filter(function (x) { return x !== null && !isNaN(x); }).sort(function (a, b) { return a - b; });
    if (!v.length) return null;
    var m = Math.floor(v.length / 2);
    return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }
  function mean(v) { return v.length ? v.reduce(function (a, b) { return a + b; }, 0) / v.length : null; }
  function label(r) {
    return get(r, 'mechanism') + ' / ' + get(r, 'learner') + ' / ' + get(r, 'loss') + ' / n=' + get(r, 'n');
  }
  function score(r) {
    var kind = get(r, 'kind'), rate = kind === 'interval' ? get(r, 'coverage') : get(r, 'rejection_rate');
    var nom = get(r, 'nominal'), R = get(r, 'replicates');
    var band = R > 0 ? 2 * Math.sqrt(nom * (1 - nom) / R) : null;
    var ok = rate !== null && band !== null;
    return {rate: ok ? rate : null, gap: ok ? rate - nom : null,
            within: ok ? (Math.abs(rate - nom) <= band ? 1 : 0) : null};
  }
  function filters() {
    var f = {};
    document.querySelectorAll('form.filters select').forEach(function (s) { f[s.name] = s.value; });
    return f;
  }
  function selected(f) {
    return B.rows.filter(function (r) {
      return Object.keys(f).every(function (k) { return f[k] === '' || String(get(r, k)) === f[k]; });
    });
  }
  function cost(rows) {
    var failed = 0, tried = 0;
    rows.forEach(function (r) { failed += get(r, 'failed'); tried += get(r, 'failed') + get(r, 'replicates'); });
    return {median_fits: median(rows.map(function (r) { return get(r, 'fits'); })),
            median_cpu_seconds: median(rows.map(function (r) { return get(r, 'cpu_seconds'); })),
            failed_share: tried ? failed / tried : null};
  }
  function boardRow(kind, proc, rows) {
    var s = rows.map(function (r) { return [r, score(r)]; }), out = {procedure: proc};
    if (kind === 'interval') {
      var ok = s.filter(function (x) { return x[1].within !== null; }), worst = null;
      ok.forEach(function (x) { if (worst === null || x[1].gap < worst[1].gap) worst = x; });
      out.cells = ok.length; out.unscored = s.length - ok.length;
      out.within_share = mean(ok.map(function (x) { return x[1].within; }));
      out.worst_gap = worst ? worst[1].gap : null; out.worst_cell = worst ? label(worst[0]) : '';
      out.mean_undercoverage = mean(ok.map(function (x) { return Math.max(0, -x[1].gap); }));
      out.median_relative_width = median(ok.map(function (x) { return get(x[0], 'relative_width'); }));
    } else {
      var sc = s.filter(function (x) { return x[1].rate !== null && get(x[0], 'replicates') > 0; });
      var nul = sc.filter(function (x) { return get(x[0], 'null_true'); });
      var alt = sc.filter(function (x) { return !get(x[0], 'null_true'); });
      var w = null;
      nul.forEach(function (x) { if (w === null || x[1].rate > w[1].rate) w = x; });
      out.size_cells = nul.length; out.size_within_share = mean(nul.map(function (x) { return x[1].within; }));
      out.worst_size = w ? w[1].rate : null; out.worst_size_cell = w ? label(w[0]) : '';
      out.power_cells = alt.length; out.median_power = median(alt.map(function (x) { return x[1].rate; }));
    }
    var c = cost(rows);
    Object.keys(c).forEach(function (k) { out[k] = c[k]; });
    return out;
  }
  function board(rows, kind) {
    var groups = {};
    rows.forEach(function (r) {
      var p = get(r, 'procedure');
      if (get(r, 'kind') === kind) (groups[p] = groups[p] || []).push(r);
    });
    var key1 = kind === 'interval' ? 'within_share' : 'size_within_share';
    var key2 = kind === 'interval' ? 'worst_gap' : 'median_power';
    var out = Object.keys(groups).sort().map(function (p) { return boardRow(kind, p, groups[p]); });
    function v(x) { return x === null ? -Infinity : x; }
    out.sort(function (a, b) { return v(b[key1]) - v(a[key1]) || v(b[key2]) - v(a[key2]); });
    return out;
  }
  function fmt(x, spec) {
    if (x === null || x === undefined || (typeof x === 'number' && isNaN(x))) return '';
    if (typeof x === 'string') return x.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    if (spec === 'd') return String(Math.round(x));
    if (spec === '%') return (100 * x).toFixed(1) + ' %';
    if (spec === '+') return (x >= 0 ? '+' : '') + x.toFixed(3);
    if (spec === 'g') return Number(x.toPrecision(3)).toString();
    return x.toFixed(Number(spec));
  }
  function table(el, cols, rows) {
    var h = '<thead><tr>' + cols.map(function (c) {
      var text = rows.length && typeof rows[0][c[0]] === 'string' ? ' class="t"' : '';
      return '<th data-col="' + c[0] + '"' + text + '>' + c[1] + '</th>';
    }).join('') + '</tr></thead><tbody>';
    rows.forEach(function (r) {
      h += '<tr>' + cols.map(function (c) {
        return (typeof r[c[0]] === 'string' ? '<td class="t">' : '<td>') + fmt(r[c[0]], c[2]) + '</td>';
      }).join('') + '</tr>';
    });
    el.innerHTML = h + '</tbody>';
  }
  function colour(gap, half) {
    var t = Math.max(0, Math.min(1, (gap / half + 1) / 2)) * (ANCHORS.length - 1);
    var i = Math.min(Math.floor(t), ANCHORS.length - 2), f = t - i;
    function rgb(h) { return [1, 3, 5].map(function (k) { return parseInt(h.substr(k, 2), 16); }); }
    var a = rgb(ANCHORS[i]), b = rgb(ANCHORS[i + 1]);
    return 'rgb(' + a.map(function (x, k) { return Math.round(x + f * (b[k] - x)); }).join(',') + ')';
  }
  function heat(el, rows, estimand, order) {
    var grid = {}, mechs = {}, half = 0.05;
    rows.forEach(function (r) {
      if (get(r, 'kind') !== 'interval' || get(r, 'estimand') !== estimand) return;
      var s = score(r); if (s.rate === null) return;
      var key = get(r, 'procedure') + '\u0000' + get(r, 'mechanism');
      var g = grid[key] = grid[key] || {rates: [], gaps: [], worst: null, slug: ''};
      g.rates.push(s.rate); g.gaps.push(s.gap); mechs[get(r, 'mechanism')] = 1;
      if (g.worst === null || s.gap < g.worst) { g.worst = s.gap; g.slug = get(r, 'slug'); }
    });
    Object.keys(grid).forEach(function (k) {
      grid[k].gap = mean(grid[k].gaps); grid[k].rate = mean(grid[k].rates);
      half = Math.max(half, Math.abs(grid[k].gap));
    });
    var ms = Object.keys(mechs).sort();
    var procs = order.filter(function (p) { return ms.some(function (m) { return grid[p + '\u0000' + m]; }); });
    var h = '<thead><tr><th>procedure</th>' + ms.map(function (m) { return '<th>' + m + '</th>'; }).join('') +
      '</tr></thead><tbody>';
    procs.forEach(function (p) {
      h += '<tr><td>' + p + '</td>' + ms.map(function (m) {
        var g = grid[p + '\u0000' + m]; if (!g) return '<td></td>';
        return '<td class="' + (Math.abs(g.gap) > 0.6 * half ? 'dark' : '') + '" style="background:' +
          colour(g.gap, half) +
          '" title="coverage − nominal ' + fmt(g.gap, '+') + ' over ' + g.rates.length + ' cells; opens the worst">' +
          '<a href="cells/' + g.slug + '.html">' + g.rate.toFixed(3) + '</a></td>';
      }).join('') + '</tr>';
    });
    el.innerHTML = h + '</tbody>';
    return {half: half, cells: Object.keys(grid).length};
  }
  function sortable(el) {
    el.addEventListener('click', function (e) {
      var th = e.target.closest('th'); if (!th) return;
      var i = Array.prototype.indexOf.call(th.parentNode.children, th), body = el.tBodies[0];
      var dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      var rows = Array.prototype.slice.call(body.rows);
      function key(r) {
        var t = r.cells[i].textContent.replace(/[ %+]/g, ''), x = parseFloat(t);
        return isNaN(x) ? t : x;
      }
      rows.sort(function (a, b) { var x = key(a), y = key(b); return (x > y ? 1 : x < y ? -1 : 0) * dir; });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  }
  function redraw() {
    var f = filters(), rows = selected(f), check = {filters: f, rows: rows.length};
    var iv = document.getElementById('board-interval'), te = document.getElementById('board-test');
    check.interval = board(rows, 'interval'); check.test = board(rows, 'test');
    if (iv) table(iv, B.intervalColumns, check.interval);
    if (te) table(te, B.testColumns, check.test);
    var fh = Object.assign({}, f); fh.estimand = ''; fh.kind = '';
    var hr = selected(fh);  // each heat table is for its own estimand, of the interval cells
    document.querySelectorAll('table.heat').forEach(function (el) {
      check['heat_' + el.dataset.estimand] = heat(el, hr, el.dataset.estimand, B.order);
    });
    var n = document.getElementById('selected-count'); if (n) n.textContent = rows.length;
    var cap = document.getElementById('board-caption');
    if (cap) {
      cap.textContent = 'Cells shown: ' + Object.keys(f).map(function (k) { return k + ' ' + (f[k] || 'all'); })
        .join('; ') + '. Best first: by the share of cells within nominal ± 2 MCSE₀ ' +
        '(tests: size within alpha ± 2 MCSE₀).';
    }
    document.body.dataset.benchCheck = JSON.stringify(check);
  }
  // filters may come in the address: index.html?estimand=Err_n&learner=tree (a link to a view)
  var wanted = new URLSearchParams(window.location.search);
  document.querySelectorAll('form.filters select').forEach(function (s) {
    var known = Array.prototype.some.call(s.options, function (o) { return o.value === wanted.get(s.name); });
    if (wanted.has(s.name) && known) {
      s.value = wanted.get(s.name);
    }
    s.addEventListener('change', redraw);
  });
  document.querySelectorAll('table.sortable').forEach(sortable);
  redraw();
})();
