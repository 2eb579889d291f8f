"""``write_benchmark_site``: the benchmark's results as a static site (HTML, CSS, plain JavaScript;
no server, no CDN: it opens from disk, offline).

Files written in ``out_dir``: ``index.html`` (leaderboard, heat maps, comparison, data cells,
ADEMP, downloads), ``site.css``, ``site.js``, ``data.js`` (the cell table's columns the filters
need), ``heatmap_<estimand>.svg``, ``cells/<data cell>.html`` and ``.svg`` (the drill-down), and
the downloads: ``cells.csv`` / ``cells.parquet`` (the cell table), ``leaderboard_intervals`` and
``leaderboard_tests`` (``.csv`` / ``.parquet``, one row per kind, estimand and procedure) and
``comparison_schulz_kuempel.csv``.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.report.benchmark.ademp import ademp_html
from simstudy.report.benchmark.assets import RDBU_ANCHORS, SITE_CSS, SITE_JS
from simstudy.report.benchmark.comparison import compare_with_schulz_kuempel, setting_differences
from simstudy.report.benchmark.drilldown import CELL_DIR, cell_figure, cell_page, data_cells
from simstudy.report.benchmark.heatmap import coverage_grid, heatmap_figure
from simstudy.report.benchmark.leaderboard import INTERVAL_COLUMNS, TEST_COLUMNS, leaderboard
from simstudy.report.benchmark.markup import SITE_CSS_FILE, SITE_JS_FILE, esc
from simstudy.report.benchmark.page import data_script, estimand_order, main_page
from simstudy.report.benchmark.scores import cell_slug
from simstudy.report.benchmark.table import read_benchmark

__all__ = ["write_benchmark_site", "SITE_INDEX"]

#: The site's main page.
SITE_INDEX = "index.html"
_BY = ["kind", "estimand", "procedure"]


def write_benchmark_site(result_or_dir: Any, out_dir) -> Path:
    """Write the static results site of a benchmark run into ``out_dir``; returns its ``index.html``.

    Parameters
    ----------
    result_or_dir : BenchmarkResult or path
        The result of ``run_benchmark`` (anything with ``.cells`` and ``.config``) or its run
        directory (``cells.parquet`` and ``config.json``).
    out_dir : path
        Created if needed; the pages and figures of an earlier site there are replaced.
    """
    tables = read_benchmark(result_or_dir)
    cells = tables.cells.assign(slug=[cell_slug(*k) for k in tables.cells[["mechanism", "learner", "loss", "n"]]
                                      .itertuples(index=False)])
    out = Path(out_dir)
    shutil.rmtree(out / CELL_DIR, ignore_errors=True)
    (out / CELL_DIR).mkdir(parents=True, exist_ok=True)
    downloads = _write_downloads(tables.cells, tables.config, out)
    estimands = estimand_order(cells.loc[cells["kind"] == "interval", "estimand"]) or estimand_order(cells["estimand"])
    default = estimands[0]
    view = leaderboard(cells[cells["estimand"] == default], by=("kind", "procedure"))
    order = list(view.loc[view["kind"] == "interval", "procedure"])
    order += sorted(set(cells.loc[cells["kind"] == "interval", "procedure"]) - set(order))
    grids, figures = {}, {}
    for estimand in estimands:
        grids[estimand] = coverage_grid(cells, estimand, order)
        if len(grids[estimand]):
            figures[estimand] = heatmap_figure(grids[estimand], estimand, out / f"heatmap_{estimand}.svg").name
        else:
            grids.pop(estimand)
    for slug, rows in data_cells(cells):
        cell_figure(rows, out / CELL_DIR / f"{slug}.svg")
        (out / CELL_DIR / f"{slug}.html").write_text(cell_page(slug, rows, f"{slug}.svg"), encoding="utf-8")
    parts = {"title": "The CV inference benchmark: results", "intro": _intro(cells, tables.config),
             "filters_cells": cells, "default_estimand": default,
             "board_interval": view[view["kind"] == "interval"], "board_test": view[view["kind"] == "test"],
             "grids": grids, "figures": figures, "comparison": compare_with_schulz_kuempel(cells, tables.config),
             "setting": setting_differences(cells, tables.config), "cell_list": _cell_list(cells),
             "ademp": ademp_html(tables.config, cells), "downloads": downloads}
    (out / SITE_CSS_FILE).write_text(SITE_CSS.lstrip(), encoding="utf-8")
    (out / SITE_JS_FILE).write_text(SITE_JS.replace("__ANCHORS__", json.dumps(list(RDBU_ANCHORS))).lstrip(),
                                    encoding="utf-8")
    (out / "data.js").write_text(data_script(cells, order), encoding="utf-8")
    index = out / SITE_INDEX
    index.write_text(main_page(parts), encoding="utf-8")
    return index


def _write_downloads(cells: pd.DataFrame, config: dict, out: Path) -> str:
    """Every number as CSV and Parquet; the HTML list of links."""
    board = leaderboard(cells, by=_BY)
    files = {"cells": cells,
             "leaderboard_intervals": board.loc[board["kind"] == "interval", [*_BY, *INTERVAL_COLUMNS]],
             "leaderboard_tests": board.loc[board["kind"] == "test", [*_BY, *TEST_COLUMNS]]}
    items = []
    for stem, frame in files.items():
        frame = frame.reset_index(drop=True)
        frame.to_csv(out / f"{stem}.csv", index=False)
        frame.to_parquet(out / f"{stem}.parquet", index=False)
        items.append(f'<li>{esc(stem)}: <a href="{stem}.csv">{stem}.csv</a>, <a href="{stem}.parquet">'
                     f"{stem}.parquet</a> ({len(frame)} rows)</li>")
    compare_with_schulz_kuempel(cells, config).to_csv(out / "comparison_schulz_kuempel.csv", index=False)
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True, default=str), encoding="utf-8")
    items.append('<li>the comparison with Schulz-Kümpel et al.: <a href="comparison_schulz_kuempel.csv">'
                 'comparison_schulz_kuempel.csv</a></li><li>the run\'s configuration: <a href="config.json">'
                 "config.json</a></li>")
    return "<ul>" + "".join(items) + "</ul>"


def _intro(cells: pd.DataFrame, config: dict) -> str:
    count = {c: cells[c].nunique() for c in ("procedure", "mechanism", "learner", "loss", "n")}
    replicates = config.get("replicates") or int(cells["replicates"].max())
    return (f'<p class="meta">{count["procedure"]} procedures × {count["mechanism"]} mechanisms × {count["learner"]} '
            f'learners (or pairs) × {count["loss"]} losses × {count["n"]} sizes; {len(cells):,} cells; {replicates} '
            f'replicates per cell; scale <code>{esc(config.get("scale", "?"))}</code>.</p>'
            "<p>A <b>cell</b> is one procedure on one data cell (mechanism, learner, loss, n), scored against one "
            "estimand. A cell is <b>within nominal</b> when its coverage (tests: its rejection rate under a true "
            "null) lies within nominal ± 2 MCSE₀, where MCSE₀ = sqrt(nominal (1 − nominal) / R) is the Monte Carlo "
            "error of the nominal at the cell's replicate count R: an exactly calibrated procedure lands there in "
            "about 95% of its cells. The filters redraw the leaderboard and the heat-map tables; a click on a "
            "column header sorts.</p>")


def _cell_list(cells: pd.DataFrame) -> str:
    parts = []
    for mechanism, group in cells.groupby("mechanism", sort=True):
        keys = group[["learner", "loss", "n", "slug"]].drop_duplicates().sort_values(["learner", "loss", "n"])
        links = "".join(f'<li><a href="{CELL_DIR}/{esc(s)}.html">{esc(lrn)} / {esc(loss)} / n = {int(n)}</a></li>'
                        for lrn, loss, n, s in keys.itertuples(index=False))
        parts.append(f"<h3>{esc(mechanism)}</h3><ul class=\"cells\">{links}</ul>")
    return "".join(parts)
