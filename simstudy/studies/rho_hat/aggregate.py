"""Aggregation of the rho_hat study: per n, the true rho and every procedure's size and power.

H0 is Grandvalet & Bengio's: mu = mu_true, the expected K-fold CV estimate at this n, taken as
the mean of mu_hat over the replicates (its Monte Carlo error, sd(mu_hat)/sqrt(R), moves each
statistic by at most 1/sqrt(R) standard deviations). Size is the rejection rate of the
two-sided level-alpha test of that H0. Power is the rejection rate of the false nulls
mu0 = mu_true -+ power_shift * sd(mu_hat) (both sides pooled, 2R trials): a shift in units of
the true standard deviation of mu_hat, so powers are comparable across n and populations (a
test that knew Var(mu_hat) would have power 51.6% at shift 2).

Nested CV targets Err_XY (the error of the model trained on all n points), not mu_true; its
interval is judged here on the same H0 as the others (how often it excludes mu_true), which
is the question a user asks of any interval around a CV estimate.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from simstudy.inference import (SubsampleCV, cv_t_test, nadeau_bengio_rho, subsample_rho, subsample_variance,
                                z_test)
from simstudy.studies.metrics import between_block_correlation, rejection_rate

__all__ = ["PROCEDURES", "aggregate", "procedure_tests", "goal_table"]

#: Procedures: name -> description (tables, README).
PROCEDURES = {
    "rho_hat=0": "usual K-fold t (eq. 9, rho_hat = 0)",
    "rho_hat=0.7": "Grandvalet-Bengio conservative t (rho_hat = 0.7)",
    "nadeau_bengio": "Nadeau-Bengio / Bouckaert-Frank corrected t (rho_hat = K/(2K-1))",
    "subsample_rho": "eq. 9 with rho_hat = rho(n/2) from CVs on B splits into disjoint halves (new)",
    "subsample_rho_satt": "the same, against t with Satterthwaite df for the noise of rho_hat (new)",
    "subsample_variance": "t with theta_hat(n) = theta_hat(n/2)/2 from the same halves, B df (new)",
    "cv_clt": "CV CLT, all-pairs variance (Bayle et al.)",
    "nested_cv": "nested CV (Bates, Hastie & Tibshirani), first replicates only",
    "oracle_rho": "eq. 9 with the true rho of this n (reference, not a procedure)",
}


def _stack(column: pd.Series) -> np.ndarray:
    return np.stack([np.asarray(v, dtype=float) for v in column])


def procedure_tests(group: pd.DataFrame, true_rho: float) -> dict[str, tuple[np.ndarray, Callable, np.ndarray]]:
    """Per procedure: (replicate mask, ``test(mu0) -> TestResult``, rho_hat per replicate or NaN)."""
    n, K = int(group["n"].iloc[0]), int(group["K"].iloc[0])
    fm = _stack(group["fold_means"])
    halves = (len(group), -1, 2)  # records hold each split's two halves one after the other
    sub = SubsampleCV(_stack(group["sub_mu_hats"]).reshape(halves), _stack(group["sub_theta3s"]).reshape(halves), n,
                      int(group["n_sub"].iloc[0]), K)
    every = np.ones(len(group), bool)
    none = np.full(len(group), np.nan)
    sr, sv, nb = subsample_rho(sub), subsample_variance(sub), nadeau_bengio_rho(K)
    ss = subsample_rho(sub, df="satterthwaite")
    mu_hat, se_clt = group["mu_hat"].to_numpy(), group["sigma_out"].to_numpy() / np.sqrt(n)
    nested = group["nested_estimate"].notna().to_numpy()
    ne, ns = group["nested_estimate"].to_numpy()[nested], group["nested_se"].to_numpy()[nested]
    oracle = float(np.clip(true_rho, 0.0, 0.99))
    return {
        "rho_hat=0": (every, lambda mu0: cv_t_test(fm, mu0, rho=0.0), np.zeros(len(group))),
        "rho_hat=0.7": (every, lambda mu0: cv_t_test(fm, mu0, rho=0.7), np.full(len(group), 0.7)),
        "nadeau_bengio": (every, lambda mu0: nb.test(fm, mu0), np.full(len(group), nb.rho)),
        "subsample_rho": (every, lambda mu0: sr.test(fm, mu0), np.asarray(sr.rho)),
        "subsample_rho_satt": (every, lambda mu0: ss.test(fm, mu0), np.asarray(ss.rho)),
        "subsample_variance": (every, lambda mu0: sv.test(fm, mu0), np.asarray(sv.rho)),
        "cv_clt": (every, lambda mu0: z_test(mu_hat, se_clt, mu0), none),
        "nested_cv": (nested, lambda mu0: z_test(ne, ns, mu0), none[nested]),
        "oracle_rho": (every, lambda mu0: cv_t_test(fm, mu0, rho=oracle), np.full(len(group), oracle)),
    }


def _rate(prefix: str, flags) -> dict[str, Any]:
    rate = rejection_rate(flags)
    return {prefix: rate.rate, f"{prefix}_low": rate.low, f"{prefix}_high": rate.high, f"{prefix}_count": rate.successes}


def aggregate(records: pd.DataFrame, alpha: float, power_shift: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary per n (mu_true, sd(mu_hat), rho with its se, mean subsample rho_hat) and tests per
    (n, procedure): size, power (Wilson intervals), mean interval width, mean and sd of rho_hat."""
    ok = records[records["error"].fillna("") == ""]
    summary, tests = [], []
    for n, group in ok.groupby("n", sort=True):
        K = int(group["K"].iloc[0])
        fm = _stack(group["fold_means"])
        theta3 = np.sum((fm - fm.mean(axis=1, keepdims=True)) ** 2, axis=1) / (K * (K - 1))
        mu_true, sd = float(group["mu_hat"].mean()), float(group["mu_hat"].std(ddof=1))
        rho = between_block_correlation(group["mu_hat"], theta3)
        procs = procedure_tests(group, rho.value)
        summary.append({"n": int(n), "K": K, "n_sub": int(group["n_sub"].iloc[0]), "replicates": len(group),
                        "failed": int(len(records[records["n"] == n]) - len(group)), "mu_true": mu_true,
                        "sd_mu_hat": sd, "rho": rho.value, "rho_se": rho.se,
                        "subsample_rho_mean": float(np.mean(procs["subsample_rho"][2])),
                        "subsample_rho_median": float(np.median(procs["subsample_rho"][2]))})
        for name, (mask, test, rho_hat) in procs.items():
            if not mask.any():
                continue
            null = test(mu_true)
            size = np.asarray(null.pvalue) < alpha
            shifted = [np.asarray(test(mu_true + s * power_shift * sd).pvalue) < alpha for s in (-1, 1)]
            ci = null.confidence_interval(1 - alpha)
            tests.append({"n": int(n), "procedure": name, "alpha": alpha, "replicates": int(mask.sum()),
                          **_rate("size", size), **_rate("power", np.concatenate(shifted)),
                          "mean_width": float(np.mean(np.asarray(ci.high) - np.asarray(ci.low))),
                          "rho_hat_mean": float(np.mean(rho_hat)), "rho_hat_sd": float(np.std(rho_hat))})
    return pd.DataFrame(summary), pd.DataFrame(tests)


def goal_table(tests: pd.DataFrame, alpha: float, reference: str = "rho_hat=0.7") -> pd.DataFrame:
    """Per procedure: the worst |size - alpha| over n (points), whether size stays within alpha +- 1
    point at every n, and the smallest power gain over ``reference`` where that has power < 80%."""
    ref = tests[tests["procedure"] == reference].set_index("n")
    rows = []
    for proc, g in tests.groupby("procedure", sort=False):
        g = g.set_index("n")
        dev = 100 * (g["size"] - alpha)
        weak = [n for n in g.index if n in ref.index and ref.loc[n, "power"] < 0.8]
        gain = 100 * (g.loc[weak, "power"] - ref.loc[weak, "power"]) if weak else pd.Series(dtype=float)
        rows.append({"procedure": proc, "worst_size_error_points": float(dev.abs().max()),
                     "size_min_%": float(100 * g["size"].min()), "size_max_%": float(100 * g["size"].max()),
                     "size_within_1_point": bool((dev.abs() <= 1).all()),
                     "min_power_gain_points": float(gain.min()) if len(gain) else np.nan,
                     "power_gain_>=10": bool((gain >= 10).all()) if len(gain) else True})
    return pd.DataFrame(rows)
