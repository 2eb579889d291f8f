"""Aggregation of the nedelko_fisher study.

- :func:`rhat_table` / :func:`add_rhat`: R_hat = R_emp + b(R_emp) with b from
  :mod:`simstudy.inference.risk_bounds` (or, for the oracle methods, :func:`optimism_table`);
- :func:`aggregate`: per (N, R0, estimator) the mean estimate, bias, RMSE and every error
  function of Nedelko, with Monte Carlo errors;
- :func:`paired_delta0`: Delta0 of two estimates compared on the same samples (per-replicate
  differences: mean, standard error, z);
- :func:`tie_rule_sensitivity`: the same samples refitted under the other tie rules (paired
  differences of the true risk and of every estimate's bias and Delta0);
- :func:`winners_markdown`, :func:`sensitivity_markdown`: their Markdown tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from simstudy.inference.error_functions import ERROR_FUNCTIONS, delta0
from simstudy.inference.risk_bounds import ORACLE_METHODS, apply_rhat, effective_cells, rhat_bias_bound
from simstudy.report.tables import markdown_table
from simstudy.studies.metrics import mean_summary

__all__ = ["ESTIMATORS", "optimism_table", "rhat_table", "add_rhat", "aggregate", "paired_delta0",
           "tie_rule_sensitivity", "winners_markdown", "sensitivity_markdown", "successful"]

ESTIMATORS = ("loo", "kfold", "empirical", "rhat", "boot632", "boot632plus")


def successful(records: pd.DataFrame) -> pd.DataFrame:
    """The replicates that did not fail (failed ones are counted in the summary, not averaged)."""
    return records[records["error"] == ""] if "error" in records else records


# ----------------------------------------------------------------------------- R_hat
def optimism_table(calibration: pd.DataFrame, method: str = "oracle_mean_curve", min_count: int = 30) -> pd.DataFrame:
    """The oracle bias correction b(k / N), calibrated on the true model family at the true N.

    Kept for comparison with Nedelko's distribution-free correction (the study's default, see
    :mod:`simstudy.inference.risk_bounds`): it uses the distribution family the samples come
    from, which a user of R_hat does not have. The calibration records hold, for each family
    member R0 (``study.rhat_grid``), samples of the empirical and true risk of the
    full-sample rule.

    - ``"oracle_mean_curve"``: each member R0 has a mean empirical risk E[R_emp](R0) and a
      mean optimism E[R - R_emp](R0); b(r) is the optimism of the member whose mean empirical
      risk is r (linear interpolation along the curve sorted by E[R_emp], constant beyond its
      ends).
    - ``"oracle_conditional_max"``: the worst case given the observed value,
      b(k/N) = max over R0 of E[R - R_emp | R_emp = k/N, R0], over cells with at least
      ``min_count`` samples (a k without such a cell takes the nearest k's value).

    Returns
    -------
    DataFrame with columns sample_size, errors (k), empirical_risk (k/N), bias, method.
    """
    if method not in ORACLE_METHODS:
        raise ValueError(f"study.rhat_method={method!r}: the oracle calibrations are {ORACLE_METHODS}.")
    rows = []
    for N, g in calibration.groupby("sample_size"):
        g = g.assign(optimism=g["true_risk"] - g["empirical"])
        k_all = np.arange(N + 1)
        if method == "oracle_mean_curve":
            curve = g.groupby("bayes_error")[["empirical", "optimism"]].mean().sort_values("empirical")
            bias = np.interp(k_all / N, curve["empirical"].to_numpy(), curve["optimism"].to_numpy())
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


def rhat_table(sample_sizes, method: str, cells="growth", delta: float = 0.05,
               calibration: pd.DataFrame | None = None, min_count: int = 30) -> pd.DataFrame:
    """b(k / N) for k = 0..N and every N (``rhat_bias.csv``), whatever the method.

    ``calibration`` (the calibration phase's records) is needed by the oracle methods only.
    The ``detail`` column says what b is: the number of histogram cells n of
    ``nedelko_worst_case``, delta of ``vc_halfplane``, the calibration of the oracles.
    """
    if method in ORACLE_METHODS:
        table = optimism_table(calibration, method, min_count)
        members = calibration.groupby("sample_size")["bayes_error"].nunique()
        samples = calibration.groupby("sample_size").size()
        return table.assign(detail=[f"{members[N]} family members, {samples[N]} samples" for N in table["sample_size"]])
    frames = []
    for N in sorted({int(n) for n in sample_sizes}):
        k = np.arange(N + 1)
        detail = (f"n = {effective_cells(N, cells):.4g} cells ({cells})" if method == "nedelko_worst_case"
                  else f"delta = {delta:g}")
        frames.append(pd.DataFrame({"sample_size": N, "errors": k, "empirical_risk": k / N,
                                    "bias": rhat_bias_bound(k / N, N, method, cells=cells, delta=delta),
                                    "method": method, "detail": detail}))
    return pd.concat(frames, ignore_index=True)


def add_rhat(records: pd.DataFrame, table: pd.DataFrame, method: str, cells="growth", delta: float = 0.05) -> pd.Series:
    """R_hat = R_emp + b(R_emp), clipped to [0, 1] (b as in :func:`rhat_table`)."""
    values = apply_rhat(records["empirical"].to_numpy(), records["sample_size"].to_numpy(), method, cells=cells,
                        delta=delta, table=table if method in ORACLE_METHODS else None)
    return pd.Series(values, index=records.index)


# ----------------------------------------------------------------------------- summary
def aggregate(records: pd.DataFrame) -> pd.DataFrame:
    """One row per (N, R0, estimator): means, bias, RMSE and mean error functions with MC SEs."""
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"], sort=True):
        ok = successful(g)
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


def _delta0(frame: pd.DataFrame, estimate: str, truth: str = "true_risk") -> np.ndarray:
    """Per-replicate Delta0(estimate, truth), the estimate clipped to [0, 1] as in :func:`aggregate`."""
    return delta0(np.clip(frame[estimate].to_numpy(), 0, 1), frame[truth].to_numpy())


def _paired(diff: np.ndarray) -> dict[str, float]:
    """Mean of per-replicate differences, its standard error sd / sqrt(R), and z = mean / SE."""
    s = mean_summary(diff)
    z = s.mean / s.se if s.se and s.se > 0 else (0.0 if s.mean == 0 else np.nan)
    return {"mean_difference": s.mean, "se": s.se, "z": z}


def paired_delta0(records: pd.DataFrame) -> pd.DataFrame:
    """Delta0 of two estimates on the same samples: LOO - K-fold, and every other estimate minus
    LOO and minus K-fold. Per (N, R0, pair): the mean of the per-replicate differences
    Delta0(a, R) - Delta0(b, R), its standard error and z (negative: a is more accurate)."""
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"], sort=True):
        ok = successful(g)
        d0 = {est: _delta0(ok, est) for est in ESTIMATORS if est in ok}
        pairs = [("loo", "kfold")] + [(e, ref) for e in d0 if e not in ("loo", "kfold") for ref in ("loo", "kfold")]
        for a, b in pairs:
            rows.append({"sample_size": N, "bayes_error": r0, "estimator": a, "reference": b,
                         "replicates": len(ok), **_paired(d0[a] - d0[b])})
    return pd.DataFrame(rows)


def tie_rule_sensitivity(records: pd.DataFrame, tie_rule: str) -> pd.DataFrame:
    """The same samples under each other tie rule a, against the study's rule (paired).

    Per (N, R0, rule a): ``tied_samples`` (share of samples whose full-sample fit has several
    minimising thresholds), ``changed_samples`` (share whose full-sample true risk differs), and
    one row per quantity with the mean of the per-replicate differences (rule a minus the study's
    rule), its standard error and z:

    - ``true_risk``: R_a - R;
    - ``bias`` of each estimate e: (e_a - R_a) - (e - R);
    - ``delta0`` of each estimate e: Delta0(e_a, R_a) - Delta0(e, R).

    The empirical risk is the same under every rule (tied thresholds have equal training error),
    and so is R_hat (a function of it): their bias moves by -(R_a - R) only.
    """
    others = [c.split("__", 1)[1] for c in records.columns if c.startswith("true_risk__")]
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"], sort=True):
        ok = successful(g)
        for rule in others:
            base = {"sample_size": N, "bayes_error": r0, "rule": rule, "reference": tie_rule, "replicates": len(ok),
                    "tied_samples": float(np.mean(ok["minimisers"] > 1)),
                    "changed_samples": float(np.mean(ok[f"true_risk__{rule}"] != ok["true_risk"]))}
            risk, risk_a = ok["true_risk"].to_numpy(), ok[f"true_risk__{rule}"].to_numpy()
            rows.append({**base, "quantity": "true_risk", "estimator": "", **_paired(risk_a - risk)})
            alt = ok.assign(true_risk=risk_a, **{e: ok[f"{e}__{rule}"] for e in ESTIMATORS if f"{e}__{rule}" in ok})
            for est in ESTIMATORS:
                if est not in ok:
                    continue
                e, e_a = ok[est].to_numpy(), alt[est].to_numpy()
                rows.append({**base, "quantity": "bias", "estimator": est, **_paired((e_a - risk_a) - (e - risk))})
                rows.append({**base, "quantity": "delta0", "estimator": est,
                             **_paired(_delta0(alt, est) - _delta0(ok, est))})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Markdown
def winners_markdown(summary: pd.DataFrame, paired: pd.DataFrame) -> str:
    """Per R0 (one N): the estimate with the smallest mean Delta0, and the paired comparisons
    LOO - K-fold, R_hat - LOO and R_hat - K-fold of Delta0 on the same samples (SE, z)."""
    rows = []
    for r0, h in summary.groupby("bayes_error"):
        h = h.set_index("estimator")
        best = h["mean_delta0"].idxmin()  # estimators not computed are absent
        p = paired[paired["bayes_error"] == r0].set_index(["estimator", "reference"])
        lk = p.loc[("loo", "kfold")]
        row = [r0, best, float(h.loc[best, "mean_delta0"]), float(h.loc["loo", "mean_delta0"]),
               float(h.loc["kfold", "mean_delta0"]), float(lk["mean_difference"]), float(lk["se"]), float(lk["z"])]
        if "rhat" in h.index:
            rl, rk = p.loc[("rhat", "loo")], p.loc[("rhat", "kfold")]
            row += [float(h.loc["rhat", "mean_delta0"]), float(rl["mean_difference"]), float(rl["z"]),
                    float(rk["mean_difference"]), float(rk["z"])]
        rows.append(row)
    header = ["R0", "best (min mean Delta0)", "its mean Delta0", "LOO", "K-fold", "LOO - K-fold (paired)", "SE", "z"]
    if len(rows[0]) > len(header):
        header += ["R_hat", "R_hat - LOO", "z", "R_hat - K-fold", "z"]
    return markdown_table(header, rows)


def _with_se(mean: float, se: float) -> str:
    """"+6.09 (0.20)": a difference and its standard error, both x 1000."""
    return f"{1000 * mean:+.2f} ({1000 * se:.2f})"


def sensitivity_markdown(sensitivity: pd.DataFrame, quantity: str = "bias") -> str:
    """One N: per (R0, rule) the shares of tied and changed samples, the paired difference of
    the true risk, and of each estimate's ``quantity`` (bias or delta0), x 1000 with SEs."""
    true_risk = sensitivity[sensitivity["quantity"] == "true_risk"]
    est = sensitivity[sensitivity["quantity"] == quantity]
    names = list(dict.fromkeys(est["estimator"]))
    rows = []
    for (r0, rule), g in true_risk.groupby(["bayes_error", "rule"], sort=False):
        row = g.iloc[0]
        cells = est[(est["bayes_error"] == r0) & (est["rule"] == rule)].set_index("estimator")
        rows.append([r0, f"{rule} - {row['reference']}", float(row["tied_samples"]), float(row["changed_samples"]),
                     _with_se(row["mean_difference"], row["se"])]
                    + [_with_se(cells.loc[n, "mean_difference"], cells.loc[n, "se"]) for n in names])
    return markdown_table(["R0", "rule", "tied samples", "R changed", "true risk"] + [f"{quantity} {n}" for n in names],
                          rows)
