"""Aggregation of the cv_variance study: per condition (n, K) and per rho_hat.

Per condition: mu (the H0 value), theta = Var(mu_hat), rho = 1 - E[theta3] / theta (section 5
of the paper) with its delta-method standard error, the relative bias of theta1..theta5 (with
delta-method standard errors), and the
rejection rate of the two-sided t-test of eq. 9 of H0: mu = mu_true for every rho_hat
(Wilson intervals).

A replicate whose fold means are all equal has theta3 = 0: its t statistic is infinite when
mu_hat != mu_true and it counts as a rejection (with mu_true a Monte Carlo mean, mu_hat ==
mu_true exactly does not happen in practice; if it does, t = 0 and it does not reject).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from simstudy.inference import cv_t_test, zero_spread
from simstudy.studies.cv_variance.worker import THETAS
from simstudy.studies.metrics import between_block_correlation, mean_summary, rejection_rate

__all__ = ["aggregate"]


def _variance_se(values) -> float:
    """Standard error of the sample variance s^2 of R values: sqrt((m4 - s^4) / R) (delta method,
    m4 the fourth central moment)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 4:
        return float("nan")
    c = v - v.mean()
    return float(np.sqrt(max(np.mean(c ** 4) - np.var(v, ddof=1) ** 2, 0.0) / v.size))


def _mu_true(group: pd.DataFrame, mode: str) -> tuple[float, str]:
    if mode == "exact" or (mode == "auto" and "true_error" in group):
        return float(group["true_error"].mean()), "exact"
    return float(group["mu_hat"].mean()), "mean_cv"


def _mu_fold_mean(cells: Callable[[str], Iterable[np.ndarray]], source: str) -> float:
    """H0 value of the CV t-test with unequal folds: the t-test estimates the *unweighted* mean
    of the fold means, whose expectation is the unweighted mean of the fold models' risks (not
    the size-weighted mean that mu_hat estimates)."""
    column = "fold_true_errors" if source == "exact" else "fold_means"
    means = [np.mean(v) for block in cells(column) for v in block]
    return float(np.mean(means)) if means else np.nan


#: The columns of a replicate's record that hold one number (the rest are the fold arrays, labels, keys).
_SCALARS = ("mu_hat", *THETAS, "true_error", "true_error_mc_se")


def _conditions(records: Any):
    """Per condition, in the order of the records: (n, K), the frame of its records without an error
    (the number columns), the count of those with one, and ``cells(column)``: the array cells of
    ``column`` of the records without an error, as 2-D blocks.

    Records on disk (:class:`~simstudy.engine.stored.StoredRecords`) are read a condition and a few
    columns at a time: the fold arrays a chunk at a time, never all at once."""
    if not isinstance(records, pd.DataFrame):  # StoredRecords (the engine's layer: not imported here)
        present = set(records.columns)
        scalars = [c for c in _SCALARS if c in present]
        for condition in records.conditions():
            n, K = records.first(condition, ["n", "K"])
            g, failed = records.scalar_block(condition, scalars)
            yield (n, K), g, failed, partial(records.array_pieces, condition)
        return
    keys = records[["n", "K"]].drop_duplicates()
    # a frame of one condition is used as it is (a group of a groupby is a copy of its rows)
    groups = [((keys["n"].iloc[0], keys["K"].iloc[0]), records)] if len(keys) == 1 else \
        records.groupby(["n", "K"], sort=False)
    for (n, K), g_all in groups:
        ok = (g_all["error"] == "").to_numpy()
        g = g_all if ok.all() else g_all[ok]  # a selection copies every column; all rows need none
        yield (n, K), g, int((~ok).sum()), partial(_frame_cells, g)


def _frame_cells(g: pd.DataFrame, column: str) -> Iterator[np.ndarray]:
    if len(g):
        yield np.stack(g[column].to_numpy())


