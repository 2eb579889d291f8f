"""The nedelko_histogram study as the engine runs it (Nedelko's Figure 4, exact).

Nothing is simulated: the design has one condition with one "replicate", the exact computation
over the whole grid of distributions (:mod:`.exact`), which takes seconds.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.report.tables import frame_to_markdown
from simstudy.rng import condition_key
from simstudy.studies.base import Chunk, Phase, Study, StudyTables
from simstudy.studies.nedelko_histogram.config import NedelkoHistogramConfig
from simstudy.files import write_text_atomic

__all__ = ["NedelkoHistogramStudy", "HistogramCondition", "HistogramWorker", "winner_counts", "by_bayes_error",
           "TIE_DESCRIPTIONS", "TOL"]

#: Mean errors closer than this count as equal (exact sums differ by rounding only).
TOL = 1e-12

#: What a tied (or empty) cell predicts under each ``study.tie``.
TIE_DESCRIPTIONS = {"overall": "a tied or empty cell predicts the majority class of the whole training sample "
                               "(class 0 if that ties too)",
                    "zero": "a tied or empty cell predicts class 0",
                    "coin": "a tied or empty cell predicts by a fair coin (computed in expectation)"}


def _comparisons(wide: pd.DataFrame) -> dict[str, pd.Series]:
    """Per distribution: which of the three estimates has the smaller mean Delta0 (by more than TOL)."""
    loo, kfold, emp = wide["loo"], wide["kfold"], wide["empirical"]
    return {"loo < kfold": loo < kfold - TOL, "kfold < loo": kfold < loo - TOL,
            "empirical smallest": (emp < loo - TOL) & (emp < kfold - TOL),
            "loo < empirical": loo < emp - TOL, "kfold < empirical": kfold < emp - TOL,
            "all equal": (loo - kfold).abs().le(TOL) & (loo - emp).abs().le(TOL)}


def winner_counts(wide: pd.DataFrame) -> dict[str, int]:
    """Number of distributions where each comparison holds (``wide``: mean Delta0, one column per estimator)."""
    return {name: int(flag.sum()) for name, flag in _comparisons(wide).items()}


def by_bayes_error(wide: pd.DataFrame, bayes: pd.Series) -> pd.DataFrame:
    """The counts of :func:`winner_counts` and the mean of each estimate's mean Delta0, per Bayes error."""
    key = bayes.round(9).rename("bayes_error")
    out = pd.DataFrame({"distributions": wide.groupby(key).size()})
    for name, flag in _comparisons(wide).items():
        if name in ("loo < kfold", "kfold < loo", "empirical smallest", "all equal"):
            out[name] = flag.groupby(key).sum().astype(int)
    for est in ("loo", "kfold", "empirical"):
        out[f"mean {est}"] = wide[est].groupby(key).mean()
    out["loo / kfold"] = out["mean loo"] / out["mean kfold"]
    return out.reset_index()


@dataclass(frozen=True)
class HistogramCondition:
    """The whole grid of one (cells, N, K, grid step) design."""

    cells: int
    sample_size: int
    K: int
    grid_steps: int
    key: str
    tie: str = "overall"

    def label(self) -> str:
        return (f"{self.cells} cells, N={self.sample_size}, K={self.K}, grid step 1/{self.grid_steps}, "
                f"tie rule {self.tie}")

    def selection(self) -> str:
        return ""


@dataclass
class HistogramWorker:
    """Enumerates the samples and computes the exact expectations for every distribution."""

    condition: HistogramCondition

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        from simstudy.studies.nedelko_histogram.exact import exact_expectations, sample_tables, simplex_grid

        c = self.condition
        tables = sample_tables(c.cells, c.sample_size, c.K, c.tie)
        grid = simplex_grid(2 * c.cells, c.grid_steps)
        records = exact_expectations(tables, grid)
        records["error"] = ""
        return records


