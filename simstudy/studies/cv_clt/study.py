"""The cv_clt study as the engine runs it (Bayle, Bayle, Janson & Mackey 2020).

Learners and comparisons are the phase's subjects: adding a learner (or a comparison) to a
finished run computes only that subject's records; changing a learner's settings is a
different study and is refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.cv.losses import check_loss, resolve_loss
from simstudy.errors import ConfigError
from simstudy.report import frame_to_markdown
from simstudy.studies.base import (Phase, Study, StudyTables, check_learner_task, describe_part, record_labels,
                                   size_conditions,
                                   with_labels)
from simstudy.studies.cv_clt.aggregate import aggregate, loss_stability, own_target_table, rate_table, width_table
from simstudy.studies.cv_clt.config import CVCLTConfig
from simstudy.studies.cv_clt.worker import CVCLTWorker, comparison_label
from simstudy.studies.metrics import rate_without_degenerate
from simstudy.studies.targets import TargetMeasure
from simstudy.populations.checks import draw_sample
from simstudy.files import write_text_atomic

__all__ = ["CVCLTStudy", "TRUTH_FITS", "degenerate_warnings", "make_conditions"]

#: The cost of one model's true risk on the population's evaluation set, in fits of one learner
#: (calibrated by benchmarks/budget_calibration.py).
TRUTH_FITS = 60.0


def make_conditions(sizes, K: int, population):
    """Conditions keyed by (cv_clt, n, K, population): learners share samples and splits."""
    return size_conditions("cv_clt", sizes, K, population)


def _half_width(summary: pd.DataFrame) -> float:
    """The median half-width (percentage points) of the coverage Wilson intervals."""
    return float(np.median(100 * (summary["coverage_high"] - summary["coverage_low"]) / 2))


class CVCLTStudy(Study):
    """Coverage of CV intervals and size/power of CV tests for the k-fold test error."""

    name = "cv_clt"
    description = "Bayle et al. (2020): coverage of CV intervals, size and power of CV tests"
    Config = CVCLTConfig
    uses = ("population",)

    @classmethod
    def target_measures(cls) -> dict[str, TargetMeasure]:
        """Per n, over every procedure: coverage (Wilson; nested CV left out), mean width (1.96 SE);
        over every test and comparison: rejection rate, size and power (Wilson)."""
        by = ("n",)
        out = {"coverage": TargetMeasure("summary", by, interval=("coverage_low", "coverage_high"),
                                         description="coverage of R_n", skip=(("procedure", "nested_cv"),)),
               "mean_width": TargetMeasure("summary", by, se="width_se", description="mean interval width",
                                           skip=(("procedure", "nested_cv"),))}
        for rate in ("rejection_rate", "size", "power"):
            out[rate] = TargetMeasure("tests", by, interval=(f"{rate}_low", f"{rate}_high"), description=rate)
        return out

    def __init__(self, config: CVCLTConfig, population: Any = None, learner: Any = None, loss: Any = None):
        super().__init__(config, population, None, loss if loss is not None else resolve_loss(config.loss))
        self.learners: dict[str, Any] = {}
        if population is not None:
            from simstudy.learners.dispatch import build_learner

            self.learners = {name: build_learner({"name": name, "estimator": dict(spec)}, population, self.loss,
                                                 f"study.learners.{name}")
                             for name, spec in config.learners.items()}

    def check(self) -> None:
        pop = self.population
        import numpy as np

        from simstudy.populations.truth import check_evaluation_set, missing_truth

        for name, learner in self.learners.items():
            why = missing_truth(pop, learner)
            if why:
                raise ConfigError(f"population={pop.name!r} is invalid for study=cv_clt: it needs the true risk of "
                                  f"every model ({why}); use a finite population (population=letter, "
                                  "population=tabular with population.path=...) or one with a truth "
                                  "(gaussian_linear, friedman1).")
        check_evaluation_set(pop)

        check_loss(self.loss, draw_sample(pop, min(self.config.sizes), np.random.default_rng(0)).y,
                   getattr(pop, "task", "classification"))
        for name, learner in self.learners.items():
            check_learner_task(learner, pop, f"study.learners.{name}")
        for learner in self.learners.values():
            build_index = getattr(learner, "build_index", None)
            if callable(build_index):
                build_index()           # once, in this process; workers memory-map the cache

    def comparisons(self) -> list[tuple[str, str]]:
        return [(str(a), str(b)) for a, b in self.config.comparisons]

    def fits_per_replicate(self) -> float:
        """Per fitted learner (every learner, and the second fit of each self-comparison): K folds,
        the 5x2 design, the J train/validation splits and the full fit, each with its true risk
        on the evaluation set (:data:`TRUTH_FITS` fits each); nested CV on its share of replicates."""
        c = self.config
        fitted = len(c.learners) + sum(a == b for a, b in self.comparisons())
        models = c.K + 10 + c.repeated_splits + 1
        nested = c.nested_cv_replicates / max(c.replicates, 1) * c.nested_cv_repetitions * c.K * c.K * len(c.learners)
        return fitted * models * (1 + TRUTH_FITS) + nested

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
                             on_error, str(c.nested_cv_method))
        return [Phase("replicates", conditions, [int(c.replicates)] * len(conditions), worker, worker.subjects,
                      description=f"cv_clt {self.population.name}")]

    def record_labels(self) -> dict[str, Any]:
        return {"population": self.population.name}

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        rec = records[self.main_phase]
        labels = record_labels(rec, ("population",))
        summary, tests = aggregate(rec, float(self.config.alpha))
        stability = with_labels(loss_stability(rec, float(self.config.alpha)), labels)
        return StudyTables(with_labels(summary, labels), with_labels(tests, labels), {"loss_stability": stability},
                           labels=labels)

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.cv_clt.figures import cv_clt_figures

        return cv_clt_figures(tables.summary, tables.tests, float(self.config.alpha),
                              stability=tables.extra.get("loss_stability"), rate_loss=self._rate_loss())

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

    def report_tables(self, tables: StudyTables) -> dict[str, pd.DataFrame]:
        """Coverage (of R_n and of Err_XY) with Wilson intervals and counts, mean widths ± 1.96 SE,
        and the tests' size and power with Wilson intervals and their H0 / H1 counts."""
        alpha, summary, tests = float(self.config.alpha), tables.summary, tables.tests
        learners = summary[summary["kind"] == "learner"]
        out = {f"Coverage (%) of the k-fold test error R_n, nominal {100 * (1 - alpha):g}% [95% Wilson interval] "
               "(covered/replicates)": rate_table(learners, "coverage", "procedure"),
               "Coverage (%) of Err_XY, the error of the model trained on all n points (nested CV's target)":
                   rate_table(learners, "coverage_full", "procedure"),
               f"Mean width ({'percentage points' if self._rate_loss() else 'loss units'}) ± 1.96 SE":
                   width_table(learners, 100 if self._rate_loss() else 1)}
        if tests is not None and len(tests):
            out[f"Size (%) of the one-sided level-{alpha:g} tests of \"A better than B\": rejections among the "
                "replicates with R_n(A) - R_n(B) >= 0 [95% Wilson interval] (rejections/H0 replicates)"] = (
                rate_table(tests, "size", "test"))
            out["Power (%): rejections among the replicates with R_n(A) - R_n(B) < 0 [95% Wilson interval] "
                "(rejections/H1 replicates)"] = rate_table(tests, "power", "test")
        return out

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        alpha = float(self.config.alpha)
        lines = [f"# CV intervals and tests for test error ({tables.labels.get('population')}, K = {self.config.K}, "
                 f"alpha = {alpha})", "",
                 "Rates in %, with [95% Wilson interval] and (count/replicates): size and power are rates among a "
                 "random number of H0 / H1 replicates, which the counts show; nested CV runs on the first "
                 f"{self.config.nested_cv_replicates} replicates only. ± is 1.96 Monte Carlo SE. As in the figures.", ""]
        for title, frame in self.report_tables(tables).items():
            lines += [f"## {title}", "", frame_to_markdown(frame), ""]
        lines += self._truth_note(tables.summary[tables.summary["kind"] == "learner"])
        lines += _stability_lines(tables.extra.get("loss_stability"), alpha)
        path = Path(directory) / "summary.md"
        write_text_atomic(path, "\n".join(lines))
        return [path]

    def headline(self, tables: StudyTables) -> str:
        """Coverage (%) of every procedure at the smallest and largest n, per learner; the size of
        the self-comparisons at the largest n."""
        learners = tables.summary[tables.summary["kind"] == "learner"]
        ends = sorted({int(learners["n"].min()), int(learners["n"].max())})
        wide = learners[learners["n"].isin(ends)].pivot_table(index="procedure", columns=["subject", "n"],
                                                              values="coverage", sort=False)
        wide = (100 * wide).round(1)
        wide.columns = [f"{s} n={n}" for s, n in wide.columns]
        lines = [f"cv_clt ({tables.labels.get('population')}, {self.config.replicates} replicates): coverage (%) of "
                 f"R_n at nominal {100 * (1 - self.config.alpha):g}% (95% Wilson half-width about "
                 f"{_half_width(learners):.1f} points; nested CV: {self.config.nested_cv_replicates} replicates)",
                 wide.to_string()]
        tests = tables.tests
        if tests is not None and len(tests):
            n = int(tests["n"].max())
            last = tests[tests["n"] == n]
            same = last[last["comparison"].isin([comparison_label(a, b) for a, b in self.comparisons() if a == b])]
            for comp, g in (same if len(same) else last).groupby("comparison", sort=False):
                cells = ", ".join(f"{t} {100 * r:.1f}" for t, r in zip(g["test"], g["size"]) if np.isfinite(r))
                lines.append(f"size (%) at n={n}, {comp} ({int(g['h0_replicates'].iloc[0])} H0 replicates, "
                             f"alpha {100 * self.config.alpha:g}%): {cells}")
        shown_tests = tests[tests["n"] == tests["n"].max()] if tests is not None and len(tests) else None
        return "\n".join(lines + degenerate_warnings(learners[learners["n"].isin(ends)], shown_tests))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        out: dict[str, Any] = {"loss": self.loss.describe(),
                               "comparisons": [comparison_label(a, b) for a, b in self.comparisons()]}
        if self.population is not None:
            out["population"] = describe_part(self.population)
            out["learners"] = {k: describe_part(v) for k, v in self.learners.items()}
        return out


