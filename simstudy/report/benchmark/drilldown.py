"""The drill-down: one page per data cell (mechanism, learner, loss, n) with its figure (SVG) and numbers.

The figure of an interval cell has three panels sharing the procedures' axis: coverage with its
95% Wilson interval against the nominal (grey band: nominal +- 2 MCSE_0 at the cell's replicate
count), the shares of intervals missing the truth on the left (upper end below it) and on the
right (lower end above it), and the median and mean widths. A test cell (a pair of learners)
shows each procedure's rejection rate with its Wilson interval against alpha.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simstudy.report.benchmark.markup import esc, html_table, page_frame
from simstudy.report.benchmark.scores import DATA_CELL, cell_slug, nominal_mcse, scored_cells
from simstudy.report.benchmark.svg import Canvas

__all__ = ["data_cells", "cell_figure", "cell_page", "CELL_DIR"]

#: The folder of the drill-down pages and figures inside the site.
CELL_DIR = "cells"
#: Columns of one kind only (shown when a row of the cell measures them).
_KIND_COLUMNS = ("coverage_lo", "coverage_hi", "rejection_lo", "rejection_hi", "miss_left", "miss_right",
                 "width_median", "width_mean", "relative_width")
#: (colour, marker, filled) of each estimand: filled blue circles for R_n, open squares and diamonds for the others.
_STYLE = {"R_n": ("#1f77b4", "o", True), "Err_n": ("#ff7f0e", "s", False), "Err_XY": ("#2ca02c", "D", False)}


def _style(estimand: str) -> tuple[str, str, bool]:
    return _STYLE.get(estimand, ("#666666", "o", True))


def data_cells(cells: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(slug, rows) of every data cell, in the table's order."""
    return [(cell_slug(*key), group) for key, group in cells.groupby(list(DATA_CELL), sort=True)]


def _offsets(estimands) -> dict[str, float]:
    step = 0.3 if len(estimands) > 1 else 0.0
    return {e: (i - (len(estimands) - 1) / 2) * step for i, e in enumerate(estimands)}


def cell_figure(rows: pd.DataFrame, path: Path) -> Path:
    """The figure of one data cell (its rows of the cell table), saved to ``path`` as SVG."""
    rows = scored_cells(rows)
    test = bool((rows["kind"] == "test").all())
    procedures = sorted(set(rows["procedure"]))
    estimands = sorted(set(rows["estimand"]), key=lambda e: (e != "R_n", e))
    position = {p: i for i, p in enumerate(procedures)}
    offsets = _offsets(estimands)
    nominal = float(rows["nominal"].iloc[0])
    replicates = rows["replicates"].max()
    band = 2 * float(nominal_mcse(nominal, replicates)) if replicates > 0 else 0.0
    canvas = Canvas(procedures, (330,) if test else (330, 260, 210))
    low, high = ("rejection_lo", "rejection_hi") if test else ("coverage_lo", "coverage_hi")
    ends = pd.concat([rows[low], rows[high], rows["rate"]]).dropna()
    lo = min([nominal - band] + list(ends))
    hi = max([nominal + band] + list(ends))
    pad = max(0.02, 0.05 * (hi - lo))
    rate_panel = canvas.panel(0, max(0.0, lo - pad), min(1.0, hi + pad) if hi <= 1 else hi + pad)
    if not test or rows["null_true"].any():     # under a false null the rate is a power: no band to be in
        rate_panel.band(max(0.0, nominal - band), min(1.0, nominal + band))
    nulls = set(rows["null_true"]) if test else set()
    first = {frozenset({True}): "size (null true)", frozenset({False}): "power (null false)"}.get(
        frozenset(nulls), "size where the null is true, else power") if test else "coverage"
    rate_panel.frame(first, "rejection rate (alpha: line)" if test else "coverage, 95% Wilson interval")
    rate_panel.vline(nominal)
    if not test:
        miss_panel, width_panel = _miss_and_width_panels(canvas, rows, estimands[0], 1 - nominal)
    for estimand in estimands:
        colour, shape, filled = _style(estimand)
        for _, row in rows[rows["estimand"] == estimand].iterrows():
            y = position[row["procedure"]] + offsets[estimand]
            rate_panel.error_bar(y, float(row[low]), float(row[high]), colour)
            rate_panel.marker(y, float(row["rate"]), shape, colour, filled, f"rate {row['procedure']} {estimand}")
            if not test:
                miss_panel.bar(y, 0.0, -float(row["miss_left"]), colour, 0.8)
                miss_panel.bar(y, 0.0, float(row["miss_right"]), colour, 0.45)
    canvas.row_labels()
    canvas.legend(canvas.lefts[0], [(e, _style(e)[1], _style(e)[0], _style(e)[2]) for e in estimands])
    if not test:
        canvas.legend(canvas.lefts[2], [("median", "o", "#333333", True), ("mean", "x", "#808080", True)])
    first_row = rows.iloc[0]
    title = f"{first_row['mechanism']} / {first_row['learner']} / {first_row['loss']} / n = {int(first_row['n'])}"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(canvas.svg(title), encoding="utf-8")
    return path


