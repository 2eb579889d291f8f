"""Bayle, Bayle, Janson & Mackey (2020): calibration of CV intervals and tests for test error.

Per replicate (a training set of size n drawn from a finite population) and per learner:

- K-fold CV: per-point 0-1 losses e_i, the CV estimate R_hat, the all-pairs and within-fold
  standard deviations, the K fold means, the hold-out statistics of fold 1 (the model trained on
  the other K-1 folds, tested on fold 1), and the exact population error of each fold model:
  the target R_n = (1/K) sum_k Err(f_{-k}) (Bayle et al.'s k-fold test error);
- the exact error of the model trained on all n points, Err_XY (the target of nested CV);
- Dietterich's 5x2 design (5 random halvings, 10 fits), J repeated train/validation splits
  with n_test = n/K (the design of the repeated and Nadeau-Bengio corrected t);
- nested CV (Bates, Hastie & Tibshirani 2023) on the first ``nested_cv_replicates`` replicates.

For a comparison "A vs B", the same statistics are computed on the loss differences
e_i(A) - e_i(B) of the two learners on the same splits, with target R_n(A) - R_n(B). When A and
B are the same learner, B is fitted with an independent random stream (e.g. the tree's random
tie-breaking), so the pair has equal expected error by construction: the tests' size.

Aggregation (``aggregate``): for every interval procedure, coverage of R_n and of Err_XY and
the mean width; for every one-sided test of H1 "A better than B" (R_n < 0), the rejection
rate overall, among replicates with R_n >= 0 (size) and with R_n < 0 (power), all with Wilson
intervals. Intervals and tests are rebuilt from the stored per-replicate statistics, so
``simstudy-report --alpha`` can re-aggregate at another level.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from simstudy.inference import (
    corrected_resampled_t_test, cv_clt_sigma, cv_t_interval, cv_t_test, five_by_two_interval, nested_cv_interval,
    normal_interval, paired_t_test_5x2cv, resampled_t_interval, z_test,
)
from simstudy.learners.cart import warm_up  # noqa: F401  loads the tree kernels in a fresh worker
from simstudy.learners.indexed import build_sample_fitter
from simstudy.learners.sklearn import fit_context
from simstudy.metrics import rejection_rate
from simstudy.populations import Population, build_population
from simstudy.records import write_records
from simstudy.report import frame_to_markdown
from simstudy.rng import condition_key, replicate_rng
from simstudy.runner import Chunk
from simstudy.schemes import KFold, five_by_two_splits, nested_cv_losses, train_validation_splits
from simstudy.studies.base import (
    RunnerOptions, SizeCondition, StudyOutput, load_records, phase_manifest, run_phase, size_conditions,
    size_conditions_manifest, write_tables,
)

__all__ = ["Condition", "CVCLTWorker", "INTERVALS", "TESTS", "aggregate", "execute", "make_conditions",
           "write_reports"]

log = logging.getLogger("simstudy")

#: Interval procedures: name -> description (README / tables).
INTERVALS = {
    "cv_clt_all_pairs": "CV CLT, all-pairs variance (Bayle et al.)",
    "cv_clt_within_fold": "CV CLT, within-fold variance (Bayle et al.)",
    "holdout_clt": "hold-out CLT on fold 1",
    "cv_t": "CV t (fold means, t with K-1 df)",
    "cv_t_rho0.7": "Grandvalet-Bengio conservative t (rho_hat = 0.7)",
    "5x2cv_t": "Dietterich 5x2cv t",
    "repeated_tv_t": "repeated train/validation t (uncorrected)",
    "nadeau_bengio": "Nadeau-Bengio corrected repeated train/validation t",
    "nested_cv": "nested CV (Bates, Hastie & Tibshirani)",
}
#: One-sided tests of "A better than B" (nested CV is an interval for one learner only).
TESTS = [name for name in INTERVALS if name != "nested_cv"]


#: One (n, K) cell of the design (see :class:`~simstudy.studies.base.SizeCondition`).
Condition = SizeCondition


def make_conditions(sizes: Sequence[int], K: int, population: Population) -> list[Condition]:
    """Conditions keyed by (cv_clt, n, K, population): learners share samples and splits."""
    return size_conditions("cv_clt", sizes, K, population)


def _self_pair(a: str, b: str) -> bool:
    return a == b


def comparison_label(a: str, b: str) -> str:
    return f"{a} vs {b} (independent seed)" if _self_pair(a, b) else f"{a} vs {b}"


@dataclass
class _Fits:
    """Everything one learner variant produced on one replicate."""

    cv_losses: np.ndarray        # (n,) losses in sample order
    fold_truth: np.ndarray       # (K,)
    full_truth: float
    five_by_two: np.ndarray      # (5, 2) error rates
    tv_rates: np.ndarray         # (J,)
    nested: tuple[float, float]  # (estimate, se) or NaNs


@dataclass
class CVCLTWorker:
    """Runs the replicates of one chunk for all learners (picklable: sent to joblib workers)."""

    population: Population
    fitters: dict[str, Any]
    conditions: list[Condition]
    comparisons: list[tuple[str, str]]
    seed: int
    repeated_splits: int
    nested_cv_replicates: int
    nested_cv_repetitions: int
    on_error: str = "record"

    def _variants(self) -> list[tuple[str, int]]:
        """(learner, copy): copy 1 is the independent-seed twin used by self-comparisons."""
        out = [(name, 0) for name in self.fitters]
        out += [(a, 1) for a, b in self.comparisons if _self_pair(a, b) and (a, 1) not in out]
        return out

    def _fit_all(self, fitter, sample, labels, halves, tv_test, cond: Condition, r: int, fit_rng, nested: bool):
        n, K, m = cond.n, cond.K, cond.m
        state = fitter.start(sample)
        everyone = np.arange(n)
        losses = np.empty(n)
        models = []
        for k in range(K):
            test = labels == k
            model = fitter.fit(state, everyone[~test], fit_rng)
            losses[test] = fitter.losses(state, model, everyone[test])
            models.append(model)
        full = fitter.fit(state, everyone, fit_rng)
        truth = fitter.population_errors(models + [full])
        fbt = np.empty((5, 2))
        for i in range(5):
            for j, train in enumerate((halves[i], ~halves[i])):
                model = fitter.fit(state, everyone[train], fit_rng)
                fbt[i, j] = fitter.losses(state, model, everyone[~train]).mean()
        tv = np.empty(len(tv_test))
        for j, test in enumerate(tv_test):
            model = fitter.fit(state, everyone[~test], fit_rng)
            tv[j] = fitter.losses(state, model, everyone[test]).mean()
        nested_stats = (np.nan, np.nan)
        if nested:
            def loss_fn(train, test):
                return fitter.losses(state, fitter.fit(state, train, fit_rng), test)
            order = np.argsort(labels, kind="stable")
            res = nested_cv_interval(*_nested_arrays(nested_cv_losses(
                loss_fn, n, K, self.nested_cv_repetitions, replicate_rng(self.seed, condition_key({"condition": cond.key, "nested_cv": True}), r),
                first_labels=labels, first_outer_losses=losses[order].reshape(K, m))))
            nested_stats = (res.estimate, res.se)
        return _Fits(losses, truth[:K], float(truth[K]), fbt, tv, nested_stats)

    def replicate(self, cond: Condition, r: int) -> list[dict[str, Any]]:
        """One row per learner and per comparison."""
        n, K, m = cond.n, cond.K, cond.m
        rng = replicate_rng(self.seed, cond.key, r)            # sample and splits: shared by learners
        sample = self.population.sample(n, rng)
        labels = KFold(K).labels(n, rng)
        halves = five_by_two_splits(n, rng)
        tv_test = train_validation_splits(n, m, self.repeated_splits, rng)
        fits = {}
        for name, copy in self._variants():
            fit_rng = replicate_rng(self.seed, condition_key({"condition": cond.key, "learner": name,
                                                             "copy": copy}), r)
            nested = copy == 0 and r < self.nested_cv_replicates
            fits[name, copy] = self._fit_all(self.fitters[name], sample, labels, halves, tv_test, cond, r,
                                            fit_rng, nested)
        rows = []
        for name in self.fitters:
            f = fits[name, 0]
            rows.append(_row(name, "learner", f.cv_losses, labels, K, f.fold_truth.mean(), f.full_truth,
                             f.five_by_two, f.tv_rates, f.nested))
        for a, b in self.comparisons:
            fa, fb = fits[a, 0], fits[b, 1 if _self_pair(a, b) else 0]
            rows.append(_row(comparison_label(a, b), "comparison", fa.cv_losses - fb.cv_losses, labels, K,
                             fa.fold_truth.mean() - fb.fold_truth.mean(), fa.full_truth - fb.full_truth,
                             fa.five_by_two - fb.five_by_two, fa.tv_rates - fb.tv_rates, (np.nan, np.nan)))
        return rows

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        subjects = list(self.fitters) + [comparison_label(a, b) for a, b in self.comparisons]
        frames = []
        with fit_context(getattr(f, "learner", None) for f in self.fitters.values()):
            for r in range(chunk.start, chunk.stop):
                try:
                    rows = self.replicate(cond, r)
                    for row in rows:
                        row["error"] = ""
                except Exception as exc:  # recorded, never dropped; see runner.on_error
                    if self.on_error == "raise":
                        raise
                    rows = [{"subject": s, "kind": "learner" if s in self.fitters else "comparison",
                             "error": f"{type(exc).__name__}: {exc}"} for s in subjects]
                for row in rows:
                    row.update({"n": cond.n, "K": cond.K, "condition_key": cond.key, "replicate": r})
                frames.extend(rows)
        frame = pd.DataFrame(frames)
        front = ["n", "K", "condition_key", "replicate", "subject", "kind"]
        return frame[front + [c for c in frame.columns if c not in front]]


def _nested_arrays(losses):
    return losses.pair_losses, losses.outer_losses


def _row(subject, kind, e, labels, K, target, target_full, fbt, tv, nested) -> dict[str, Any]:
    """Per-replicate statistics from which every interval and test is rebuilt."""
    estimate, sigma_out = cv_clt_sigma(e, labels, "all-pairs")
    _, sigma_in = cv_clt_sigma(e, labels, "within-fold")
    fold_means = np.array([e[labels == k].mean() for k in range(K)])
    hold = e[labels == 0]
    return {"subject": subject, "kind": kind, "estimate": float(estimate), "sigma_out": float(sigma_out),
            "sigma_in": float(sigma_in), "fold_means": fold_means, "holdout_mean": float(hold.mean()),
            "holdout_se": float(hold.std(ddof=1) / np.sqrt(hold.size)), "five_by_two": fbt.ravel(),
            "tv_estimates": np.asarray(tv, dtype=float), "target": float(target), "target_full": float(target_full),
            "nested_estimate": float(nested[0]), "nested_se": float(nested[1])}


# ----------------------------------------------------------------------------- aggregation
def _stack(column: pd.Series) -> np.ndarray:
    return np.stack([np.asarray(v, dtype=float) for v in column])


def procedure_intervals(group: pd.DataFrame, alpha: float) -> dict[str, Any]:
    """Every interval procedure for the replicates of one (n, subject) group."""
    n, K = int(group["n"].iloc[0]), int(group["K"].iloc[0])
    m = n // K
    fm, tv = _stack(group["fold_means"]), _stack(group["tv_estimates"])
    out = {
        "cv_clt_all_pairs": normal_interval(group["estimate"], group["sigma_out"] / np.sqrt(n), alpha),
        "cv_clt_within_fold": normal_interval(group["estimate"], group["sigma_in"] / np.sqrt(n), alpha),
        "holdout_clt": normal_interval(group["holdout_mean"], group["holdout_se"], alpha),
        "cv_t": cv_t_interval(fm, alpha),
        "cv_t_rho0.7": cv_t_interval(fm, alpha, rho=0.7),
        "5x2cv_t": five_by_two_interval(_stack(group["five_by_two"]).reshape(-1, 5, 2), alpha),
        "repeated_tv_t": resampled_t_interval(tv, n - m, m, alpha, corrected=False),
        "nadeau_bengio": resampled_t_interval(tv, n - m, m, alpha, corrected=True),
    }
    nested = group["nested_estimate"].notna().to_numpy()
    if nested.any():
        out["nested_cv"] = (nested, normal_interval(group["nested_estimate"][nested], group["nested_se"][nested],
                                                    alpha))
    return out


def procedure_pvalues(group: pd.DataFrame) -> dict[str, np.ndarray]:
    """One-sided p-values of H1 "A better than B" (mean loss difference < 0) for every test."""
    n, K = int(group["n"].iloc[0]), int(group["K"].iloc[0])
    m = n // K
    fm, tv = _stack(group["fold_means"]), _stack(group["tv_estimates"])
    return {
        "cv_clt_all_pairs": z_test(group["estimate"], group["sigma_out"] / np.sqrt(n), "less").pvalue,
        "cv_clt_within_fold": z_test(group["estimate"], group["sigma_in"] / np.sqrt(n), "less").pvalue,
        "holdout_clt": z_test(group["holdout_mean"], group["holdout_se"], "less").pvalue,
        "cv_t": cv_t_test(fm, alternative="less").pvalue,
        "cv_t_rho0.7": cv_t_test(fm, rho=0.7, alternative="less").pvalue,
        "5x2cv_t": paired_t_test_5x2cv(_stack(group["five_by_two"]).reshape(-1, 5, 2), "less").pvalue,
        "repeated_tv_t": corrected_resampled_t_test(tv, n - m, m, "less", corrected=False).pvalue,
        "nadeau_bengio": corrected_resampled_t_test(tv, n - m, m, "less", corrected=True).pvalue,
    }


def _rate_columns(prefix: str, flags) -> dict[str, Any]:
    rate = rejection_rate(flags)
    return {f"{prefix}": rate.rate, f"{prefix}_low": rate.low, f"{prefix}_high": rate.high,
            f"{prefix}_count": rate.successes}


def aggregate(records: pd.DataFrame, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Coverage/width per (n, subject, procedure) and size/power per (n, comparison, test).

    Returns
    -------
    summary : DataFrame
        Interval rows: ``coverage`` of R_n (Wilson ``coverage_low``/``coverage_high``),
        ``coverage_full`` of Err_XY, ``mean_width``, ``median_width``, ``replicates``.
    tests : DataFrame
        Test rows: ``rejection_rate`` overall, ``size`` among replicates with R_n >= 0 and
        ``power`` among replicates with R_n < 0, with Wilson intervals and counts.
    """
    ok = records[records["error"].fillna("") == ""]
    summary, tests = [], []
    for (n, subject), group in ok.groupby(["n", "subject"], sort=True):
        kind = group["kind"].iloc[0]
        target, full = group["target"].to_numpy(), group["target_full"].to_numpy()
        for proc, ci in procedure_intervals(group, alpha).items():
            mask = np.ones(len(group), bool)
            if isinstance(ci, tuple):
                mask, ci = ci
            low, high = np.asarray(ci.low), np.asarray(ci.high)
            t, tf = target[mask], full[mask]
            summary.append({"n": int(n), "subject": subject, "kind": kind, "procedure": proc, "alpha": alpha,
                            "replicates": int(mask.sum()),
                            **_rate_columns("coverage", (low <= t) & (t <= high)),
                            **_rate_columns("coverage_full", (low <= tf) & (tf <= high)),
                            "mean_width": float(np.mean(high - low)), "median_width": float(np.median(high - low)),
                            "mean_target": float(t.mean()), "sd_target": float(t.std(ddof=1)) if t.size > 1 else np.nan})
        if kind != "comparison":
            continue
        h0 = target >= 0
        for proc, p in procedure_pvalues(group).items():
            reject = np.asarray(p) < alpha
            tests.append({"n": int(n), "comparison": subject, "test": proc, "alpha": alpha,
                          "replicates": len(group), "h0_replicates": int(h0.sum()), "h1_replicates": int((~h0).sum()),
                          **_rate_columns("rejection_rate", reject),
                          **_rate_columns("size", reject[h0]), **_rate_columns("power", reject[~h0]),
                          "mean_target": float(target.mean())})
    return pd.DataFrame(summary), pd.DataFrame(tests)


