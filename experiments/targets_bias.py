"""The bias a stopping rule on the Monte Carlo error can introduce, measured by simulation.

A run to a target (``study.targets``) stops when the 95% half-width of a measure's Monte Carlo
interval is small enough; the half-width is estimated from the same replicates as the measure,
so the count R at which a run stops is random and may depend on the estimate. This experiment
repeats one cheap study many times (different seeds) under three rules and compares the mean of
the final estimates with the truth and with fixed-count runs of the same seeds:

- population ``gaussian_folds`` (rho = 0.5, sigma = 1), n = 10, K = 5: exact rho = 0.5 and
  theta = Var(mu_hat) = sigma^2 / (n (1 - rho)) = 0.2;
- rules: ``rho`` ± 0.1 and ± 0.05 (a ratio, delta-method SE), ``theta`` ± 0.04 and ± 0.02 (a
  variance) and ``type1`` ± 0.04 and ± 0.02 (the t-test's rejection rate at rho_hat = 0.5, Wilson
  half-width); first round 50 replicates, step 50, cap 5000;
- per seed: the target run (final count R_s and estimate), and a fixed run of the same seed with
  R_fixed replicates, R_fixed = the mean final count over the seeds rounded to the step. Same
  seed: the fixed run shares its first replicates with the target run, so the paired difference
  (target - fixed) has a small variance. Its mean over seeds estimates the stopping rule's bias
  (plus the difference of the estimators' own O(1/R) biases at R_s and R_fixed).

Usage (from the project root; about 4 minutes of one core with the defaults)::

    PYTHONPATH=. python experiments/targets_bias.py --out results/targets_bias
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

import simstudy
from simstudy.engine.manifest import environment_info

RHO, SIGMA, N, K = 0.5, 1.0, 10, 5
TRUTH = {"rho": RHO, "theta": SIGMA ** 2 / (N * (1 - RHO)), "type1": np.nan}
#: (measure, target): each measure at two targets, the second half the first (four times the replicates)
RULES = [("rho", 0.1), ("rho", 0.05), ("theta", 0.04), ("theta", 0.02), ("type1", 0.04), ("type1", 0.02)]
STEP, CAP = 50, 5000


def _estimate(result, measure: str) -> float:
    if measure == "type1":
        return float(result.tests["rejection_rate"].iloc[0])
    return float(result.summary[measure].iloc[0])


def _run(seed: int, **kw):
    return simstudy.run_study("cv_variance", population={"name": "gaussian_folds", "rho": RHO, "sigma": SIGMA},
                              sizes=[N], K=K, rho_hats=[RHO], seed=seed, n_jobs=1, backend="sequential",
                              progress=False, **kw)


def simulate(measure: str, target: float, seeds: list[int]) -> pd.DataFrame:
    """Per seed: the target run's count and estimate, and the fixed run's estimate."""
    rows = []
    for seed in seeds:
        res = _run(seed, replicates=CAP, min_replicates=STEP, targets={measure: target})
        rows.append({"measure": measure, "target": target, "seed": seed,
                     "replicates": int(res.summary["replicates"].iloc[0]), "estimate": _estimate(res, measure),
                     "met": bool(res.tables.extra["targets"]["met"].all())})
    frame = pd.DataFrame(rows)
    fixed_count = int(np.ceil(frame["replicates"].mean() / STEP) * STEP)
    frame["fixed_replicates"] = fixed_count
    frame["fixed_estimate"] = [_estimate(_run(seed, replicates=fixed_count), measure) for seed in seeds]
    return frame


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Per rule: counts, mean estimates (target and fixed runs), their paired difference with its
    standard error and 95% interval, and the distance to the truth in standard errors."""
    out = []
    for (measure, _), g in frame.groupby(["measure", "target"], sort=False):
        S = len(g)
        diff = g["estimate"] - g["fixed_estimate"]
        d_se = float(diff.std(ddof=1) / np.sqrt(S))
        est_se = float(g["estimate"].std(ddof=1) / np.sqrt(S))
        truth = TRUTH[measure]
        out.append({"measure": measure, "target": g["target"].iloc[0], "seeds": S,
                    "met_share": float(g["met"].mean()), "replicates_mean": float(g["replicates"].mean()),
                    "replicates_min": int(g["replicates"].min()), "replicates_max": int(g["replicates"].max()),
                    "fixed_replicates": int(g["fixed_replicates"].iloc[0]), "truth": truth,
                    "mean_target_run": float(g["estimate"].mean()), "mean_target_run_se": est_se,
                    "mean_fixed_run": float(g["fixed_estimate"].mean()),
                    "difference": float(diff.mean()), "difference_se": d_se,
                    "difference_low": float(diff.mean() - 1.96 * d_se),
                    "difference_high": float(diff.mean() + 1.96 * d_se),
                    "difference_over_target": float(diff.mean() / g["target"].iloc[0]),
                    "z_vs_truth": float((g["estimate"].mean() - truth) / est_se) if np.isfinite(truth) else np.nan})
    return pd.DataFrame(out)


