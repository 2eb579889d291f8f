"""Nedelko's R_hat without the oracle: Delta0 against LOO, 5-fold and the empirical risk.

Records are the study's samples (:mod:`simstudy.analyses.fisher_replicates`) fitted with a
given tie rule (default ``"random"``, the study's new default): per sample the exact true
risk R of the full-sample rule, its empirical risk, leave-one-out and 5-fold estimates.
R_hat columns come from :func:`simstudy.inference.risk_bounds.apply_rhat`:

- ``rhat_worst_case``: ``nedelko_worst_case`` with ``cells="growth"`` (the new default);
- ``rhat_worst_case_vc3``: the same with n = 3 cells (VC-dimension match; not an upper bound);
- ``rhat_vc_halfplane``: the rigorous VC bound (delta = 0.05), vacuous at N = 20;
- ``rhat_oracle``: the study's former correction (``mean_curve`` calibrated on the true
  family at the true N, with the same tie rule), for comparison.

Each estimate Rb is scored by Delta0(Rb, R); the table gives mean Delta0 per (R0, estimator)
with its Monte Carlo standard error and the paired difference to LOO (same samples).

:func:`bound_checks` tests the two upper-bound claims by simulation (module
:mod:`simstudy.inference.risk_bounds`): the VC bound per sample (violation rate <= delta,
one-sided binomial test) and the worst-case bias in the mean (E[R - R_emp] <= B_n(E[R_emp]),
one-sided z-test), on the logistic family and on distributions outside it.

Run ``python -m simstudy.analyses.nedelko_rhat [out_dir] [replicates]``.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from simstudy.analyses.fisher_replicates import (
    draw_replicates, fit_estimates, logistic_replicates, logistic_risk,
)
from simstudy.analyses.outside_populations import OUTSIDE_POPULATIONS, Component, GaussianClassesPopulation
from simstudy.inference.error_functions import delta0
from simstudy.inference.risk_bounds import apply_rhat, rhat_bias_bound
from simstudy.metrics import mean_summary
from simstudy.report.tables import frame_to_markdown
from simstudy.rng import condition_key

__all__ = ["fisher_records", "oracle_table", "add_rhat_columns", "delta0_comparison", "winners", "bound_checks",
           "worst_case_curves", "write_checks", "main"]

BAYES_GRID = (0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.48)
RHAT_GRID = tuple(round(0.01 + 0.02 * i, 2) for i in range(25))   # the study's default rhat_grid
ESTIMATES = ("loo", "kfold", "empirical", "rhat_worst_case", "rhat_worst_case_vc3", "rhat_vc_halfplane",
             "rhat_oracle")


def fisher_records(N: int, bayes_errors: Sequence[float], replicates: int, seed: int = 2013,
                   tie_rule: str = "random", K: int = 5) -> pd.DataFrame:
    """One row per sample: true risk, empirical, LOO and K-fold estimates (the study's samples)."""
    frames = []
    for r0 in bayes_errors:
        rep = logistic_replicates(N, r0, seed, range(replicates), K=K, B=50, tie_rule=tie_rule)
        est = fit_estimates(rep, tie_rule, logistic_risk(r0))
        frames.append(pd.DataFrame({"sample_size": N, "bayes_error": r0, "replicate": np.arange(replicates),
                                    "true_risk": est.true_risk, "empirical": est.empirical, "loo": est.loo,
                                    "kfold": est.kfold}))
    return pd.concat(frames, ignore_index=True)


def oracle_table(N: int, replicates: int = 4000, seed: int = 2013, tie_rule: str = "random",
                 grid: Sequence[float] = RHAT_GRID) -> pd.DataFrame:
    """The study's oracle calibration (``mean_curve`` on the true family), with ``tie_rule``."""
    from simstudy.studies.nedelko_fisher.aggregate import optimism_table

    frames = []
    for r0 in grid:
        rep = logistic_replicates(N, r0, seed, range(replicates), K=0, B=0, tie_rule=tie_rule,
                                  purpose="rhat_calibration", fits=1)
        est = fit_estimates(rep, tie_rule, logistic_risk(r0), loo=False)
        frames.append(pd.DataFrame({"sample_size": N, "bayes_error": r0, "empirical": est.empirical,
                                    "true_risk": est.true_risk}))
    return optimism_table(pd.concat(frames, ignore_index=True), "mean_curve")


def add_rhat_columns(records: pd.DataFrame, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Records with the R_hat columns of the module docstring."""
    out = records.copy()
    emp, N = out["empirical"].to_numpy(), out["sample_size"].to_numpy()
    out["rhat_worst_case"] = apply_rhat(emp, N, "nedelko_worst_case", cells="growth")
    out["rhat_worst_case_vc3"] = apply_rhat(emp, N, "nedelko_worst_case", cells="vc_dimension")
    out["rhat_vc_halfplane"] = apply_rhat(emp, N, "vc_halfplane", delta=0.05)
    if table is not None:
        out["rhat_oracle"] = apply_rhat(emp, N, "oracle_mean_curve", table=table)
    return out


def delta0_comparison(records: pd.DataFrame, estimates: Sequence[str] = ESTIMATES) -> pd.DataFrame:
    """Mean Delta0 per (N, R0, estimate) with SEs, and paired differences to LOO."""
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"]):
        truth = g["true_risk"].to_numpy()
        d_loo = delta0(np.clip(g["loo"].to_numpy(), 0, 1), truth)
        for name in estimates:
            if name not in g:
                continue
            e = g[name].to_numpy()
            d = delta0(np.clip(e, 0, 1), truth)
            s, diff = mean_summary(d), mean_summary(d - d_loo)
            rows.append({"sample_size": N, "bayes_error": r0, "estimate": name, "mean_true_risk": truth.mean(),
                         "mean_estimate": e.mean(), "bias": e.mean() - truth.mean(),
                         "mean_delta0": s.mean, "mean_delta0_se": s.se,
                         "delta0_minus_loo": diff.mean, "delta0_minus_loo_se": diff.se})
    return pd.DataFrame(rows)


def winners(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per (N, R0): mean Delta0 of each estimate side by side, and the smallest one."""
    wide = comparison.pivot_table(index=["sample_size", "bayes_error"], columns="estimate", values="mean_delta0")
    wide = wide[[c for c in ESTIMATES if c in wide]]
    wide["best"] = wide.idxmin(axis=1)
    return wide.reset_index()


# ----------------------------------------------------------------------------- bound checks
@dataclass(frozen=True)
class CheckPopulation:
    """A distribution for the bound checks: sampler and exact risk of linear rules."""

    label: str
    population: object
    risk: object
    key: str


def check_populations(bayes_errors: Sequence[float] = (0.05, 0.2, 0.4, 0.48)) -> list[CheckPopulation]:
    """The logistic family at a few R0, the two outside distributions and unbalanced pure noise."""
    from simstudy.populations.synthetic import LogisticPopulation

    out = [CheckPopulation(f"logistic R0={r0}", LogisticPopulation(r0), logistic_risk(r0),
                           condition_key({"check": "logistic", "bayes_error": r0})) for r0 in bayes_errors]
    noise = GaussianClassesPopulation("noise_0.3", 0.3, (Component(1.0, (0.0, 0.0)),), (Component(1.0, (0.0, 0.0)),))
    for pop in (*OUTSIDE_POPULATIONS.values(), noise):
        out.append(CheckPopulation(pop.label, pop, pop.risk, condition_key({"check": pop.label})))
    return out


def _vc_check(est, N: int, delta: float) -> dict:
    """Violations of R <= R_emp + b_vc and the one-sided binomial test of rate <= delta."""
    b = rhat_bias_bound(est.empirical, N, "vc_halfplane", delta=delta)
    violations, n = int(np.sum(est.true_risk > est.empirical + b)), len(est.true_risk)
    return {"claim": f"P(R > R_emp + b_vc) <= {delta}", "statistic": violations / n, "bound": float(np.mean(b)),
            "mean_empirical": float(est.empirical.mean()),
            "p_value": float(stats.binomtest(violations, n, delta, alternative="greater").pvalue)}


def _worst_case_check(est, N: int) -> dict:
    """E[R - R_emp] <= B_n(E[R_emp]): one-sided z-test with a delta-method SE."""
    emp, opt = est.empirical, est.true_risk - est.empirical
    r_bar = emp.mean()
    bound = float(rhat_bias_bound(r_bar, N))
    lo, hi = max(r_bar - 1e-3, 0.0), r_bar + 1e-3
    slope = float((rhat_bias_bound(hi, N) - rhat_bias_bound(lo, N)) / (hi - lo))   # B'(r_bar), for the SE
    se = mean_summary(opt - slope * emp).se
    z = (opt.mean() - bound) / se
    return {"claim": "E[R - R_emp] <= B(E[R_emp])", "statistic": opt.mean(), "bound": bound,
            "mean_empirical": r_bar, "z": z, "p_value": float(stats.norm.sf(z))}


def bound_checks(replicates: int = 4000, seed: int = 2013, sizes_vc: Sequence[int] = (20, 200),
                 sizes_wc: Sequence[int] = (20,), tie_rule: str = "random") -> pd.DataFrame:
    """Simulation checks of both upper-bound claims (module docstring); one row per check."""
    rows = []
    for cp in check_populations():
        for N in sorted(set(sizes_vc) | set(sizes_wc)):
            rep = draw_replicates(cp.population, N, condition_key({"key": cp.key, "N": N}), seed, range(replicates),
                                  K=0, B=0, tie_rule=tie_rule, fits=1)
            est = fit_estimates(rep, tie_rule, cp.risk, loo=False)
            base = {"population": cp.label, "sample_size": N, "replicates": replicates}
            if N in sizes_vc:
                rows.append({**base, "method": "vc_halfplane", **_vc_check(est, N, 0.05)})
            if N in sizes_wc:
                rows.append({**base, "method": "nedelko_worst_case", **_worst_case_check(est, N)})
    return pd.DataFrame(rows)


def worst_case_curves(N: int, r: Sequence[float] = tuple(np.round(np.arange(0, 0.51, 0.025), 3))) -> pd.DataFrame:
    """b(r) of each distribution-free method at sample size N, for the report."""
    r = np.asarray(r, float)
    return pd.DataFrame({"sample_size": N, "empirical_risk": r,
                         "worst_case_growth": rhat_bias_bound(r, N, cells="growth"),
                         "worst_case_vc3": rhat_bias_bound(r, N, cells="vc_dimension"),
                         "vc_halfplane": rhat_bias_bound(r, N, "vc_halfplane")})


def write_checks(out: Path) -> pd.DataFrame:
    """Run :func:`bound_checks` and write ``rhat_checks.{csv,md}`` and ``rhat_curves.csv``."""
    checks = bound_checks()
    checks.to_csv(out / "rhat_checks.csv", index=False)
    (out / "rhat_checks.md").write_text("# Simulation checks of the R_hat upper-bound claims\n\n"
                                        "vc_halfplane: share of samples with R > R_emp + b (statistic), mean b (bound), "
                                        "one-sided binomial p-value of rate <= 0.05. nedelko_worst_case: mean optimism "
                                        "(statistic) against B(mean R_emp) (bound), one-sided z-test.\n\n"
                                        + frame_to_markdown(checks))
    pd.concat([worst_case_curves(N) for N in (20, 30, 50)]).to_csv(out / "rhat_curves.csv", index=False)
    return checks


def main(argv: Sequence[str] | None = None) -> None:
    """Write ``rhat_delta0.{csv,md}`` and ``rhat_checks.{csv,md}`` to ``argv[0]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Path(argv[0] if argv else "results/nedelko_referee")
    replicates = int(argv[1]) if len(argv) > 1 else 10_000
    out.mkdir(parents=True, exist_ok=True)
    N = 20
    records = add_rhat_columns(fisher_records(N, BAYES_GRID, replicates), oracle_table(N))
    comparison = delta0_comparison(records)
    comparison.to_csv(out / "rhat_delta0.csv", index=False)
    write_checks(out)
    md = [f"# Nedelko's R_hat without the oracle (N = {N}, {replicates} samples per R0, tie rule random)\n",
          "Mean Delta0 per estimate (SEs and paired differences to LOO in rhat_delta0.csv):\n",
          frame_to_markdown(winners(comparison)),
          "\nBias (mean estimate - mean true risk):\n",
          frame_to_markdown(comparison.pivot_table(index="bayes_error", columns="estimate", values="bias").reset_index()),
          "\nPaired difference of mean Delta0 to LOO (negative: better than LOO), with SE:\n",
          frame_to_markdown(comparison[["bayes_error", "estimate", "delta0_minus_loo", "delta0_minus_loo_se"]])]
    (out / "rhat_delta0.md").write_text("\n".join(md))


if __name__ == "__main__":
    main()
