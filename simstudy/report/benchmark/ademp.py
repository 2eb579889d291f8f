"""The study stated in the ADEMP form (Morris, White & Crowther 2019), generated from the run's
config and cell table: Aims, Data-generating mechanisms (with the kind of their truth), Estimands,
Methods (the procedures with their references from the registry), Performance measures (with their
Monte Carlo errors), and the number of replicates justified by the Monte Carlo error it gives.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from simstudy.report.benchmark.markup import esc, html_table
from simstudy.report.benchmark.scores import BAND_MCSE

__all__ = ["ademp_html", "replicate_justification", "MCSE_TARGETS", "procedure_references"]

#: Monte Carlo errors of a coverage at 95% a replicate count is held against (smallest met is named).
MCSE_TARGETS = (0.0025, 0.005, 0.01, 0.02)


def replicate_justification(replicates: int, nominal: float = 0.95, target: Any = None) -> str:
    """The sentence that justifies R replicates by the Monte Carlo error of a coverage at the nominal.

    ``target``: the run's own ``mcse_target`` (a number, or a mapping with a number under
    ``"mcse"`` or ``"target"``); without one, the smallest of :data:`MCSE_TARGETS` that R meets
    (and the run's own ``"justification"`` text, when it has one, is quoted).
    """
    if not replicates or replicates <= 0:
        return "No replicate gave an outcome: no Monte Carlo error can be stated."
    mcse = math.sqrt(nominal * (1 - nominal) / replicates)
    text = (f"At nominal {nominal:g} and R = {replicates:,} replicates per cell, the Monte Carlo standard error "
            f"of a coverage is sqrt({nominal:g} × {1 - nominal:.2g} / {replicates:,}) = {mcse:.4f}; a cell is "
            f"judged within the nominal when its coverage lies in {nominal:g} ± {BAND_MCSE * mcse:.4f}.")
    wanted = target.get("mcse", target.get("target")) if isinstance(target, dict) else target
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and wanted > 0:
        needed = math.ceil(nominal * (1 - nominal) / wanted ** 2)
        verdict = "meets" if mcse <= wanted else "misses"
        return text + (f" The run's target MCSE ≤ {wanted:g} needs R ≥ {needed:,}: R = {replicates:,} {verdict} it.")
    met = [t for t in MCSE_TARGETS if mcse <= t]
    stated = target.get("justification") if isinstance(target, dict) else target
    extra = f" The run states: {esc(stated)}" if isinstance(stated, str) and stated else ""
    if not met:
        return text + f" It meets none of the targets {', '.join(map(str, MCSE_TARGETS))}: a coarse run.{extra}"
    needed = math.ceil(nominal * (1 - nominal) / met[0] ** 2)
    return text + f" It meets the target MCSE ≤ {met[0]:g} (which needs R ≥ {needed:,}).{extra}"


def procedure_references(names) -> pd.DataFrame:
    """procedure, kind, native estimand, description and reference of each name (registry or user's)."""
    from simstudy.inference.procedures import PROCEDURES

    rows = []
    for name in names:
        if name in PROCEDURES:
            procedure = PROCEDURES[name].load()
            rows.append({"procedure": name, "kind": procedure.kind, "native estimand": procedure.estimand,
                         "design": repr(procedure.design), "description": procedure.description,
                         "reference": procedure.reference})
        else:
            rows.append({"procedure": name, "kind": "", "native estimand": "", "design": "",
                         "description": "a user's procedure (not in the registry)", "reference": name})
    return pd.DataFrame(rows)


def _mechanisms(cells: pd.DataFrame) -> pd.DataFrame:
    from simstudy.registry import POPULATIONS

    rows = []
    for mechanism, group in cells.groupby("mechanism", sort=True):
        mcse = group["truth_mcse"].max()
        truth = ("Err_n exact (Monte Carlo error 0)" if not mcse > 0
                 else f"Err_n estimated, Monte Carlo error ≤ {mcse:.2g}")
        rows.append({"mechanism": mechanism, "task": ", ".join(sorted(set(group["task"]))),
                     "description": POPULATIONS[mechanism].description if mechanism in POPULATIONS else "",
                     "truth": truth})
    return pd.DataFrame(rows)


def _grid_line(config: dict, cells: pd.DataFrame, key: str, column: str) -> str:
    values = config.get(key) or sorted(set(cells[column]), key=lambda v: (isinstance(v, str), v))
    return ", ".join(esc(v) for v in values)


def ademp_html(config: dict, cells: pd.DataFrame) -> str:
    """The ADEMP section (HTML)."""
    from simstudy.inference.procedures import ESTIMANDS

    replicates = int(config.get("replicates") or cells["replicates"].max() or 0)
    alpha = float(config.get("alpha", 1 - cells.loc[cells["kind"] == "interval", "nominal"].max()
                             if (cells["kind"] == "interval").any() else 0.05))
    estimands = sorted(set(cells["estimand"]), key=lambda e: (e != "R_n", e))
    mech = _mechanisms(cells)
    methods = procedure_references(config.get("procedures") or sorted(set(cells["procedure"])))
    text = {c: "" for c in ("mechanism", "task", "description", "truth")}
    return "\n".join([
        "<h3>Aims</h3><p>Measure, for every interval and test procedure for the error of a learned model, how "
        "often its interval covers the truth, how it misses (left or right), how wide it is, and for tests their "
        "size and power, across data-generating mechanisms, learners, losses and sample sizes; rank the "
        f"procedures. Scale <code>{esc(config.get('scale', '?'))}</code>, seed {esc(config.get('seed', '?'))}, "
        f"alpha = {alpha:g}.</p>",
        f"<h3>Data-generating mechanisms</h3><p>{len(mech)} mechanisms; learners: "
        f"{_grid_line(config, cells, 'learners', 'learner')}; losses: {_grid_line(config, cells, 'losses', 'loss')}; "
        f"sizes n: {_grid_line(config, cells, 'sizes', 'n')}. A data set (its rows × features in the description) "
        "is a finite population: training sets of n rows are drawn from its rows with replacement, so n may exceed "
        "its row count (the data-generating distribution is the data set's empirical distribution), and a fitted "
        "model's true error is its mean loss over all the rows.</p>",
        html_table(mech, text, classes="text"),
        "<h3>Estimands</h3><ul>" + "".join(f"<li><b>{esc(e)}</b>: {esc(ESTIMANDS.get(e, 'see the study'))}</li>"
                                           for e in estimands)
        + "</ul><p>Every interval procedure is scored against each estimand, whatever its native one.</p>",
        "<h3>Methods</h3>" + html_table(methods, {c: "" for c in methods.columns}, classes="text"),
        "<h3>Performance measures</h3><ul><li>coverage: share of intervals containing the truth, with its 95% "
        "Wilson interval and Monte Carlo error sqrt(c(1 − c)/R);</li><li>miss left / miss right: shares of "
        "intervals entirely below / above the truth;</li><li>width (median, mean) and relative width (median "
        "width over the cell's median interval procedure);</li><li>tests: rejection rate with its Wilson "
        "interval: size where the null is true, power where it is false;</li><li>cost: model fits and CPU "
        "seconds per replicate;</li><li>within nominal: |rate − nominal| ≤ 2 MCSE₀ with MCSE₀ = "
        "sqrt(nominal(1 − nominal)/R), the Monte Carlo error of an exactly calibrated procedure.</li></ul>",
        f"<h3>Number of replicates</h3><p>{replicate_justification(replicates, 1 - alpha, config.get('mcse_target'))}"
        "</p>",
    ])