def markdown(summary: pd.DataFrame, seconds: float, seeds: int) -> str:
    lines = [f"# Bias of the stopping rule of a run to a target Monte Carlo error ({seeds} seeds per rule)\n",
             f"cv_variance on gaussian_folds (rho = {RHO}, sigma = {SIGMA}), n = {N}, K = {K}; first round and step "
             f"{STEP}, cap {CAP}. Difference = mean over seeds of (target run - fixed run of the same seed at the "
             "mean count), with its 95% interval; z = (mean of the target runs - truth) / SE over seeds.\n",
             "| measure | target ± | met | R mean [min, max] | R fixed | truth | mean, target runs | "
             "mean, fixed runs | difference [95% CI] | difference / target | z vs truth |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        truth = f"{r['truth']:.4f}" if np.isfinite(r["truth"]) else "-"
        z = f"{r['z_vs_truth']:+.2f}" if np.isfinite(r["z_vs_truth"]) else "-"
        lines.append(f"| {r['measure']} | {r['target']:g} | {100 * r['met_share']:.0f}% | {r['replicates_mean']:.0f} "
                     f"[{r['replicates_min']}, {r['replicates_max']}] | {r['fixed_replicates']} | {truth} | "
                     f"{r['mean_target_run']:.4f} ± {1.96 * r['mean_target_run_se']:.4f} | "
                     f"{r['mean_fixed_run']:.4f} | "
                     f"{r['difference']:+.4f} [{r['difference_low']:+.4f}, {r['difference_high']:+.4f}] | "
                     f"{r['difference_over_target']:+.3f} | {z} |")
    lines.append(f"\nCommand: `PYTHONPATH=. python experiments/targets_bias.py --seeds {seeds}` ({seconds:.0f} s).\n")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=400, help="repetitions per rule")
    parser.add_argument("--out", type=Path, default=Path("results/targets_bias"))
    args = parser.parse_args()
    logging.getLogger("simstudy").setLevel(logging.WARNING)
    start = time.perf_counter()
    seeds = list(range(10_000, 10_000 + args.seeds))
    frame = pd.concat([simulate(m, t, seeds) for m, t in RULES], ignore_index=True)
    summary = summarize(frame)
    seconds = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "runs.csv", index=False)
    summary.to_csv(args.out / "summary.csv", index=False)
    (args.out / "summary.md").write_text(markdown(summary, seconds, args.seeds))
    env = environment_info()
    (args.out / "environment.json").write_text(json.dumps({"seeds": args.seeds, "seconds": seconds,
                                                           "git_commit": env["git_commit"],
                                                           "packages": env["packages"]}, indent=2) + "\n")
    print(markdown(summary, seconds, args.seeds))


if __name__ == "__main__":
    main()
