"""The main page of the benchmark site: filters, leaderboard, heat maps, comparison with
Schulz-Kuempel et al., the data cells, ADEMP and downloads. The tables are rendered here for the
default filters (so the page reads without JavaScript); the script redraws them on every filter.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from simstudy.report.benchmark.comparison import CHECK_RULES
from simstudy.report.benchmark.heatmap import figure_inches
from simstudy.report.benchmark.markup import esc, html_table, number, page_frame
from simstudy.report.benchmark.schulz_kuempel import METHOD_MAP, SOURCES

__all__ = ["INTERVAL_VIEW", "TEST_VIEW", "DATA_COLUMNS", "main_page", "data_script", "estimand_order"]

#: (column, header, format) of the leaderboards as shown (formats: digits, "%", "+", "g", "d").
INTERVAL_VIEW = (("procedure", "procedure", ""), ("cells", "cells", "d"),
                 ("within_share", "within nominal ± 2 MCSE₀", "%"), ("worst_gap", "worst coverage − nominal", "+"),
                 ("worst_cell", "worst cell", ""), ("mean_undercoverage", "mean under-coverage", "3"),
                 ("median_relative_width", "median relative width", "2"), ("median_fits", "fits", "g"),
                 ("median_cpu_seconds", "CPU s", "g"), ("failed_share", "failed", "%"))
TEST_VIEW = (("procedure", "procedure", ""), ("size_cells", "null cells", "d"),
             ("size_within_share", "size within alpha ± 2 MCSE₀", "%"), ("worst_size", "worst size", "3"),
             ("worst_size_cell", "worst cell", ""), ("power_cells", "alternative cells", "d"),
             ("median_power", "median power", "3"), ("median_fits", "fits", "g"), ("median_cpu_seconds", "CPU s", "g"),
             ("failed_share", "failed", "%"))
#: The cell table's columns the script needs (plus the slug of the data cell's page).
DATA_COLUMNS = ("procedure", "kind", "mechanism", "learner", "loss", "n", "estimand", "nominal", "replicates",
                "failed", "coverage", "rejection_rate", "null_true", "relative_width", "fits", "cpu_seconds", "slug")
_PY_FORMAT = {"d": "d", "%": ".1%", "+": "+.3f", "g": ".3g", "2": ".2f", "3": ".3f", "": ""}


def estimand_order(values) -> list[str]:
    """R_n first, then Err_n, then the rest alphabetically."""
    rank = {"R_n": 0, "Err_n": 1, "Err_XY": 2}
    return sorted(set(values), key=lambda e: (rank.get(e, 3), e))


def data_script(cells: pd.DataFrame, order: list[str]) -> str:
    """``data.js``: ``window.BENCH`` = the columns, one array per row (NaN as null), the views, the order."""
    frame = cells[list(DATA_COLUMNS)]
    rows = [[None if isinstance(v, float) and np.isnan(v) else (v.item() if hasattr(v, "item") else v) for v in row]
            for row in frame.itertuples(index=False)]
    payload = {"columns": list(DATA_COLUMNS), "rows": rows, "order": order,
               "intervalColumns": [list(c) for c in INTERVAL_VIEW], "testColumns": [list(c) for c in TEST_VIEW]}
    return "window.BENCH = " + json.dumps(payload, separators=(",", ":"), allow_nan=False) + ";\n"


def _view_table(board: pd.DataFrame, view, table_id: str) -> str:
    formats = {c: _PY_FORMAT[f] for c, _, f in view}
    return ('<div class="scroll">' + html_table(board, formats, {c: h for c, h, _ in view}, table_id=table_id,
                                                 classes="sortable") + "</div>")


def _filters(cells: pd.DataFrame, default_estimand: str) -> str:
    parts = []
    for name, values in (("learner", sorted(set(cells["learner"]))), ("loss", sorted(set(cells["loss"]))),
                         ("n", sorted(set(cells["n"]))), ("estimand", estimand_order(cells["estimand"])),
                         ("kind", sorted(set(cells["kind"])))):
        options = ['<option value="">all</option>'] + [
            f'<option value="{esc(v)}"{" selected" if str(v) == default_estimand and name == "estimand" else ""}>'
            f"{esc(v)}</option>" for v in values]
        parts.append(f'<label>{name} <select name="{name}">{"".join(options)}</select></label>')
    return ('<form class="filters" onsubmit="return false">' + "".join(parts)
            + ' <span class="meta"><span id="selected-count"></span> rows selected</span></form>')


def _heat_section(grids: dict, figures: dict) -> str:
    parts = ["<p>Each square: the interval cells of one procedure and mechanism (learner, loss and n as the "
             "filters leave them; the estimand of the map). Colour: mean coverage − nominal on a diverging scale "
             "centred at 0 (red: under-coverage, blue: over-coverage); text: mean coverage; a click opens the "
             "worst data cell behind the square. The figures show every cell, unfiltered.</p>"]
    for estimand, grid in grids.items():
        procedures = list(dict.fromkeys(grid["procedure"]))
        table = grid.pivot(index="procedure", columns="mechanism", values="coverage").reindex(procedures)
        links = grid.pivot(index="procedure", columns="mechanism", values="worst_slug").reindex(procedures)
        head = "".join(f"<th>{esc(m)}</th>" for m in table.columns)
        body = "".join("<tr><td>" + esc(p) + "</td>" + "".join(
            f'<td><a href="cells/{esc(links.loc[p, m])}.html">{number(table.loc[p, m])}</a></td>'
            if isinstance(links.loc[p, m], str) else "<td></td>" for m in table.columns) + "</tr>" for p in procedures)
        parts.append(f'<h3 id="heat-{esc(estimand)}">Coverage of {esc(estimand)}</h3>'
                     f'<figure class="heat"><img src="{esc(figures[estimand])}" style="width:{_pixels(grid)}px" '
                     f'alt="heat map of coverage minus nominal, '
                     f'procedure by mechanism, {esc(estimand)}"><figcaption>All cells of {esc(estimand)}: mean over '
                     "learners, losses and n.</figcaption></figure>"
                     f'<p class="meta">The same, filtered:</p><div class="scroll"><table class="heat" '
                     f'data-estimand="{esc(estimand)}"><thead><tr><th>procedure</th>{head}</tr></thead>'
                     f"<tbody>{body}</tbody></table></div>")
    return "\n".join(parts)


def _pixels(grid: pd.DataFrame) -> int:
    """The heat map's width on the page: its size in inches at 120 pixels per inch (text as in the tables)."""
    return int(120 * figure_inches(grid["procedure"].nunique(), grid["mechanism"].nunique())[0])


