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

from simstudy.cv.losses import check_loss, resolve_loss
from simstudy.errors import ConfigError
from simstudy.populations.base import ResidualPopulation
from simstudy.populations.truth import check_evaluation_set, missing_truth
from simstudy.report.paper import table2_comparison, table2_frame, table2_markdown
from simstudy.report.tables import frame_to_markdown, rate_with_interval, with_error
from simstudy.studies.base import (Phase, Study, StudyTables, check_learner_task, describe_part, record_labels,
                                   size_conditions,
                                   validate_sizes,
                                   with_labels)
from simstudy.studies.cv_variance.aggregate import aggregate
from simstudy.studies.cv_variance.config import CVVarianceConfig
from simstudy.studies.cv_variance.worker import THETAS, CVVarianceWorker
from simstudy.studies.metrics import rate_without_degenerate
from simstudy.studies.settings import targets_of
from simstudy.studies.targets import TargetMeasure
from simstudy.populations.checks import draw_sample
from simstudy.files import write_csv_atomic, write_text_atomic

__all__ = ["CVVarianceStudy", "CVVarianceConfig", "CVVarianceWorker", "aggregate", "degenerate_warnings",
           "make_conditions", "THETAS"]


def make_conditions(sizes, K: int, population):
    """Conditions keyed by (cv_variance, n, K, population); see :func:`~simstudy.studies.base.size_conditions`."""
    return size_conditions("cv_variance", sizes, K, population)


def degenerate_warnings(summary: pd.DataFrame, tests: pd.DataFrame) -> list[str]:
    """Warnings for the conditions whose t-test rejections come largely from degenerate replicates.

    A replicate whose K fold means are all equal (zero spread, ``theta3_zero`` in the summary:
    common with K = 2 and a 0-1 loss at small n) has t = +-inf in eq. 9 whatever rho_hat, so it
    rejects H0 at every level (:func:`simstudy.inference.cv_t_test`). When such replicates are
    at least :data:`~simstudy.studies.metrics.DEGENERATE_SHARE` of a condition's rejections, the
    rate says more about the loss's granularity than about the test; the warning gives their
    count and the rate without them.
    """
    lines = []
    if "theta3_zero" not in summary or tests is None or not len(tests):
        return lines
    for _, row in summary[summary["theta3_zero"] > 0].iterrows():
        zero = int(row["theta3_zero"])
        t = tests[(tests["n"] == row["n"]) & (tests["K"] == row["K"]) & (tests["test"] == "cv_t")]
        if not len(t):
            continue
        low = t.loc[t["rejections"].idxmin()]  # the rate with the fewest rejections: the largest share
        rejections, replicates = int(low["rejections"]), int(low["replicates"])
        rest = rate_without_degenerate(rejections, zero, replicates, zero)
        if rest is None:
            continue
        lines.append(f"  warning: n={row['n']}, K={row['K']}: {zero} of {replicates} replicates have all fold means "
                     f"equal (zero spread: t = ±inf, rejected at every rho_hat); they are {zero} of the "
                     f"{rejections} rejections at rho_hat={low['rho_hat']:g} (without them: {100 * rest:.1f}%). "
                     "The rate reflects ties of the loss, not the test.")
    return lines


