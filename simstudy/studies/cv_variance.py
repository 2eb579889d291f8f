"""Grandvalet & Bengio (2006): between-block correlation and CV t-tests (Table 2).

Per replicate (one training set of size n drawn from the population): K-fold CV of the
learner with 0-1 loss gives residuals e_i; we record mu_hat, the K fold means, theta1..theta5
and, when ``study.truth`` is on, each fold model's exact error on the population.

Per condition (n, K): mu (the H0 value), theta = Var(mu_hat), rho = 1 - E[theta3] / theta
(section 5 of the paper) with its delta-method standard error, the relative bias of
theta3/4/5, and the rejection rate of the two-sided t-test of eq. 9 of H0: mu = mu_true for
every rho_hat of ``study.rho_hats`` (Wilson intervals).

A replicate whose fold means are all equal has theta3 = 0: its t statistic is infinite when
mu_hat != mu_true and it counts as a rejection (with mu_true a Monte Carlo mean, mu_hat ==
mu_true exactly does not happen in practice; if it does, t = 0 and it does not reject).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from simstudy.inference import cv_t_test, variance_estimates_from_blocks, zero_spread
from simstudy.learners import SklearnLearner, build_learner
from simstudy.learners.cart import warm_up  # noqa: F401  loads the tree kernels in a fresh worker
from simstudy.learners.crossval import cross_validate
from simstudy.learners.sklearn import fit_context
from simstudy.metrics import between_block_correlation, mean_summary, rejection_rate
from simstudy.populations import Population, ResidualPopulation, build_population
from simstudy.records import write_records
from simstudy.report import frame_to_markdown, table2_markdown
from simstudy.rng import condition_key, replicate_rng
from simstudy.runner import Chunk
from simstudy.schemes import KFold
from simstudy.studies.base import (
    RunnerOptions, SizeCondition, StudyOutput, load_records, phase_manifest, run_phase, size_conditions,
    size_conditions_manifest, write_tables,
)

__all__ = ["Condition", "CVVarianceWorker", "make_conditions", "aggregate", "execute", "write_reports", "THETAS"]

log = logging.getLogger("simstudy")

THETAS = ("theta1", "theta2", "theta3", "theta4", "theta5")


#: One (n, K) cell of the design (see :class:`~simstudy.studies.base.SizeCondition`).
Condition = SizeCondition


def make_conditions(sizes: Sequence[int], K: int, population: Population) -> list[Condition]:
    """Conditions keyed by (cv_variance, n, K, population); see :func:`~simstudy.studies.base.size_conditions`."""
    return size_conditions("cv_variance", sizes, K, population)


@dataclass
class CVVarianceWorker:
    """Runs the replicates of one chunk (picklable: sent to joblib workers)."""

    population: Population
    learner: SklearnLearner
    conditions: list[Condition]
    seed: int
    truth: bool
    on_error: str = "record"

    def replicate(self, cond: Condition, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Residuals in fold blocks (K, m), fold labels, and fold models' exact errors (K,)."""
        rng = replicate_rng(self.seed, cond.key, r)
        if isinstance(self.population, ResidualPopulation):  # residuals drawn directly, exact mean
            blocks = self.population.residual_blocks(cond.K, cond.m, rng)
            return blocks, np.repeat(np.arange(cond.K), cond.m), np.full(cond.K, self.population.mean)
        sample = self.population.sample(cond.n, rng)
        labels = KFold(cond.K).labels(cond.n, rng)
        cv = cross_validate(self.learner, self.learner.prepare(sample.X), sample.y, labels, cond.K, rng,
                            keep_models=self.truth)
        order = np.argsort(labels, kind="stable")  # rows of fold 0, then fold 1, ... (0-1 losses)
        blocks = cv.losses[order].reshape(cond.K, cond.m)
        fold_truth = np.full(cond.K, np.nan)
        models = cv.models
        if self.truth:
            if hasattr(self.learner, "errors_on") and hasattr(self.population, "y"):
                # all fold models in one pass over the finite population
                fold_truth[:] = self.learner.errors_on(models, self.population.features(self.learner.dtype),
                                                       self.population.y)
            else:
                for k, model in enumerate(models):
                    fold_truth[k] = self.population.exact_error(
                        lambda Z, model=model: self.learner.predict(model, Z), dtype=self.learner.dtype)
        return blocks, labels, fold_truth

    def batched_chunk(self, cond: Condition, chunk: Chunk, blocks, truth, errors) -> None:
        """All folds of all replicates of the chunk at once (chunk-level linear kernels).

        Draws exactly the samples and fold assignments of :meth:`replicate` (same streams).
        """
        R, n, K = chunk.size, cond.n, cond.K
        X, y, labels = [], [], []
        for r in range(chunk.start, chunk.stop):
            rng = replicate_rng(self.seed, cond.key, r)
            sample = self.population.sample(n, rng)
            X.append(sample.X)
            y.append(sample.y)
            labels.append(KFold(K).labels(n, rng))
        X, y, labels = np.asarray(X, dtype=float), np.asarray(y), np.asarray(labels)
        rules = self.learner.fold_rules(X, y, labels, K)
        own = np.take_along_axis(rules.decision(X), labels[:, None, :], axis=1)[:, 0, :]   # (R, n)
        loss = ((own > 0).astype(int) != y).astype(float)
        order = np.argsort(labels, axis=1, kind="stable")
        blocks[:] = np.take_along_axis(loss, order, axis=1).reshape(R, K, cond.m)
        if self.truth:
            Xp, yp = self.population.features(np.float64), self.population.y
            W, b = rules.w.reshape(R * K, -1), rules.b.reshape(R * K)
            err = np.empty(R * K)
            for s in range(0, R * K, 64):  # blocks of rules keep memory at N x 64 floats
                dec = Xp @ W[s:s + 64].T + b[s:s + 64]
                err[s:s + 64] = np.mean((dec > 0).astype(int) != yp[:, None], axis=0)
            truth[:] = err.reshape(R, K)

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        R = chunk.size
        blocks = np.full((R, cond.K, cond.m), np.nan)
        truth = np.full((R, cond.K), np.nan)  # stays NaN unless the truth is computed
        errors = [""] * R
        if getattr(self.learner, "batched", False):
            try:
                self.batched_chunk(cond, chunk, blocks, truth, errors)
            except Exception as exc:  # the whole chunk fails together: every replicate records it
                if self.on_error == "raise":
                    raise
                blocks[:], truth[:] = np.nan, np.nan
                errors = [f"{type(exc).__name__}: {exc}"] * R
        else:
            with fit_context([self.learner]):
                for j, r in enumerate(range(chunk.start, chunk.stop)):
                    try:
                        blocks[j], _, truth[j] = self.replicate(cond, r)
                    except Exception as exc:  # recorded, never dropped; see runner.on_error
                        if self.on_error == "raise":
                            raise
                        errors[j] = f"{type(exc).__name__}: {exc}"
        est = variance_estimates_from_blocks(blocks)
        fold_means = blocks.mean(axis=-1)
        frame = pd.DataFrame({
            "n": cond.n, "K": cond.K, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop),
            "mu_hat": fold_means.mean(axis=-1),
            **{name: getattr(est, name) for name in THETAS},
            "fold_means": list(fold_means),
        })
        if self.truth or isinstance(self.population, ResidualPopulation):
            frame["true_error"] = truth.mean(axis=-1)
            frame["fold_true_errors"] = list(truth)
        frame["error"] = errors
        return frame


