"""The nedelko_histogram study as the engine runs it (Nedelko's Figure 4, exact).

Nothing is simulated: the design has one condition with one "replicate", the exact computation
over the whole grid of distributions (:mod:`.exact`), which takes seconds.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.report.tables import frame_to_markdown
from simstudy.rng import condition_key
from simstudy.runner import Chunk
from simstudy.studies.base import Phase, Study, StudyTables
from simstudy.studies.nedelko_histogram.config import NedelkoHistogramConfig

__all__ = ["NedelkoHistogramStudy", "HistogramCondition", "HistogramWorker"]


@dataclass(frozen=True)
class HistogramCondition:
    """The whole grid of one (cells, N, K, grid step) design."""

    cells: int
    sample_size: int
    K: int
    grid_steps: int
    key: str

    def label(self) -> str:
        return f"{self.cells} cells, N={self.sample_size}, K={self.K}, grid step 1/{self.grid_steps}"

    def selection(self) -> str:
        return ""


@dataclass
class HistogramWorker:
    """Enumerates the samples and computes the exact expectations for every distribution."""

    condition: HistogramCondition

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        from simstudy.studies.nedelko_histogram.exact import exact_expectations, sample_tables, simplex_grid

        c = self.condition
        tables = sample_tables(c.cells, c.sample_size, c.K)
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
        condition = HistogramCondition(c.cells, c.sample_size, c.K, c.grid_steps, condition_key(params))
        return [Phase("replicates", [condition], [1], HistogramWorker(condition), description="nedelko_histogram")]

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        summary = records[self.main_phase].drop(columns=["error"], errors="ignore")
        wide = summary.pivot(index="distribution", columns="estimator", values="mean_delta0")
        counts = {f"{a} < {b}": int((wide[a] < wide[b]).sum()) for a, b in
                  (("loo", "kfold"), ("kfold", "loo"), ("loo", "empirical"), ("kfold", "empirical"))}
        means = summary.groupby("estimator")[["mean_estimate", "bias", "mean_delta0"]].mean().reset_index()
        return StudyTables(summary, None, {}, labels={"winner_counts": counts, "grid_means": means})

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.nedelko_histogram.figures import histogram_scatter_figure

        return {"fig4_histogram": histogram_scatter_figure(tables.summary, self.config.sample_size, self.config.K,
                                                           self.config.cells)}

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        c = self.config
        n_dist = tables.summary["distribution"].nunique()
        text = [f"# Nedelko Figure 4: histogram classifier, exact ({c.cells} cells, N = {c.sample_size}, K = {c.K})\n",
                f"{n_dist} distributions: every p over the {2 * c.cells} (cell, class) types with coordinates in "
                f"multiples of 1/{c.grid_steps}. All values are exact expectations over samples (and, for K-fold, "
                "over fold assignments).\n",
                "## Averages over the grid\n", frame_to_markdown(tables.labels["grid_means"]),
                "\n## Number of distributions where one estimate has the smaller mean Delta0\n",
                frame_to_markdown(pd.DataFrame([tables.labels["winner_counts"]]))]
        path = Path(directory) / "summary.md"
        path.write_text("\n".join(text))
        return [path]

    def headline(self, tables: StudyTables) -> str:
        counts = tables.labels["winner_counts"]
        n_dist = tables.summary["distribution"].nunique()
        return (f"nedelko_histogram: {n_dist} distributions; distributions where one estimate has the smaller mean "
                "Delta0: " + ", ".join(f"{k}: {v}" for k, v in counts.items()))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        c = self.config
        out: dict[str, Any] = {"grid_step": f"1/{c.grid_steps}", "cells": c.cells, "sample_size": c.sample_size,
                               "K": c.K}
        rec = records.get(self.main_phase)
        if rec is not None and "total_probability" in rec:
            out["distributions"] = int(rec["distribution"].nunique())
            out["max_total_probability_error"] = float(np.abs(rec["total_probability"] - 1).max())
        return out