def aggregate(records: pd.DataFrame, alpha: float, rho_hats: Sequence[float],
              mu_true: str = "auto") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summaries per condition and rejection rates per (condition, rho_hat).

    Parameters
    ----------
    records : DataFrame or StoredRecords
        One row per replicate as produced by :class:`CVVarianceWorker` (in memory or in the run's shards).
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
    for (n, K), g, failed, cells in _conditions(records):
        mu, source = _mu_true(g, mu_true)
        theta = float(g["mu_hat"].var(ddof=1))
        rho = between_block_correlation(g["mu_hat"], g["theta3"])
        mh = mean_summary(g["mu_hat"])
        equal = n % K == 0
        row: dict[str, Any] = {
            # m: examples per fold (the mean fold size n/K when folds have floor/ceil(n/K) examples)
            "n": n, "K": K, "m": n // K if equal else n / K, "replicates": len(g), "failed": failed,
            "mu": mu, "mu_source": source, "mu_hat_mean": mh.mean, "mu_hat_se": mh.se,
        }
        if "true_error" in g:
            te = mean_summary(g["true_error"])
            if "true_error_mc_se" in g:    # the truth is a Monte Carlo value (fixed evaluation sample)
                row["true_error_mc_se"] = float(g["true_error_mc_se"].mean())
            row.update(true_error_mean=te.mean, true_error_se=te.se,
                       # E[mu_hat] = E[true error] exactly (test points are fresh draws): a check
                       cv_minus_true_z=(mh.mean - te.mean) / np.sqrt(
                           np.var(g["mu_hat"] - g["true_error"], ddof=1) / len(g)))
        # spread of mu_hat (and of the true error) across training sets: the learning curve's bands
        row.update(mu_hat_sd=float(np.sqrt(theta)) if theta >= 0 else np.nan,
                   mu_hat_q05=float(g["mu_hat"].quantile(0.05)) if len(g) else np.nan,
                   mu_hat_q95=float(g["mu_hat"].quantile(0.95)) if len(g) else np.nan)
        if "true_error" in g and len(g):
            row.update(true_error_q05=float(g["true_error"].quantile(0.05)),
                       true_error_q95=float(g["true_error"].quantile(0.95)))
        mu_t = mu if equal else _mu_fold_mean(cells, source)
        zero, rejected = _fold_tests(cells, mu_t, alpha, rho_hats)
        row.update(theta=theta, theta_se=_variance_se(g["mu_hat"]), rho=rho.value, rho_se=rho.se, theta3_zero=zero)
        for name in THETAS:
            ms = mean_summary(g[name])
            row[f"mean_{name}"] = ms.mean
            row[f"rel_bias_{name}"] = ms.mean / theta - 1 if theta > 0 else np.nan
            # E[theta_j] / Var(mu_hat) - 1 is minus a ratio of the rho form: the same delta method
            row[f"rel_bias_{name}_se"] = between_block_correlation(g["mu_hat"], g[name]).se if theta > 0 else np.nan
        summaries.append(row)
        for rho_hat, reject in zip(rho_hats, rejected):
            rate = rejection_rate(reject)
            tests.append({"n": n, "K": K, "test": "cv_t", "rho_hat": float(rho_hat), "alpha": alpha,
                          "rejections": rate.successes, "replicates": rate.trials,
                          "rejection_rate": rate.rate, "ci_low": rate.low, "ci_high": rate.high})
    return pd.DataFrame(summaries), pd.DataFrame(tests)


def _fold_tests(cells: Callable[[str], Iterable[np.ndarray]], mu_t: float, alpha: float,
                rho_hats: Sequence[float]) -> tuple[int, list[np.ndarray]]:
    """From the fold means (a block of replicates at a time): the count of replicates with zero
    spread (theta3 = 0) and, per rho_hat, whether the t-test of eq. 9 rejects H0: mu = mu_t."""
    zero, rejected = 0, [[] for _ in rho_hats]
    for fold_means in cells("fold_means"):
        zero += int(zero_spread(fold_means).sum())
        for i, rho_hat in enumerate(rho_hats):
            rejected[i].append(np.asarray(cv_t_test(fold_means, mu0=mu_t, rho=rho_hat).pvalue) < alpha)
    return zero, [np.concatenate(r) if r else np.array([], dtype=bool) for r in rejected]