def _mu_true(group: pd.DataFrame, mode: str) -> tuple[float, str]:
    if mode == "exact" or (mode == "auto" and "true_error" in group):
        return float(group["true_error"].mean()), "exact"
    return float(group["mu_hat"].mean()), "mean_cv"


def aggregate(records: pd.DataFrame, alpha: float, rho_hats: Sequence[float],
              mu_true: str = "auto") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summaries per condition and rejection rates per (condition, rho_hat).

    Parameters
    ----------
    records : DataFrame
        One row per replicate as produced by :class:`CVVarianceWorker`.
    alpha : float
        Level of the two-sided t-tests.
    rho_hats : sequence of float
        Values of rho_hat in eq. 9.
    mu_true : {"auto", "exact", "mean_cv"}
        The H0 value: the mean exact error of the fold models, or the mean of mu_hat.

    Returns
    -------
    summary, tests : DataFrame
    """
    summaries, tests = [], []
    for (n, K), g_all in records.groupby(["n", "K"], sort=False):
        failed = int((g_all["error"] != "").sum())
        g = g_all[g_all["error"] == ""]
        mu, source = _mu_true(g, mu_true)
        theta = float(g["mu_hat"].var(ddof=1))
        rho = between_block_correlation(g["mu_hat"], g["theta3"])
        mh = mean_summary(g["mu_hat"])
        row: dict[str, Any] = {
            "n": n, "K": K, "m": n // K, "replicates": len(g), "failed": failed,
            "mu": mu, "mu_source": source, "mu_hat_mean": mh.mean, "mu_hat_se": mh.se,
        }
        if "true_error" in g:
            te = mean_summary(g["true_error"])
            row.update(true_error_mean=te.mean, true_error_se=te.se,
                       # E[mu_hat] = E[true error] exactly (test points are fresh draws): a check
                       cv_minus_true_z=(mh.mean - te.mean) / np.sqrt(
                           np.var(g["mu_hat"] - g["true_error"], ddof=1) / len(g)))
        row.update(theta=theta, rho=rho.value, rho_se=rho.se,
                   theta3_zero=int(zero_spread(np.stack(g["fold_means"].to_numpy())).sum()) if len(g) else 0)
        for name in THETAS:
            ms = mean_summary(g[name])
            row[f"mean_{name}"] = ms.mean
            row[f"rel_bias_{name}"] = ms.mean / theta - 1 if theta > 0 else np.nan
        summaries.append(row)
        fold_means = np.stack(g["fold_means"].to_numpy()) if len(g) else np.empty((0, K))
        for rho_hat in rho_hats:
            pvalues = cv_t_test(fold_means, mu0=mu, rho=rho_hat).pvalue if len(g) else np.array([])
            rate = rejection_rate(np.asarray(pvalues) < alpha)
            tests.append({"n": n, "K": K, "test": "cv_t", "rho_hat": float(rho_hat), "alpha": alpha,
                          "rejections": rate.successes, "replicates": rate.trials,
                          "rejection_rate": rate.rate, "ci_low": rate.low, "ci_high": rate.high})
    return pd.DataFrame(summaries), pd.DataFrame(tests)


# ----------------------------------------------------------------------------- run-engine hooks
def execute(cfg, run_dir: Path, options: RunnerOptions) -> StudyOutput:
    """Run the cv_variance study for a validated config and write its outputs to ``run_dir``."""
    study = cfg.study
    population = build_population(cfg.population)
    if study.truth and not population.has_exact_error:
        raise ValueError(f"study.truth=true needs exact errors, which population {population.name!r} "
                         "cannot give for this learner; set study.truth=false.")
    learner = None if isinstance(population, ResidualPopulation) else build_learner(cfg.learner)
    if getattr(learner, "batched", False) and set(np.unique(getattr(population, "y", [0, 1]))) - {0, 1}:
        log.info("learner %s: the batched linear kernel needs binary labels; using scikit-learn", learner.name)
        learner = build_learner({**cfg.learner, "engine": "sklearn"})
    conditions = make_conditions(study.sizes, study.K, population)
    worker = CVVarianceWorker(population, learner, conditions, int(study.seed), bool(study.truth), options.on_error)
    learner_name = learner.name if learner is not None else "none"
    log.info("population %s, learner %s, %d condition(s) x %d replicates -> %s",
             population.name, learner_name, len(conditions), study.replicates, run_dir)
    report = run_phase(worker, [study.replicates] * len(conditions), run_dir, options, phase="replicates",
                       desc=f"{study.name} {population.name}",
                       reproduce=lambda c, row: f"study.sizes=[{conditions[c].n}]")
    records = report.records
    records.insert(0, "learner", learner_name)
    records.insert(0, "population", population.name)
    write_records(records, run_dir / "replicates.parquet")
    summary, tests, figures = write_reports(run_dir, study, records)
    manifest = {
        "population": population.describe(), "learner": learner.describe() if learner else None,
        **phase_manifest(report),
        "conditions": size_conditions_manifest(conditions, study.replicates, records, report),
    }
    return StudyOutput(summary, tests, records, figures, manifest)


def write_reports(run_dir: Path, study, records: pd.DataFrame | None = None):
    """Aggregate records (read from ``replicates.parquet`` when not given) and write
    ``summary.csv``, ``tests.csv``, ``summary.md``, ``table2.md`` and ``figures/``.

    Parameters
    ----------
    run_dir : Path
    study : mapping
        The ``study`` config node (alpha, rho_hats, mu_true, paper, replicates, name).
    records : DataFrame, optional

    Returns
    -------
    summary, tests : DataFrame
    figures : list of Path
    """
    from simstudy.report.figures import cv_variance_figures  # matplotlib: only when writing reports

    run_dir = Path(run_dir)
    records = load_records(run_dir, records)
    population, learner = records["population"].iloc[0], records["learner"].iloc[0]
    summary, tests = aggregate(records, study["alpha"], list(study["rho_hats"]), study["mu_true"])
    write_tables(run_dir, summary, tests, population=population, learner=learner)
    label = f"({population}, {learner}, {study['replicates']} replicates)"
    (run_dir / "table2.md").write_text(table2_markdown(summary, tests, study["paper"]))
    (run_dir / "summary.md").write_text(
        f"# {study['name']}: {label}\n\n## Summary per condition\n\n"
        + frame_to_markdown(summary) + "\n## t-tests per condition and rho_hat\n\n" + frame_to_markdown(tests))
    figures = cv_variance_figures(summary, tests, run_dir / "figures", study["alpha"], study["paper"], label)
    return summary, tests, figures
