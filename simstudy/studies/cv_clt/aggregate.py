"""Aggregation of the cv_clt study: coverage and width of every interval procedure, size and
power of every one-sided test, per training-set size and subject.

Intervals and tests are rebuilt from the per-replicate statistics (:mod:`.worker`), so a run
can be re-aggregated at another level without recomputation.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from simstudy.inference import cv_t_test, five_by_two_t_test, resampled_t_test, z_test
from simstudy.studies.metrics import rejection_rate, variance_ratio

__all__ = ["INTERVALS", "OWN_TARGET", "TESTS", "aggregate", "procedure_intervals", "procedure_pvalues",
           "own_target_table", "loss_stability", "rate_table", "width_table", "zero_variance"]

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
#: The error each interval is an interval for, when it is not R_n: the hold-out interval's is
#: the exact error of the one model it tests (trained without fold 1; ``target_holdout``),
#: nested CV's the error of the model trained on all n points (Err_XY, ``target_full``).
OWN_TARGET = {"holdout_clt": "Err_holdout", "nested_cv": "Err_XY"}
_COVERAGE_OF = {"R_n": "coverage", "Err_holdout": "coverage_holdout", "Err_XY": "coverage_full"}
#: One-sided tests of "A better than B" (nested CV is an interval for one learner only).
TESTS = [name for name in INTERVALS if name != "nested_cv"]


def _stack(column: pd.Series) -> np.ndarray:
    return np.stack([np.asarray(v, dtype=float) for v in column])


def _procedure_tests(group: pd.DataFrame, alternative: str) -> dict[str, Any]:
    """Every procedure's test of H0: mean = 0 for the replicates of one (n, subject) group.

    Each result gives its p-values and, by ``.confidence_interval(level)``, the matching
    interval; intervals are not clipped to the loss's bounds (see :func:`aggregate`).
    """
    n, K = int(group["n"].iloc[0]), int(group["K"].iloc[0])
    # the repeated train/validation splits test on n // K points whatever n (the worker draws
    # them with RepeatedSplits(n // K, ...)); K-fold folds may differ by one point
    n_test = n // K
    fm, tv = _stack(group["fold_means"]), _stack(group["tv_estimates"])
    return {
        "cv_clt_all_pairs": z_test(group["estimate"], group["sigma_out"] / np.sqrt(n), alternative=alternative),
        "cv_clt_within_fold": z_test(group["estimate"], group["sigma_in"] / np.sqrt(n), alternative=alternative),
        "holdout_clt": z_test(group["holdout_mean"], group["holdout_se"], alternative=alternative),
        "cv_t": cv_t_test(fm, alternative=alternative),
        "cv_t_rho0.7": cv_t_test(fm, rho=0.7, alternative=alternative),
        "5x2cv_t": five_by_two_t_test(_stack(group["five_by_two"]).reshape(-1, 5, 2), alternative=alternative),
        "repeated_tv_t": resampled_t_test(tv, n - n_test, n_test, correction=None, alternative=alternative),
        "nadeau_bengio": resampled_t_test(tv, n - n_test, n_test, correction="nadeau-bengio", alternative=alternative),
    }


def procedure_intervals(group: pd.DataFrame, alpha: float) -> dict[str, Any]:
    """Every interval procedure (two-sided, level 1 - alpha) for the replicates of one (n, subject) group."""
    return {name: (mask, test.confidence_interval(1 - alpha)) if mask is not None
            else test.confidence_interval(1 - alpha) for name, (mask, test) in _interval_tests(group).items()}


def _interval_tests(group: pd.DataFrame) -> dict[str, tuple[np.ndarray | None, Any]]:
    """The two-sided test behind every interval, with the replicates it covers (None: all)."""
    out: dict[str, tuple[np.ndarray | None, Any]] = {
        name: (None, test) for name, test in _procedure_tests(group, "two-sided").items()}
    nested = group["nested_estimate"].notna().to_numpy()
    if nested.any():
        out["nested_cv"] = (nested, z_test(group["nested_estimate"][nested], group["nested_se"][nested]))
    return out


def zero_variance(test) -> np.ndarray:
    """Degenerate replicates of a procedure: its standard error is 0 (every loss, fold mean or
    split estimate equal, as with a 0-1 loss at small n or a constant learner). The statistic is
    then +-inf (the test rejects at every level) and the interval a point (it misses the target
    unless the estimate equals it), whatever the procedure's variance model."""
    return np.asarray(test.se, dtype=float) == 0


def procedure_pvalues(group: pd.DataFrame) -> dict[str, np.ndarray]:
    """One-sided p-values of H1 "A better than B" (mean loss difference < 0) for every test."""
    return {name: test.pvalue for name, test in _procedure_tests(group, "less").items()}