# ----------------------------------------------------------------------------- run-engine hooks
def execute(cfg, run_dir: Path, options: RunnerOptions) -> StudyOutput:
    """Run the cv_clt study for a validated config and write its outputs to ``run_dir``."""
    study = cfg.study
    population = build_population(cfg.population)
    if not population.has_exact_error or not hasattr(population, "y"):
        raise ValueError(f"study=cv_clt needs a finite population with exact errors; population "
                         f"{population.name!r} is not one. Use population=letter (or another tabular population).")
    fitters = {name: build_sample_fitter(name, spec, population) for name, spec in study.learners.items()}
    for fitter in fitters.values():
        if hasattr(fitter, "knn"):
            fitter.knn.build_index()           # once, in this process; workers memory-map the cache
    comparisons = [(str(a), str(b)) for a, b in study.comparisons]
    conditions = make_conditions(study.sizes, study.K, population)
    worker = CVCLTWorker(population, fitters, conditions, comparisons, int(study.seed), int(study.repeated_splits),
                         int(study.nested_cv_replicates), int(study.nested_cv_repetitions), options.on_error)
    log.info("population %s, learners %s, %d size(s) x %d replicates -> %s", population.name,
             ", ".join(fitters), len(conditions), study.replicates, run_dir)
    report = run_phase(worker, [study.replicates] * len(conditions), run_dir, options, phase="replicates",
                       desc=f"cv_clt {population.name}", reproduce=lambda c, row: f"study.sizes=[{conditions[c].n}]")
    records = report.records
    records.insert(0, "population", population.name)
    write_records(records, run_dir / "replicates.parquet")
    summary, tests, figures = write_reports(run_dir, study, records)
    manifest = {
        "population": population.describe(), "learners": {k: f.describe() for k, f in fitters.items()},
        "comparisons": [comparison_label(a, b) for a, b in comparisons], **phase_manifest(report),
        "conditions": size_conditions_manifest(conditions, study.replicates, records, report),
    }
    return StudyOutput(summary, tests, records, figures, manifest)