def degenerate_warnings(summary: pd.DataFrame, tests: pd.DataFrame | None) -> list[str]:
    """Warnings for the coverages and sizes driven by degenerate replicates.

    A replicate whose procedure has a zero standard error (``zero_variance`` in the summary,
    ``zero_variance_h0`` in the tests; :func:`~simstudy.studies.cv_clt.aggregate.zero_variance`)
    has a point interval, which misses R_n unless the estimate equals it, and a statistic of
    +-inf, which rejects at every level. When such replicates are at least
    :data:`~simstudy.studies.metrics.DEGENERATE_SHARE` of a coverage's misses or of a size's
    rejections, the rate says more about ties of the loss than about the procedure; the warning
    gives their count and the rate without them.
    """
    lines = []
    if "zero_variance" in summary:
        for _, row in summary[summary["zero_variance"] > 0].iterrows():
            replicates, zero = int(row["replicates"]), int(row["zero_variance"])
            misses, degenerate = replicates - int(row["coverage_count"]), zero - int(row["zero_variance_covered"])
            missed = rate_without_degenerate(misses, degenerate, replicates, zero)
            if missed is None:
                continue
            rest = 1 - missed
            lines.append(f"  warning: n={row['n']}, {row['subject']}, {row['procedure']}: {zero} of {replicates} "
                         f"replicates have a zero variance estimate (a point interval); they are {degenerate} of the "
                         f"{misses} misses of R_n (coverage without them: {100 * rest:.1f}%). The rate reflects ties "
                         "of the loss, not the procedure.")
    if tests is not None and "zero_variance_h0" in tests:
        for _, row in tests[tests["zero_variance_size"] > 0].iterrows():
            h0, zero, rejections = int(row["h0_replicates"]), int(row["zero_variance_h0"]), int(row["size_count"])
            degenerate = int(row["zero_variance_size"])
            rest = rate_without_degenerate(rejections, degenerate, h0, zero)
            if rest is None:
                continue
            lines.append(f"  warning: n={row['n']}, {row['comparison']}, {row['test']}: {zero} of {h0} H0 replicates "
                         f"have a zero variance estimate (t = ±inf); they are {degenerate} of the {rejections} "
                         f"rejections (size without them: {100 * rest:.1f}%). The rate reflects ties of the loss, "
                         "not the test.")
    return lines


def _stability_lines(stability: pd.DataFrame | None, alpha: float) -> list[str]:
    """The loss-stability table of summary.md (learners only)."""
    if stability is None or not len(stability):
        return []
    frame = stability[stability["kind"] == "learner"]
    from simstudy.report.tables import with_error

    cells = frame.assign(ratio=[with_error(r, se) for r, se in zip(frame["ratio_out"], frame["ratio_out_se"])])
    table = cells.pivot(index="subject", columns="n", values="ratio")
    table.columns = [f"n={c}" for c in table.columns]
    return ["## Loss stability", "", "n Var(R_hat - R_n) / E[sigma_hat_out^2] ± 1.96 Monte Carlo SE, 1 when the CV CLT's "
            "variance is right; a ratio r makes the CV CLT interval too narrow by sqrt(r), coverage about "
            f"2 Phi(z / sqrt(r)) - 1 at nominal {100 * (1 - alpha):g}% (`loss_stability.csv`, "
            "`figures/loss_stability_vs_n.png`):", "", frame_to_markdown(table.reset_index()), ""]
