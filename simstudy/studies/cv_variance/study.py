"""The cv_variance study as the engine runs it (Grandvalet & Bengio 2006, Table 2).

Per replicate: K-fold CV of the learner on a training set drawn from the population
(:mod:`.worker`); per condition: rho, Var(mu_hat), the biases of theta1..theta5 and the type-I
error of the t-test of eq. 9 for every rho_hat (:mod:`.aggregate`); the paper's Table 2 beside
ours (``table2.md``) and three figures (:mod:`.figures`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.errors import ConfigError
from simstudy.losses import check_loss, resolve_loss
from simstudy.populations.base import ResidualPopulation
from simstudy.report import frame_to_markdown, table2_markdown
from simstudy.studies.base import (Phase, Study, StudyTables, check_learner_task, record_labels, size_conditions,
                                   validate_sizes,
                                   with_labels)
from simstudy.studies.cv_variance.aggregate import aggregate
from simstudy.studies.cv_variance.config import CVVarianceConfig
from simstudy.studies.cv_variance.worker import THETAS, CVVarianceWorker
from simstudy.truth import truth_available

__all__ = ["CVVarianceStudy", "CVVarianceConfig", "CVVarianceWorker", "aggregate", "make_conditions", "THETAS"]


def make_conditions(sizes, K: int, population):
    """Conditions keyed by (cv_variance, n, K, population); see :func:`~simstudy.studies.base.size_conditions`."""
    return size_conditions("cv_variance", sizes, K, population)


class CVVarianceStudy(Study):
    """rho and the type-I error of CV t-tests on a population, for any learner and loss."""

    name = "cv_variance"
    description = "Grandvalet & Bengio (2006): rho and the type-I error of CV t-tests (Table 2)"
    Config = CVVarianceConfig
    uses = ("population", "learner")

    @classmethod
    def parts_needed(cls, config: CVVarianceConfig, population: Any) -> tuple[str, ...]:
        """Residual populations (gaussian_folds) need no learner."""
        return ("population",) if isinstance(population, ResidualPopulation) else cls.uses

    def __init__(self, config: CVVarianceConfig, population: Any = None, learner: Any = None, loss: Any = None):
        super().__init__(config, population, learner, loss if loss is not None else resolve_loss(config.loss))

    def check(self) -> None:
        if isinstance(self.population, ResidualPopulation):
            # residuals are drawn as (K, m) blocks: equal folds only
            validate_sizes(self.config.sizes, self.config.K, 2, "", equal_folds=f"population "
                           f"{self.population.name!r} draws residuals in equal blocks")
            return
        if self.config.truth:
            why = truth_available(self.population, self.learner)
            if why:
                raise ConfigError(f"study.truth=true is invalid here: {why}; set study.truth=false (mu_true is then "
                                  "the mean of mu_hat).")
        probe = self.population.sample(min(self.config.sizes), np.random.default_rng(0))
        check_loss(self.loss, probe.y, getattr(self.population, "task", "classification"))
        check_learner_task(self.learner, self.population)

    def record_labels(self) -> dict[str, Any]:
        learner = self.learner.name if self.learner is not None else "none"
        return {"population": self.population.name, "learner": learner}

    def phases(self, on_error: str = "record") -> list[Phase]:
        c = self.config
        conditions = make_conditions(c.sizes, c.K, self.population)
        worker = CVVarianceWorker(self.population, self.learner, self.loss, conditions, int(c.seed), bool(c.truth),
                                  on_error)
        return [Phase("replicates", conditions, [int(c.replicates)] * len(conditions), worker,
                      description=f"cv_variance {self.population.name}")]

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        c = self.config
        rec = records[self.main_phase]
        labels = record_labels(rec, ("population", "learner"))
        summary, tests = aggregate(rec, c.alpha, list(c.rho_hats), c.mu_true)
        return StudyTables(with_labels(summary, labels), with_labels(tests, labels), labels=labels)

    def _label(self, tables: StudyTables) -> str:
        labels = tables.labels
        return f"({labels.get('population')}, {labels.get('learner')}, {self.config.replicates} replicates)"

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.cv_variance.figures import cv_variance_figures

        return cv_variance_figures(tables.summary, tables.tests, self.config.alpha, self.config.paper,
                                   self._label(tables), loss=self.loss.name if self.loss is not None else "loss")

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        directory = Path(directory)
        table2 = directory / "table2.md"
        table2.write_text(table2_markdown(tables.summary, tables.tests, self.config.paper))
        summary = directory / "summary.md"
        summary.write_text(f"# {self.name}: {self._label(tables)}\n\n## Summary per condition\n\n"
                           + frame_to_markdown(tables.summary) + "\n## t-tests per condition and rho_hat\n\n"
                           + frame_to_markdown(tables.tests))
        return [table2, summary]

    def headline(self, tables: StudyTables) -> str:
        s, t = tables.summary.set_index("n"), tables.tests
        lines = [f"{self.name} {self._label(tables)}: rho (%) and type-I error (%) of the t-test at "
                 f"alpha={self.config.alpha:g}"]
        for rho_hat in (0.0, 0.7):
            if not np.any(np.isclose(t["rho_hat"], rho_hat)):
                return "\n".join(lines)
        for n in s.index:
            row = t[t["n"] == n].set_index("rho_hat")
            lines.append(f"  n={n:<6} rho {100 * s.loc[n, 'rho']:6.2f} +- {100 * s.loc[n, 'rho_se']:.2f}   "
                         f"type-I rho_hat=0: {100 * row.loc[0.0, 'rejection_rate']:5.1f}   "
                         f"rho_hat=0.7: {100 * row.loc[0.7, 'rejection_rate']:5.1f}")
        return "\n".join(lines)

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        return {"population": self.population.describe(),
                "learner": self.learner.describe() if self.learner is not None else None,
                "loss": self.loss.describe()}

    @classmethod
    def collect_figures(cls, summary: pd.DataFrame, tests: pd.DataFrame | None,
                        parameters: list[str]) -> dict[str, Any]:
        from simstudy.studies.cv_variance.figures import sweep_figures

        return sweep_figures(summary, tests, parameters)

    @staticmethod
    def warm_up() -> None:
        from simstudy.learners.cart import warm_up

        warm_up()