def _coverage_table(summary: pd.DataFrame, column: str) -> pd.DataFrame:
    table = summary.pivot_table(index=["subject", "procedure"], columns="n", values=column, sort=False)
    table = (100 * table).round(1)
    table.columns = [f"n={c}" for c in table.columns]
    return table.reset_index()


def write_reports(run_dir: Path, study, records: pd.DataFrame | None = None):
    """Aggregate records (read from ``replicates.parquet`` when not given) and write
    ``summary.csv`` (intervals), ``tests.csv``, ``summary.md`` and ``figures/``.

    Returns
    -------
    summary, tests : DataFrame
    figures : list of Path
    """
    run_dir = Path(run_dir)
    records = load_records(run_dir, records)
    alpha = float(study["alpha"])
    summary, tests = aggregate(records, alpha)
    population = records["population"].iloc[0]
    write_tables(run_dir, summary, tests, population=population)
    learners = summary[summary["kind"] == "learner"]
    lines = [f"# CV intervals and tests for test error ({population}, K = {int(records['K'].iloc[0])}, "
             f"alpha = {alpha})", "",
             "Coverage (%) of the k-fold test error R_n (nominal "
             f"{100 * (1 - alpha):g}%); Wilson intervals in summary.csv.", "",
             frame_to_markdown(_coverage_table(learners, "coverage")), "",
             "Coverage (%) of Err_XY, the error of the model trained on all n points (nested CV's target):", "",
             frame_to_markdown(_coverage_table(learners, "coverage_full")), "",
             "Mean width (percentage points):", "",
             frame_to_markdown(_coverage_table(learners, "mean_width")), ""]
    if len(tests):
        for column, title in (("size", "Size (%): rejection rate among replicates with R_n(A) - R_n(B) >= 0"),
                              ("power", "Power (%): rejection rate among replicates with R_n(A) - R_n(B) < 0"),
                              ("rejection_rate", "Rejection rate (%) over all replicates")):
            table = tests.pivot_table(index=["comparison", "test"], columns="n", values=column, sort=False)
            table = (100 * table).round(1)
            table.columns = [f"n={c}" for c in table.columns]
            lines += [f"{title} of the one-sided level-{alpha:g} tests of \"A better than B\":", "",
                      frame_to_markdown(table.reset_index()), ""]
    (run_dir / "summary.md").write_text("\n".join(lines))
    from simstudy.report.clt_figures import cv_clt_figures  # matplotlib: only when writing reports

    figures = cv_clt_figures(summary, tests, run_dir / "figures", alpha)
    return summary, tests, figures