def _comparison_section(comparison: pd.DataFrame, setting: str) -> str:
    shown = comparison.copy()
    shown["agrees"] = [f'<span class="{esc(a)}">{esc(a)}</span>' for a in shown["agrees"]]
    formats = {c: "" for c in shown.columns}
    table = html_table(shown, formats, classes="text", raw=("agrees",))
    mapping = pd.DataFrame(METHOD_MAP, columns=["their method", "our procedure", "note"])
    return ("<p>Schulz-Kümpel, Fischer, Hornung, Boulesteix, Nagler &amp; Bischl (2024), <i>Constructing confidence "
            "intervals for 'the' generalization error – a comprehensive benchmark study</i>, arXiv 2409.18836. "
            "Only statements we could check in their summary, their analysis code and their R package's "
            "documentation are listed (the column <i>source</i>); each is tested on our cell table.</p>"
            f'<p class="note">{esc(setting)}</p>' + table
            + "<p>How a point is decided:</p><ul>" + "".join(f"<li><i>{esc(k)}</i>: {esc(v)}</li>"
                                                          for k, v in CHECK_RULES.items()) + "</ul>"
            + "<p>Sources:</p><ul>" + "".join(f"<li><i>{esc(k)}</i>: {esc(v)}</li>" for k, v in SOURCES.items())
            + "</ul>"
            + "<h3>Their methods and ours</h3>" + html_table(mapping, {c: "" for c in mapping.columns}, classes="text"))


def _caption(parts: dict) -> str:
    """What the leaderboard shows under the default filters (the script rewrites it on every filter)."""
    return (f"Cells shown: learner all; loss all; n all; estimand {parts['default_estimand']}; kind all. Best first: "
            "by the share of cells within nominal ± 2 MCSE₀ (tests: size within alpha ± 2 MCSE₀).")


def main_page(parts: dict) -> str:
    """The index page from its parts: ``title``, ``intro``, ``filters_cells``, ``default_estimand``,
    ``board_interval``, ``board_test``, ``grids``, ``figures``, ``comparison``, ``setting``, ``cell_list``,
    ``ademp``, ``downloads``."""
    cells = parts["filters_cells"]
    sections = [
        ("leaderboard", "Leaderboard", f'<p class="meta" id="board-caption">{esc(_caption(parts))}</p>'
         + "<h3>Intervals</h3>" + _view_table(parts["board_interval"], INTERVAL_VIEW, "board-interval")
         + "<h3>Tests (two learners)</h3>" + _view_table(parts["board_test"], TEST_VIEW, "board-test")),
        ("heatmap", "Heat maps: procedure × mechanism", _heat_section(parts["grids"], parts["figures"])),
        ("comparison", "Comparison with Schulz-Kümpel et al.", _comparison_section(parts["comparison"],
                                                                                  parts["setting"])),
        ("cells", "Data cells (drill-down)", parts["cell_list"]),
        ("ademp", "The study (ADEMP)", parts["ademp"]),
        ("downloads", "Downloads", parts["downloads"]),
    ]
    nav = "<nav>" + "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t, _ in sections) + "</nav>"
    body = (f"<h1>{esc(parts['title'])}</h1>{parts['intro']}{nav}{_filters(cells, parts['default_estimand'])}"
            + "".join(f'<h2 id="{a}">{esc(t)}</h2>\n{html}' for a, t, html in sections))
    return page_frame(parts["title"], body, depth=0, script=True)
