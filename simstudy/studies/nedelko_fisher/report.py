"""summary.md of the nedelko_fisher study: the tables of :mod:`.aggregate` with what they mean."""
from __future__ import annotations

import pandas as pd

from simstudy.report.tables import frame_to_markdown, with_error
from simstudy.studies.base import StudyTables
from simstudy.studies.nedelko_fisher.aggregate import sensitivity_markdown, winners_markdown

__all__ = ["summary_markdown", "summary_table", "rhat_findings", "TIE_RULE_DESCRIPTIONS", "RHAT_DESCRIPTIONS"]

#: What each tie rule does (manifest and summary.md).
TIE_RULE_DESCRIPTIONS = {
    "random": "a uniformly random minimiser (one U[0,1) per fit, drawn after the sample, folds and bootstrap counts)",
    "midpoint": "the finite minimiser closest to Fisher's midpoint w.(m1 + m0)/2",
    "first": "the smallest minimiser",
    "last": "the largest minimiser",
}

#: What each R_hat method is (manifest, summary.md); see simstudy.inference.risk_bounds.
RHAT_DESCRIPTIONS = {
    "nedelko_worst_case": "R_emp + the maximal mean bias of the empirical risk of a histogram classifier over all "
                          "distributions (proven for histograms; carried to Fisher's discriminant by matching "
                          "capacity, a heuristic)",
    "vc_halfplane": "R_emp + a VC relative-deviation bound for half-planes (rigorous, vacuous at these N)",
    "oracle_mean_curve": "R_emp + the mean optimism calibrated on the true model family at the true N (oracle)",
    "oracle_conditional_max": "R_emp + the largest conditional mean optimism on the true model family (oracle)",
}

#: Columns of the summary shown with their errors: (column, its SE column, title).
_WITH_ERRORS = (("mean_true_risk", "mean_true_risk_se", "mean true risk"),
                ("mean_estimate", "mean_estimate_se", "mean estimate"), ("bias", "bias_se", "bias"),
                ("rmse", "rmse_se", "RMSE"), ("mean_delta0", "mean_delta0_se", "mean Delta0"))
_Z = 1.96


def _values(r0s) -> str:
    return ", ".join(f"{r:g}" for r in r0s) if len(r0s) else "none"


def rhat_findings(summary: pd.DataFrame, paired: pd.DataFrame) -> str:
    """Where R_hat stands at one N, in words: the R0 where it has the smallest mean Delta0 of all
    estimates, and where it is more / less accurate than both LOO and K-fold (paired |z| > 1.96)."""
    wide = summary.pivot(index="bayes_error", columns="estimator", values="mean_delta0")
    best = wide.idxmin(axis=1)
    p = paired[paired["estimator"] == "rhat"].pivot(index="bayes_error", columns="reference", values="z")
    better = p[(p["loo"] < -_Z) & (p["kfold"] < -_Z)].index
    worse = p[(p["loo"] > _Z) & (p["kfold"] > _Z)].index
    return (f"R_hat has the smallest mean Delta0 of all estimates at R0 = {_values(best[best == 'rhat'].index)} "
            f"({(best == 'rhat').sum()} of {len(best)}). On the same samples it is more accurate than both LOO and "
            f"K-fold (paired z < -{_Z}) at R0 = {_values(better)}, less accurate than both (z > {_Z}) at "
            f"R0 = {_values(worse)}.")


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary a reader sees: per (N, R0, estimator) every mean ± 1.96 Monte Carlo SE (x 1000)."""
    out = summary[["sample_size", "bayes_error", "estimator", "replicates"]].rename(
        columns={"sample_size": "N", "bayes_error": "R0"}).reset_index(drop=True)
    for column, se, title in _WITH_ERRORS:
        out[f"{title} x 1000"] = [with_error(m, e, 1000, 2) for m, e in zip(summary[column], summary[se])]
    return out


def summary_markdown(tables: StudyTables, config) -> str:
    """The study's summary.md (tables per N; every column with its SE is in the CSV files)."""
    summary, extra = tables.summary, tables.extra
    sensitivity = extra.get("tie_rule_sensitivity")
    md = [f"# Nedelko: risk estimates for Fisher's discriminant ({config.replicates} samples per point)\n",
          f"Fisher's direction with the threshold minimising the empirical risk; among thresholds with equal "
          f"training error (tie rule `{config.tie_rule}`): {TIE_RULE_DESCRIPTIONS[config.tie_rule]}. "
          f"R_hat (`{config.rhat_method}`): {RHAT_DESCRIPTIONS[config.rhat_method]}; its correction b(k/N) is in "
          "rhat_bias.csv.\n",
          "Mean true risk, mean estimate, bias, RMSE and mean Delta0 per (N, R0, estimator); all columns with "
          "standard errors are in summary.csv. Paired comparisons: means over samples of per-sample differences of "
          "Delta0 (the same samples), SE = sd / sqrt(R), z = mean / SE; negative means the first estimate is more "
          "accurate (paired_delta0.csv has every estimate against LOO and K-fold).\n"]
    for N, g in summary.groupby("sample_size"):
        paired = extra["paired_delta0"]
        paired = paired[paired["sample_size"] == N]
        md += [f"\n## N = {N}\n", "± is 1.96 Monte Carlo standard errors (95%), as in the figures.\n",
               frame_to_markdown(summary_table(g)),
               "\n### Most accurate estimate, and paired comparisons of Delta0\n", winners_markdown(g, paired),
               rhat_findings(g, paired) + "\n"]
        if sensitivity is not None:
            s = sensitivity[sensitivity["sample_size"] == N]
            md += ["\n### Sensitivity to the tie rule\n",
                   f"The same samples refitted under each other rule; differences (that rule minus "
                   f"`{config.tie_rule}`) of the true risk of the full-sample rule and of each estimate's bias, "
                   "x 1000, SE in parentheses. `tied samples`: share of samples whose full-sample fit has several "
                   "minimising thresholds; `R changed`: share whose true risk changes. Delta0 differences are in "
                   "tie_rule_sensitivity.csv.\n", sensitivity_markdown(s, "bias")]
    return "\n".join(md)