def _miss_and_width_panels(canvas: Canvas, rows: pd.DataFrame, estimand: str, alpha: float):
    """The miss panel (its frame and reference lines) and the width panel with its markers."""
    reach = max([alpha / 2] + list(rows[["miss_left", "miss_right"]].stack().dropna())) * 1.15
    miss = canvas.panel(1, -reach, reach)
    miss.frame("misses", "miss left (upper < truth) | miss right (lower > truth)", lambda v: f"{abs(v):g}")
    for x in (-alpha / 2, alpha / 2):
        miss.vline(x, dashed=True)
    miss.vline(0.0)
    # an interval's width does not depend on the estimand it is scored against: one per procedure, taken
    # from the first estimand that has it (a bootstrap interval is scored against Err_n only)
    part = rows.dropna(subset=["width_median"]).sort_values("estimand", key=lambda e: e != estimand, kind="stable")
    part = part.drop_duplicates("procedure")
    widths = pd.concat([part["width_median"], part["width_mean"]]).dropna()
    top = float(widths.max()) if len(widths) else 1.0
    width = canvas.panel(2, 0.0, top * 1.08 if top > 0 else 1.0)
    width.frame("width", "interval width")
    position = {p: i for i, p in enumerate(canvas.labels)}
    for _, row in part.iterrows():
        width.marker(position[row["procedure"]], float(row["width_median"]), "o", "#333333",
                     label=f"width_median {row['procedure']}")
        width.marker(position[row["procedure"]], float(row["width_mean"]), "x", "#808080",
                     label=f"width_mean {row['procedure']}")
    return miss, width


def cell_page(slug: str, rows: pd.DataFrame, figure_name: str) -> str:
    """The HTML page of one data cell: its figure, truth and every number of its rows."""
    first = rows.iloc[0]
    title = f"{first['mechanism']} / {first['learner']} / {first['loss']} / n = {int(first['n'])}"
    frame = scored_cells(rows).sort_values(["estimand", "procedure"], key=lambda s: s.map(
        {"R_n": "0", "Err_n": "1"}).fillna(s) if s.name == "estimand" else s, kind="stable")
    frame["within"] = frame["within"].map({1.0: "yes", 0.0: "no"}).fillna("")
    test = (frame["kind"] == "test").all()
    frame["measures"] = np.where(frame["kind"] == "interval", "coverage",
                                 np.where(frame["null_true"], "size", "power"))
    unmeasured = [c for c in _KIND_COLUMNS if frame[c].isna().all()]
    empty = "" if frame["rate"].notna().any() else (
        '<p class="note">No replicate of this data cell gave an outcome: every one failed (see the failed '
        "column). The failures are recorded in the run.</p>")
    formats = {"procedure": "", "kind": "", "estimand": "", "measures": "", "rate": ".3f", "coverage_lo": ".3f",
               "coverage_hi": ".3f",
               "rejection_lo": ".3f", "rejection_hi": ".3f", "nominal": ".3f", "band": ".3f", "within": "",
               "miss_left": ".3f", "miss_right": ".3f", "width_median": ".4g", "width_mean": ".4g",
               "relative_width": ".2f", "truth_mean": ".4g", "truth_mcse": ".2g", "replicates": "d", "failed": "d",
               "fits": ".0f", "cpu_seconds": ".3g"}
    headers = {"rate": "rate", "coverage_lo": "cov. lo", "coverage_hi": "cov. hi",
               "rejection_lo": "rej. lo", "rejection_hi": "rej. hi", "band": "2 MCSE₀", "within": "within ±2 MCSE₀"}
    body = (f'<p class="crumbs"><a href="../index.html#heatmap">← back to the results</a></p>'
            f"<h1>{esc(title)}</h1><p class=\"meta\">task {esc(first['task'])}; cell seed {int(first['cell_seed'])}; "
            f"nominal {first['nominal']:.3f}; replicates up to {int(rows['replicates'].max())}. Filled markers: "
            "R_n (error of the models at hand); open: Err_n (expected error at size n).</p>"
            f'<figure><img src="{esc(figure_name)}" alt="coverage, misses and widths of every procedure in '
            f'{esc(title)}"><figcaption>{_caption(test)}</figcaption></figure>'
            + empty + '<div class="scroll">'
            + html_table(frame, {c: f for c, f in formats.items() if c not in unmeasured}, headers, classes="numbers")
            + "</div>")
    return page_frame(title, body, depth=1)


def _caption(test: bool) -> str:
    band = ("grey band: nominal ± 2 MCSE₀, the Monte Carlo error of the nominal at this replicate count")
    if test:
        return (f"Rejection rate of each test of the two learners' equal errors; error bars: 95% Wilson intervals; "
                f"{band}, drawn where the null is true (alpha: the size a test should have there).")
    return f"Error bars: 95% Wilson intervals; {band}; dashed lines: alpha/2 missed on each side."