def _rate_columns(prefix: str, flags) -> dict[str, Any]:
    rate = rejection_rate(flags)
    return {f"{prefix}": rate.rate, f"{prefix}_low": rate.low, f"{prefix}_high": rate.high,
            f"{prefix}_count": rate.successes}


def _se(values: np.ndarray) -> float:
    """Monte Carlo standard error of a mean, sd / sqrt(R)."""
    return float(np.std(values, ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")


def aggregate(records: pd.DataFrame, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Coverage/width per (n, subject, procedure) and size/power per (n, comparison, test).

    Returns
    -------
    summary : DataFrame
        Interval rows: ``coverage`` of R_n (Wilson ``coverage_low``/``coverage_high``) for every
        procedure, ``coverage_full`` of Err_XY, ``coverage_holdout`` of Err_holdout (the exact
        error of the model trained without fold 1; NaN for records without it),
        ``own_target`` (the error the procedure is an interval for: ``R_n``, ``Err_holdout``
        for ``holdout_clt``, ``Err_XY`` for ``nested_cv``), ``mean_width`` (and its Monte Carlo
        SE ``width_se``), ``median_width``, ``replicates``; ``zero_variance``, the degenerate
        replicates (a point interval, :func:`zero_variance`) and ``zero_variance_covered``, those
        of them that cover R_n.
    tests : DataFrame
        Test rows: ``rejection_rate`` overall, ``size`` among replicates with R_n >= 0 and
        ``power`` among replicates with R_n < 0, with Wilson intervals and counts;
        ``zero_variance_h0``, the degenerate H0 replicates, and ``zero_variance_size``, those of
        them that reject (part of ``size_count``).
    """
    # Intervals are not clipped to the loss's bounds, so widths are those of the procedures as
    # published. Clipping could not change a coverage count: the target (an error rate, or a
    # difference of two) lies inside the bounds, and for a point t in [b_low, b_high],
    # low <= t <= high holds exactly when max(low, b_low) <= t <= min(high, b_high).
    ok = records[records["error"].fillna("") == ""]
    summary, tests = [], []
    for (n, subject), group in ok.groupby(["n", "subject"], sort=True):
        kind = group["kind"].iloc[0]
        target, full = group["target"].to_numpy(), group["target_full"].to_numpy()
        held = group["target_holdout"].to_numpy() if "target_holdout" in group else np.full(len(group), np.nan)
        for proc, (mask, test) in _interval_tests(group).items():
            mask = np.ones(len(group), bool) if mask is None else mask
            ci = test.confidence_interval(1 - alpha)
            low, high = np.asarray(ci.low), np.asarray(ci.high)
            t, tf, th = target[mask], full[mask], held[mask]
            known = np.isfinite(th)
            covered = (low <= t) & (t <= high)
            zero = np.broadcast_to(zero_variance(test), covered.shape)
            summary.append({"n": int(n), "subject": subject, "kind": kind, "procedure": proc, "alpha": alpha,
                            "replicates": int(mask.sum()), "own_target": OWN_TARGET.get(proc, "R_n"),
                            **_rate_columns("coverage", covered),
                            **_rate_columns("coverage_full", (low <= tf) & (tf <= high)),
                            **_rate_columns("coverage_holdout", ((low <= th) & (th <= high))[known]),
                            "mean_width": float(np.mean(high - low)), "width_se": _se(high - low),
                            "median_width": float(np.median(high - low)),
                            "mean_target": float(t.mean()), "sd_target": float(t.std(ddof=1)) if t.size > 1 else np.nan,
                            # Monte Carlo error of the truth (a fixed evaluation sample), when it is not exact
                            **({"target_mc_se": float(group["target_mc_se"].mean())}
                               if "target_mc_se" in group else {}),
                            "zero_variance": int(zero.sum()), "zero_variance_covered": int((zero & covered).sum())})
        if kind != "comparison":
            continue
        h0 = target >= 0
        for proc, test in _procedure_tests(group, "less").items():
            reject = np.asarray(test.pvalue) < alpha
            zero = np.broadcast_to(zero_variance(test), reject.shape)
            tests.append({"n": int(n), "comparison": subject, "test": proc, "alpha": alpha,
                          "replicates": len(group), "h0_replicates": int(h0.sum()), "h1_replicates": int((~h0).sum()),
                          **_rate_columns("rejection_rate", reject),
                          **_rate_columns("size", reject[h0]), **_rate_columns("power", reject[~h0]),
                          "mean_target": float(target.mean()),
                          "zero_variance_h0": int(zero[h0].sum()), "zero_variance_size": int((zero & reject)[h0].sum())})
    return pd.DataFrame(summary), pd.DataFrame(tests)


def own_target_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Coverage of each procedure's own target (``own_target``) as ``"rate [low, high] (count/trials)"``
    cells (percent, 95% Wilson): one row per (subject, procedure), the target named in the
    ``target`` column, one column per n."""
    from simstudy.report.tables import rate_with_interval

    cells = []
    for _, row in summary.iterrows():
        column = _COVERAGE_OF[row["own_target"]]
        cells.append(rate_with_interval(row[f"{column}_count"], row["replicates"], row[f"{column}_low"],
                                        row[f"{column}_high"]))
    frame = summary.assign(cell=cells).rename(columns={"own_target": "target"})
    table = frame.pivot(index=["subject", "procedure", "target"], columns="n", values="cell")
    table = table.reindex(list(dict.fromkeys(zip(frame["subject"], frame["procedure"], frame["target"]))))
    table.columns = [f"n={c}" for c in table.columns]
    return table.reset_index()


def rate_table(frame: pd.DataFrame, column: str, procedure: str = "procedure") -> pd.DataFrame:
    """A rate column as a table of strings ``"rate [low, high] (count/trials)"`` (percent, 95% Wilson):
    one row per (subject, procedure), one column per n. Trials: ``replicates`` for coverage,
    ``h0_replicates`` / ``h1_replicates`` for size / power."""
    from simstudy.report.tables import rate_with_interval

    trials = {"size": "h0_replicates", "power": "h1_replicates"}.get(column, "replicates")
    subject = "comparison" if "comparison" in frame else "subject"
    cells = frame.assign(cell=[rate_with_interval(k, r, lo, hi) for k, r, lo, hi in
                               zip(frame[f"{column}_count"], frame[trials], frame[f"{column}_low"],
                                   frame[f"{column}_high"])])
    table = cells.pivot(index=[subject, procedure], columns="n", values="cell")
    table = table.reindex(list(dict.fromkeys(zip(frame[subject], frame[procedure]))))
    table.columns = [f"n={c}" for c in table.columns]
    return table.reset_index()


def loss_stability(records: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """n Var(R_hat - R_n) / E[sigma_hat^2] per (n, subject), for both CV CLT variance estimates.

    Bayle et al.'s CV CLT holds when the loss is stable enough; then sqrt(n)(R_hat - R_n) has
    variance sigma_n^2 and sigma_hat^2 / sigma_n^2 -> 1, so the ratio is 1. A ratio r > 1 means
    the interval R_hat +- z sigma_hat / sqrt(n) is too narrow by a factor sqrt(r): under a
    normal R_hat - R_n its coverage is about 2 Phi(z / sqrt(r)) - 1 (``normal_coverage``, which
    ignores the variability of sigma_hat). Monte Carlo standard errors by the delta method
    (:func:`simstudy.studies.metrics.variance_ratio`); the rows also give the mean of R_hat - R_n (0 in
    expectation: each fold's held-out losses are unbiased for its model's error).
    """
    from simstudy.inference.distributions import norm_cdf, norm_ppf

    ok = records[records["error"].fillna("") == ""]
    z = float(norm_ppf(1 - alpha / 2))
    rows = []
    for (n, subject), group in ok.groupby(["n", "subject"], sort=True):
        diff = (group["estimate"] - group["target"]).to_numpy()
        row = {"n": int(n), "subject": subject, "kind": group["kind"].iloc[0], "replicates": len(group),
               "mean_diff": float(diff.mean()), "var_diff": float(diff.var(ddof=1))}
        for name, column in (("out", "sigma_out"), ("in", "sigma_in")):
            sigma2 = group[column].to_numpy() ** 2
            ratio = variance_ratio(diff, sigma2, scale=float(n))
            row.update({f"mean_sigma2_{name}": float(sigma2.mean()), f"ratio_{name}": ratio.value,
                        f"ratio_{name}_se": ratio.se,
                        f"normal_coverage_{name}": float(2 * norm_cdf(z / np.sqrt(ratio.value)) - 1)})
        rows.append(row)
    return pd.DataFrame(rows)


def width_table(summary: pd.DataFrame, scale: float = 100) -> pd.DataFrame:
    """Mean interval widths ± 1.96 Monte Carlo SE, one column per n: in percentage points
    (``scale`` 100, error rates) or in loss units (``scale`` 1)."""
    from simstudy.report.tables import with_error

    decimals = 2 if scale == 100 else 4
    cells = summary.assign(cell=[with_error(w, s, scale, decimals)
                                 for w, s in zip(summary["mean_width"], summary["width_se"])])
    table = cells.pivot(index=["subject", "procedure"], columns="n", values="cell")
    table = table.reindex(list(dict.fromkeys(zip(summary["subject"], summary["procedure"]))))
    table.columns = [f"n={c}" for c in table.columns]
    return table.reset_index()
