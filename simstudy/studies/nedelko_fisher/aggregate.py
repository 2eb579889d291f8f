"""Aggregation of the nedelko_fisher study: R_hat's bias correction, and per (N, R0, estimator)
the mean estimate, bias, RMSE and every error function of Nedelko, with Monte Carlo errors."""
from __future__ import annotations

import numpy as np
import pandas as pd

from simstudy.inference.error_functions import ERROR_FUNCTIONS
from simstudy.metrics import mean_summary
from simstudy.report.tables import markdown_table
from simstudy.studies.nedelko_fisher.config import RHAT_METHODS

__all__ = ["ESTIMATORS", "optimism_table", "apply_rhat", "aggregate", "winners_markdown"]

ESTIMATORS = ("loo", "kfold", "empirical", "rhat", "boot632", "boot632plus")


def optimism_table(calibration: pd.DataFrame, method: str = "mean_curve", min_count: int = 30) -> pd.DataFrame:
    """The bias correction b(k / N) that R_hat = R_emp + b(R_emp) adds to the empirical risk.

    Nedelko's R_hat adds to the empirical risk "an estimate of its maximal bias" (his refs.
    6-7, not available). Two documented versions, both calibrated by simulation over the
    distribution family (the logistic model over ``rhat_grid``) at the same N:

    - ``"mean_curve"`` (default): each family member R0 has a mean empirical risk
      E[R_emp](R0) and a mean optimism E[R - R_emp](R0); b(r) is the optimism of the member
      whose mean empirical risk is r (linear interpolation along the curve sorted by E[R_emp],
      constant beyond its ends).
    - ``"conditional_max"``: the worst case given the observed value,
      b(k/N) = max over R0 of E[R - R_emp | R_emp = k/N, R0], over cells with at least
      ``min_count`` samples (a k without such a cell takes the nearest k's value). This is an
      upper-bound style correction: it is large at small R_emp, where rare samples from noisy
      members of the family dominate.

    Returns
    -------
    DataFrame with columns sample_size, errors (k), empirical_risk (k/N), bias, method.
    """
    if method not in RHAT_METHODS:
        raise ValueError(f"study.rhat_method={method!r}: use one of {RHAT_METHODS}.")
    rows = []
    for N, g in calibration.groupby("sample_size"):
        g = g.assign(optimism=g["true_risk"] - g["empirical"])
        k_all = np.arange(N + 1)
        if method == "mean_curve":
            curve = g.groupby("bayes_error")[["empirical", "optimism"]].mean().sort_values("empirical")
            # upper envelope where several members share a mean empirical risk
            x, yv = curve["empirical"].to_numpy(), curve["optimism"].to_numpy()
            bias = np.interp(k_all / N, x, yv)
        else:
            k = np.rint(g["empirical"] * N).astype(int)
            cells = (g.assign(k=k).groupby(["k", "bayes_error"])["optimism"].agg(["mean", "count"]).reset_index())
            cells = cells[cells["count"] >= min_count]
            best = cells.groupby("k")["mean"].max()
            known = best.index.to_numpy()
            bias = np.array([best.loc[known[np.argmin(np.abs(known - kk))]] for kk in k_all])
        rows += [{"sample_size": N, "errors": int(kk), "empirical_risk": kk / N, "bias": float(b), "method": method}
                 for kk, b in zip(k_all, bias)]
    return pd.DataFrame(rows)


def apply_rhat(records: pd.DataFrame, table: pd.DataFrame) -> pd.Series:
    """R_hat = R_emp + b(R_emp), clipped to [0, 1]."""
    lookup = {(int(r.sample_size), int(r.errors)): r.bias for r in table.itertuples()}
    k = np.rint(records["empirical"] * records["sample_size"]).astype(int)
    bias = [lookup[(int(N), int(kk))] for N, kk in zip(records["sample_size"], k)]
    return np.clip(records["empirical"] + np.asarray(bias), 0.0, 1.0)


def aggregate(records: pd.DataFrame) -> pd.DataFrame:
    """One row per (N, R0, estimator): means, bias, RMSE and mean error functions with MC SEs."""
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"], sort=True):
        ok = g[g["error"] == ""]
        truth = ok["true_risk"].to_numpy()
        tr = mean_summary(truth)
        for est in ESTIMATORS:
            if est not in ok:
                continue
            e = ok[est].to_numpy()
            diff = mean_summary(e - truth)
            sq = mean_summary((e - truth) ** 2)
            row = {"sample_size": N, "bayes_error": r0, "estimator": est, "replicates": len(ok),
                   "failed": len(g) - len(ok), "mean_estimate": e.mean(), "mean_estimate_se": mean_summary(e).se,
                   "mean_true_risk": tr.mean, "mean_true_risk_se": tr.se, "bias": diff.mean, "bias_se": diff.se,
                   "rmse": np.sqrt(sq.mean), "rmse_se": sq.se / (2 * np.sqrt(sq.mean)) if sq.mean > 0 else np.nan}
            for name, fn in ERROR_FUNCTIONS.items():
                d = fn(np.clip(e, 0, 1), truth)
                finite = np.isfinite(d)
                row[f"mean_{name}"] = d.mean() if finite.all() else np.inf
                row[f"mean_{name}_se"] = mean_summary(d).se if finite.all() else np.nan
                row[f"infinite_{name}"] = int((~finite).sum())
            rows.append(row)
    return pd.DataFrame(rows)


def winners_markdown(g: pd.DataFrame) -> str:
    """Which estimator has the smallest mean Delta0 at each R0 (with LOO vs K-fold side by side)."""
    rows = []
    for r0, h in g.groupby("bayes_error"):
        h = h.set_index("estimator")
        best = h["mean_delta0"].idxmin()  # estimators not computed are absent
        loo, kf = h.loc["loo"], h.loc["kfold"]
        z = (loo["mean_delta0"] - kf["mean_delta0"]) / np.hypot(loo["mean_delta0_se"], kf["mean_delta0_se"])
        rows.append([r0, best, float(h.loc[best, "mean_delta0"]), float(loo["mean_delta0"]),
                     float(kf["mean_delta0"]), float(z)])
    return markdown_table(["R0", "best (min mean Delta0)", "its mean Delta0", "LOO", "K-fold",
                           "z(LOO - K-fold), unpaired"], rows)
