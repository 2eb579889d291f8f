"""The cv_clt study as the engine runs it (Bayle, Bayle, Janson & Mackey 2020).

Learners and comparisons are the phase's subjects: adding a learner (or a comparison) to a
finished run computes only that subject's records; changing a learner's settings is a
different study and is refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.errors import ConfigError
from simstudy.losses import check_loss, resolve_loss
from simstudy.report import frame_to_markdown
from simstudy.studies.base import (Phase, Study, StudyTables, check_learner_task, record_labels, size_conditions,
                                   with_labels)
from simstudy.studies.cv_clt.aggregate import aggregate, coverage_table
from simstudy.studies.cv_clt.config import CVCLTConfig
from simstudy.studies.cv_clt.worker import CVCLTWorker, comparison_label

__all__ = ["CVCLTStudy", "make_conditions"]


def make_conditions(sizes, K: int, population):
    """Conditions keyed by (cv_clt, n, K, population): learners share samples and splits."""
    return size_conditions("cv_clt", sizes, K, population)


class CVCLTStudy(Study):
    """Coverage of CV intervals and size/power of CV tests for the k-fold test error."""

    name = "cv_clt"
    description = "Bayle et al. (2020): coverage of CV intervals, size and power of CV tests"
    Config = CVCLTConfig
    uses = ("population",)

    def __init__(self, config: CVCLTConfig, population: Any = None, learner: Any = None, loss: Any = None):
        super().__init__(config, population, None, loss if loss is not None else resolve_loss(config.loss))
        self.learners: dict[str, Any] = {}
        if population is not None:
            from simstudy.learners import build_learner

            self.learners = {name: build_learner({"name": name, "estimator": dict(spec)}, population, self.loss,
                                                 f"study.learners.{name}")
                             for name, spec in config.learners.items()}

    def check(self) -> None:
        pop = self.population
        import numpy as np

        from simstudy.truth import truth_available

        for name, learner in self.learners.items():
            why = truth_available(pop, learner)
            if why:
                raise ConfigError(f"population={pop.name!r} is invalid for study=cv_clt: it needs the true risk of "
                                  f"every model ({why}); use a finite population (population=letter, "
                                  "population=tabular with population.path=...) or one with a truth "
                                  "(gaussian_linear, friedman1).")

        check_loss(self.loss, pop.sample(min(self.config.sizes), np.random.default_rng(0)).y,
                   getattr(pop, "task", "classification"))
        for name, learner in self.learners.items():
            check_learner_task(learner, pop, f"study.learners.{name}")
        for learner in self.learners.values():
            build_index = getattr(learner, "build_index", None)
            if callable(build_index):
                build_index()           # once, in this process; workers memory-map the cache

    def comparisons(self) -> list[tuple[str, str]]:
        return [(str(a), str(b)) for a, b in self.config.comparisons]

    def subjects(self) -> dict[str, Any]:
        specs = {name: spec for name, spec in self.config.learners.items()}
        out: dict[str, Any] = dict(specs)
        for a, b in self.comparisons():
            out[comparison_label(a, b)] = {"A": specs[a], "B": specs[b]}
        return out

    def phases(self, on_error: str = "record") -> list[Phase]:
        c = self.config
        conditions = make_conditions(c.sizes, c.K, self.population)
        worker = CVCLTWorker(self.population, self.learners, self.loss, conditions, self.comparisons(), int(c.seed),
                             int(c.repeated_splits), int(c.nested_cv_replicates), int(c.nested_cv_repetitions),
                             on_error)
        return [Phase("replicates", conditions, [int(c.replicates)] * len(conditions), worker, worker.subjects,
                      description=f"cv_clt {self.population.name}")]

    def record_labels(self) -> dict[str, Any]:
        return {"population": self.population.name}

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        rec = records[self.main_phase]
        labels = record_labels(rec, ("population",))
        summary, tests = aggregate(rec, float(self.config.alpha))
        return StudyTables(with_labels(summary, labels), with_labels(tests, labels), labels=labels)

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.cv_clt.figures import cv_clt_figures

        return cv_clt_figures(tables.summary, tables.tests, float(self.config.alpha), self._rate_loss())

    @staticmethod
    def _truth_note(learners: pd.DataFrame) -> list[str]:
        """A line on the Monte Carlo error of the truth, when it is not exact."""
        if "target_mc_se" not in learners or not learners["target_mc_se"].notna().any():
            return []
        rel = (learners["target_mc_se"] / learners["mean_target"].abs()).max()
        return [f"The truth is a Monte Carlo value (a fixed evaluation sample of the population): standard error of "
                f"R_n up to {learners['target_mc_se'].max():.4g} ({100 * rel:.2g}% of R_n; target_mc_se in "
                "summary.csv).", ""]

    def _rate_loss(self) -> bool:
        """The loss is a rate in [0, 1] (0-1 loss): widths in percentage points, else in loss units."""
        return self.loss is None or tuple(self.loss.bounds) == (0.0, 1.0)

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        alpha, summary, tests = float(self.config.alpha), tables.summary, tables.tests
        learners = summary[summary["kind"] == "learner"]
        lines = [f"# CV intervals and tests for test error ({tables.labels.get('population')}, K = {self.config.K}, "
                 f"alpha = {alpha})", "",
                 "Coverage (%) of the k-fold test error R_n (nominal "
                 f"{100 * (1 - alpha):g}%); Wilson intervals in summary.csv.", "",
                 frame_to_markdown(coverage_table(learners, "coverage")), "",
                 *self._truth_note(learners),
                 "Coverage (%) of Err_XY, the error of the model trained on all n points (nested CV's target):", "",
                 frame_to_markdown(coverage_table(learners, "coverage_full")), "",
                 f"Mean width ({'percentage points' if self._rate_loss() else 'loss units'}):", "",
                 frame_to_markdown(coverage_table(learners, "mean_width", 100 if self._rate_loss() else 1)), ""]
        if tests is not None and len(tests):
            for column, title in (("size", "Size (%): rejection rate among replicates with R_n(A) - R_n(B) >= 0"),
                                  ("power", "Power (%): rejection rate among replicates with R_n(A) - R_n(B) < 0"),
                                  ("rejection_rate", "Rejection rate (%) over all replicates")):
                table = tests.pivot_table(index=["comparison", "test"], columns="n", values=column, sort=False)
                table = (100 * table).round(1)
                table.columns = [f"n={c}" for c in table.columns]
                lines += [f"{title} of the one-sided level-{alpha:g} tests of \"A better than B\":", "",
                          frame_to_markdown(table.reset_index()), ""]
        path = Path(directory) / "summary.md"
        path.write_text("\n".join(lines))
        return [path]

    def headline(self, tables: StudyTables) -> str:
        learners = tables.summary[tables.summary["kind"] == "learner"]
        table = coverage_table(learners, "coverage")
        return (f"cv_clt ({tables.labels.get('population')}): coverage (%) of R_n at nominal "
                f"{100 * (1 - self.config.alpha):g}%\n" + table.to_string(index=False))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        out: dict[str, Any] = {"loss": self.loss.describe(),
                               "comparisons": [comparison_label(a, b) for a, b in self.comparisons()]}
        if self.population is not None:
            out["population"] = self.population.describe()
            out["learners"] = {k: v.describe() for k, v in self.learners.items()}
        return out

    @staticmethod
    def warm_up() -> None:
        from simstudy.learners.cart import warm_up

        warm_up()