class CVVarianceStudy(Study):
    """rho and the type-I error of CV t-tests on a population, for any learner and loss."""

    name = "cv_variance"
    description = "Grandvalet & Bengio (2006): rho and the type-I error of CV t-tests (Table 2)"
    Config = CVVarianceConfig
    uses = ("population", "learner")
    aggregation_imports = ("scipy.special",)  # t and normal only (simstudy.inference.distributions)
    streams_records = True  # aggregate() reads StoredRecords a condition and a few columns at a time

    @classmethod
    def parts_needed(cls, config: CVVarianceConfig, population: Any) -> tuple[str, ...]:
        """Residual populations (gaussian_folds) need no learner."""
        return ("population",) if isinstance(population, ResidualPopulation) else cls.uses

    @classmethod
    def target_measures(cls) -> dict[str, TargetMeasure]:
        """mu_hat, rho, theta and the relative biases (1.96 SE) per (n, K); type1: the t-tests'
        rejection rates (half the 95% Wilson interval, the largest over rho_hat)."""
        by = ("n", "K")
        out = {"mu_hat": TargetMeasure("summary", by, se="mu_hat_se", description="mean CV estimate"),
               "rho": TargetMeasure("summary", by, se="rho_se", description="between-block correlation"),
               "theta": TargetMeasure("summary", by, se="theta_se", description="Var(mu_hat)")}
        for name in THETAS:
            out[f"rel_bias_{name}"] = TargetMeasure("summary", by, se=f"rel_bias_{name}_se",
                                                    description=f"relative bias of {name}")
        out["type1"] = TargetMeasure("tests", by, interval=("ci_low", "ci_high"),
                                     description="type-I error of the t-tests, every rho_hat")
        return out

    def __init__(self, config: CVVarianceConfig, population: Any = None, learner: Any = None, loss: Any = None):
        super().__init__(config, population, learner, loss if loss is not None else resolve_loss(config.loss))

    def check(self) -> None:
        if isinstance(self.population, ResidualPopulation):
            # residuals are drawn as (K, m) blocks: equal folds only
            validate_sizes(self.config.sizes, self.config.K, 2, "", equal_folds=f"population "
                           f"{self.population.name!r} draws residuals in equal blocks")
            return
        if self.config.truth:
            why = missing_truth(self.population, self.learner)
            if why:
                raise ConfigError(f"study.truth=true is invalid here: {why}; set study.truth=false (mu_true is then "
                                  "the mean of mu_hat).")
            check_evaluation_set(self.population)
        probe = draw_sample(self.population, min(self.config.sizes), np.random.default_rng(0))
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
        labels = record_labels(rec, ("population", "learner")) if isinstance(rec, pd.DataFrame) else \
            {k: v for k, v in rec.labels.items() if k in ("population", "learner")}  # StoredRecords
        summary, tests = aggregate(rec, c.alpha, list(c.rho_hats), c.mu_true)
        return StudyTables(with_labels(summary, labels), with_labels(tests, labels), labels=labels)

    def _label(self, tables: StudyTables) -> str:
        labels = tables.labels
        count = f"{self.config.replicates} replicates"
        if targets_of(self.config) and len(tables.summary):
            low, high = int(tables.summary["replicates"].min()), int(tables.summary["replicates"].max())
            count = f"{low if low == high else f'{low}..{high}'} replicates, run to targets"
        return f"({labels.get('population')}, {labels.get('learner')}, {count})"

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.cv_variance.figures import cv_variance_figures

        return cv_variance_figures(tables.summary, tables.tests, self.config.alpha, self.config.paper,
                                   self._label(tables), loss=self.loss.name if self.loss is not None else "loss")

    def report_tables(self, tables: StudyTables) -> dict[str, pd.DataFrame]:
        """Per n: rho, theta and the relative biases of theta1..5 (± 1.96 SE); the t-tests'
        rejection rates with Wilson intervals and counts; Table 2 against the paper (with z)."""
        s, t = tables.summary, tables.tests
        summary = pd.DataFrame({"n": s["n"], "K": s["K"], "replicates": s["replicates"], "failed": s["failed"],
                                "mu_hat (%)": [with_error(m, e, 100) for m, e in zip(s["mu_hat_mean"], s["mu_hat_se"])],
                                "rho (%)": [with_error(m, e, 100) for m, e in zip(s["rho"], s["rho_se"])],
                                "theta x 1e4": [with_error(m, e, 1e4, 1) for m, e in zip(s["theta"], s["theta_se"])]})
        for name in THETAS:
            summary[f"rel. bias {name} (%)"] = [with_error(m, e, 100, 1)
                                                for m, e in zip(s[f"rel_bias_{name}"], s[f"rel_bias_{name}_se"])]
        rates = t.pivot_table(index="rho_hat", columns="n", values="rejection_rate").index
        tests = pd.DataFrame({"rho_hat": rates})
        for n, g in t.groupby("n", sort=False):
            g = g.set_index("rho_hat")
            tests[f"n={n}"] = [rate_with_interval(g.loc[r, "rejections"], g.loc[r, "replicates"], g.loc[r, "ci_low"],
                                                  g.loc[r, "ci_high"]) for r in rates]
        out = {f"Summary per condition {self._label(tables)}": summary,
               f"Type-I error (%) of the two-sided CV t-test at alpha = {self.config.alpha:g}, by rho_hat and n "
               "[95% Wilson interval] (rejections/replicates)": tests}
        if self.config.paper:
            out = {f"Table 2 of Grandvalet & Bengio (2006), {self.config.paper}: ours beside the paper's "
                   "(± 1.96 SE; z of ours - paper)": table2_frame(s, t, self.config.paper), **out}
            c = table2_comparison(s, t, self.config.paper)
            out[f"Table 2 of Grandvalet & Bengio (2006), {self.config.paper}: ours - paper (%), combined SE and z"] = (
                c.assign(**{col: c[col].round(2) for col in ("ours", "ours_se", "paper_se", "difference",
                                                             "combined_se", "z")})
                [["quantity", "n", "ours", "ours_se", "paper", "paper_se", "difference", "combined_se", "z"]])
        return out

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        directory = Path(directory)
        table2 = directory / "table2.md"
        write_text_atomic(table2, table2_markdown(tables.summary, tables.tests, self.config.paper))
        files = [table2]
        if self.config.paper:
            files.append(directory / "table2_comparison.csv")
            write_csv_atomic(table2_comparison(tables.summary, tables.tests, self.config.paper), files[-1])
        shown = self.report_tables(tables)
        text = [f"# {self.name}: {self._label(tables)}\n",
                "± is 1.96 Monte Carlo standard errors (95%), rates show [95% Wilson interval] (count/replicates), "
                "as in the figures; every column and its SE is in summary.csv and tests.csv.\n"]
        for title, frame in [(k, v) for k, v in shown.items() if not k.startswith("Table 2")]:
            text += [f"## {title}\n", frame_to_markdown(frame)]
        summary = directory / "summary.md"
        write_text_atomic(summary, "\n".join(text))
        return files + [summary]

    def headline(self, tables: StudyTables) -> str:
        """rho and the type-I errors per n, ours ± 1.96 SE beside the paper's values (and z)."""
        s, t = tables.summary, tables.tests
        lines = [f"{self.name} {self._label(tables)}: rho (%) and type-I error (%) of the t-test at "
                 f"alpha={self.config.alpha:g}" + (f"; paper = Grandvalet & Bengio (2006) Table 2, {self.config.paper}"
                                                   if self.config.paper else "")]
        for rho_hat in (0.0, 0.7):
            if not np.any(np.isclose(t["rho_hat"], rho_hat)):
                return "\n".join(lines)
        c = table2_comparison(s, t, self.config.paper).set_index(["quantity", "n"])
        has_paper = bool(self.config.paper) and c["paper"].notna().any()
        for n in s["n"]:
            cells = []
            for quantity, name, digits in (("rho", "rho", 2), ("type1_rho_hat_0", "rho_hat=0", 1),
                                           ("type1_rho_hat_0.7", "rho_hat=0.7", 1)):
                row = c.loc[(quantity, n)]
                cell = f"{name} {row['ours']:.{digits}f} ± {1.96 * row['ours_se']:.{digits}f}"
                if has_paper and np.isfinite(row["paper"]):
                    cell += f" (paper {row['paper']:.{digits}f}, z {row['z']:+.1f})"
                cells.append(cell)
            lines.append(f"  n={n:<5} " + "   ".join(cells))
        lines.append("  ± = 1.96 Monte Carlo SE (95%)" + ("; z = (ours - paper) / combined SE" if has_paper else ""))
        return "\n".join(lines + degenerate_warnings(s, t))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        return {"population": describe_part(self.population),
                "learner": describe_part(self.learner) if self.learner is not None else None,
                "loss": self.loss.describe()}

    @classmethod
    def collect_figures(cls, summary: pd.DataFrame, tests: pd.DataFrame | None,
                        parameters: list[str]) -> dict[str, Any]:
        from simstudy.studies.cv_variance.figures import sweep_figures

        return sweep_figures(summary, tests, parameters)