class NedelkoHistogramStudy(Study):
    """The histogram classifier's LOO, K-fold and empirical risk estimates, exactly."""

    name = "nedelko_histogram"
    description = "Nedelko: the histogram classifier, computed exactly (Figure 4)"
    Config = NedelkoHistogramConfig
    uses = ()

    def phases(self, on_error: str = "record") -> list[Phase]:
        c = self.config
        params = {"study": self.name, "cells": c.cells, "N": c.sample_size, "K": c.K, "grid_steps": c.grid_steps}
        condition = HistogramCondition(c.cells, c.sample_size, c.K, c.grid_steps, condition_key(params), c.tie)
        return [Phase("replicates", [condition], [1], HistogramWorker(condition), description="nedelko_histogram")]

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        summary = records[self.main_phase].drop(columns=["error"], errors="ignore")
        wide = summary.pivot(index="distribution", columns="estimator", values="mean_delta0")
        bayes = summary.groupby("distribution")["bayes_error"].first().loc[wide.index]
        means = summary.groupby("estimator")[["mean_estimate", "bias", "mean_delta0"]].mean().reset_index()
        return StudyTables(summary, None, {"winner_counts": pd.DataFrame([winner_counts(wide)]),
                                           "by_bayes_error": by_bayes_error(wide, bayes)},
                           labels={"grid_means": means})

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.nedelko_histogram.figures import histogram_scatter_figure

        c = self.config
        return {"fig4_histogram": partial(histogram_scatter_figure, tables.summary, c.sample_size, c.K, c.cells, c.tie)}

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        c = self.config
        n_dist = tables.summary["distribution"].nunique()
        text = [f"# Nedelko Figure 4: histogram classifier, exact ({c.cells} cells, N = {c.sample_size}, K = {c.K})\n",
                f"{n_dist} distributions: every p over the {2 * c.cells} (cell, class) types with coordinates in "
                f"multiples of 1/{c.grid_steps}. Tie rule `{c.tie}`: {TIE_DESCRIPTIONS[c.tie]}. All values are exact "
                "expectations over samples (and, for K-fold, over fold assignments); Delta0 is averaged over samples "
                "(E[Delta0(estimate, R)], R the risk of the rule trained on the sample).\n",
                "## Averages over the grid\n", frame_to_markdown(tables.labels["grid_means"]),
                "\n## Number of distributions where one estimate has the smaller mean Delta0\n",
                f"Smaller by more than {TOL:g}; `empirical smallest`: smaller than both LOO and K-fold; `all equal`: "
                "the three agree (within the same margin), as in degenerate distributions where every estimate is "
                "exact.\n", frame_to_markdown(tables.extra["winner_counts"]),
                "\n## By Bayes error of the distribution\n",
                "Counts as above and the mean over the distributions of each estimate's mean Delta0; `loo / kfold` "
                "is the ratio of those means.\n", frame_to_markdown(tables.extra["by_bayes_error"])]
        path = Path(directory) / "summary.md"
        write_text_atomic(path, "\n".join(text))
        return [path]

    def report_tables(self, tables: StudyTables) -> dict[str, pd.DataFrame]:
        """Exact values (no Monte Carlo error): grid averages, winner counts, and by Bayes error."""
        return {"Averages over the grid of distributions (exact)": tables.labels["grid_means"],
                "Number of distributions where one estimate has the smaller mean Delta0 (exact)":
                    tables.extra["winner_counts"],
                "By Bayes error of the distribution (exact)": tables.extra["by_bayes_error"]}

    def headline(self, tables: StudyTables) -> str:
        counts = tables.extra["winner_counts"].iloc[0]
        n_dist = tables.summary["distribution"].nunique()
        return (f"nedelko_histogram ({self.config.tie} ties): {n_dist} distributions; distributions where one "
                "estimate has the smaller mean Delta0: " + ", ".join(f"{k}: {int(v)}" for k, v in counts.items()))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        c = self.config
        out: dict[str, Any] = {"grid_step": f"1/{c.grid_steps}", "cells": c.cells, "sample_size": c.sample_size,
                               "K": c.K, "learner": {"name": "histogram", "rule": "majority class of each cell",
                                                     "tie": c.tie, "tie_description": TIE_DESCRIPTIONS[c.tie]}}
        rec = records.get(self.main_phase)
        if rec is not None and "total_probability" in rec:
            out["distributions"] = int(rec["distribution"].nunique())
            out["max_total_probability_error"] = float(np.abs(rec["total_probability"] - 1).max())
        return out
