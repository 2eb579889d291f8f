"""The rho_hat study as the engine runs it: data-driven rho_hat for the K-fold CV t.

Per replicate (:mod:`.worker`): K-fold CV, 2B half-sample CVs and (first replicates) nested CV on
one training set; per n (:mod:`.aggregate`): the true rho and the size and power of every
procedure; ``summary.md`` holds the tables and the goal check (size within alpha +- 1 point at
every n, power at least 10 points above rho_hat = 0.7 where that has power below 80%).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.cv.losses import check_loss, resolve_loss
from simstudy.populations.base import ResidualPopulation
from simstudy.report import frame_to_markdown
from simstudy.studies.base import (Phase, Study, StudyTables, check_learner_task, describe_part, record_labels,
                                   size_conditions,
                                   with_labels)
from simstudy.studies.rho_hat.aggregate import PROCEDURES, aggregate, goal_table
from simstudy.studies.rho_hat.config import RhoHatConfig
from simstudy.studies.rho_hat.worker import RhoHatWorker
from simstudy.populations.checks import draw_sample
from simstudy.files import write_csv_atomic, write_text_atomic

__all__ = ["RhoHatStudy", "RhoHatConfig", "pivot_percent"]


def pivot_percent(tests: pd.DataFrame, column: str) -> pd.DataFrame:
    """One row per procedure, one column per n, values in % (one decimal)."""
    table = (100 * tests.pivot_table(index="procedure", columns="n", values=column, sort=False)).round(1)
    table.columns = [f"n={c}" for c in table.columns]
    return table.reset_index()


class RhoHatStudy(Study):
    """Size and power of K-fold CV tests with data-driven and fixed rho_hat, CV CLT and nested CV."""

    name = "rho_hat"
    description = "data-driven rho_hat for the K-fold CV t-test: size and power against n"
    Config = RhoHatConfig
    uses = ("population", "learner")

    @classmethod
    def parts_needed(cls, config: RhoHatConfig, population: Any) -> tuple[str, ...]:
        """gaussian_folds (residuals drawn directly) needs no learner."""
        return ("population",) if isinstance(population, ResidualPopulation) else cls.uses

    def __init__(self, config: RhoHatConfig, population: Any = None, learner: Any = None, loss: Any = None):
        super().__init__(config, population, learner, loss if loss is not None else resolve_loss(config.loss))

    def check(self) -> None:
        if isinstance(self.population, ResidualPopulation):
            if not callable(getattr(self.population, "draw_examples", None)):
                from simstudy.errors import ConfigError

                raise ConfigError(f"population {self.population.name!r} draws residuals without an example-level "
                                  "model (draw_examples); the subsample estimators need one. Use gaussian_folds.")
            return
        probe = draw_sample(self.population, min(self.config.sizes), np.random.default_rng(0))
        check_loss(self.loss, probe.y, getattr(self.population, "task", "classification"))
        check_learner_task(self.learner, self.population)

    def record_labels(self) -> dict[str, Any]:
        return {"population": self.population.name,
                "learner": self.learner.name if self.learner is not None else "none"}

    def phases(self, on_error: str = "record") -> list[Phase]:
        c = self.config
        conditions = size_conditions("rho_hat", c.sizes, c.K, self.population)
        worker = RhoHatWorker(self.population, self.learner, self.loss, conditions, int(c.seed), int(c.splits),
                              int(c.nested_cv_replicates),
                              int(c.nested_cv_repetitions), on_error)
        return [Phase("replicates", conditions, [int(c.replicates)] * len(conditions), worker,
                      description=f"rho_hat {self.population.name}")]

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        tables = self.summary_and_tests(records)
        tables.extra["goal"] = goal_table(tables.tests, float(self.config.alpha))
        return tables

    def summary_and_tests(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        """The summary and tests tables of the records (:meth:`aggregate` adds the goal table)."""
        rec = records[self.main_phase]
        labels = record_labels(rec, ("population", "learner"))
        summary, tests = aggregate(rec, float(self.config.alpha), float(self.config.power_shift))
        return StudyTables(with_labels(summary, labels), with_labels(tests, labels), {}, labels=labels)

    def _label(self, tables: StudyTables) -> str:
        return f"{tables.labels.get('population')}, {tables.labels.get('learner')}"

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.rho_hat.figures import rho_hat_figures

        return rho_hat_figures(tables.summary, tables.tests, float(self.config.alpha), self._label(tables))

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        c, alpha = self.config, float(self.config.alpha)
        s = tables.summary
        lines = [f"# Data-driven rho_hat ({self._label(tables)}, K = {c.K}, B = {c.splits} splits into halves, "
                 f"alpha = {alpha:g})", "",
                 "Per n: true rho (%, +- se) and the subsample rho_hat(n/2) (mean / median over replicates):", "",
                 frame_to_markdown(pd.DataFrame({
                     "n": s["n"], "replicates": s["replicates"], "failed": s["failed"],
                     "rho (%)": (100 * s["rho"]).round(1), "rho se": (100 * s["rho_se"]).round(1),
                     "rho_hat(n/2) mean (%)": (100 * s["subsample_rho_mean"]).round(1),
                     "rho_hat(n/2) median (%)": (100 * s["subsample_rho_median"]).round(1)})), "",
                 f"Size (%) of the two-sided level-{alpha:g} tests of H0: mu = mu_true (goal {100 * alpha - 1:g} to "
                 f"{100 * alpha + 1:g}):", "", frame_to_markdown(pivot_percent(tables.tests, "size")), "",
                 f"Power (%) at mu_true +- {c.power_shift:g} sd(mu_hat):", "",
                 frame_to_markdown(pivot_percent(tables.tests, "power")), "",
                 "Goal check (worst size error over n; smallest power gain over rho_hat = 0.7 where that has power "
                 "< 80%):", "", frame_to_markdown(tables.extra["goal"]), "",
                 "Procedures:", ""] + [f"- `{k}`: {v}" for k, v in PROCEDURES.items()] + [""]
        path = Path(directory) / "summary.md"
        write_text_atomic(path, "\n".join(lines))
        write_csv_atomic(tables.extra["goal"], Path(directory) / "goal.csv")
        return [path]

    def headline(self, tables: StudyTables) -> str:
        return (f"rho_hat ({self._label(tables)}): size (%) at alpha = {self.config.alpha:g}\n"
                + pivot_percent(tables.tests, "size").to_string(index=False))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        return {"population": describe_part(self.population),
                "learner": describe_part(self.learner) if self.learner is not None else None,
                "loss": self.loss.describe(), "procedures": PROCEDURES}
