"""Nedelko's R_hat without the oracle: every bias correction on the study's samples, and simulation
checks of the two upper-bound claims of :mod:`simstudy.inference.risk_bounds`.

1. **Delta0 of each R_hat variant** (``rhat_delta0.{csv,md}``). The nedelko_fisher study is run
   once in memory at N = 20 (13 Bayes errors x 10,000 samples, the committed run's seed, tie
   rule and bootstrap, so the samples, LOO, K-fold and empirical risks are those of
   ``results/nedelko_fisher``), with the oracle calibration, and its records are re-aggregated
   under each ``study.rhat_method`` (``StudyResult.reaggregate``):

   - ``worst_case``: ``nedelko_worst_case`` with ``rhat_cells=growth`` (the study's default);
   - ``worst_case_vc3``: the same with n = 3 cells (the VC dimension of half-planes);
   - ``vc_halfplane``: the rigorous VC bound (delta = 0.05), vacuous at N = 20;
   - ``oracle_mean_curve``, ``oracle_conditional_max``: the corrections calibrated on the true
     model family at the true N (the study's former default was the mean curve).

   Each is scored by Delta0 against the true risk, with its paired difference to LOO and
   K-fold on the same samples (``paired_delta0`` of the study).
2. **Bound checks** (``rhat_checks.{csv,md}``): ``vc_halfplane`` per sample (the share of
   samples with R > R_emp + b must be at most delta: one-sided binomial test) at N = 20 and
   200, and ``nedelko_worst_case`` in the mean (E[R - R_emp] <= B_n(E[R_emp]): one-sided
   z-test) at N = 20, on the logistic family and on distributions outside it (two Gaussian
   mixtures and unbalanced pure noise, :data:`OUTSIDE_POPULATIONS`).
3. **The curves** b(r) of each distribution-free method at N = 20, 30, 50 (``rhat_curves.csv``).

Usage (from the project root; about 2 minutes of one core)::

    PYTHONPATH=. python experiments/nedelko_rhat.py --out results/nedelko_rhat
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from simstudy.engine.manifest import environment_info
from simstudy.engine.run import run_study
from simstudy.inference.risk_bounds import rhat_bias_bound
from simstudy.learners.linear.fisher import fisher_directions, predict_rules
from simstudy.populations.base import Population, Sample
from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
from simstudy.report.tables import frame_to_markdown
from simstudy.rng import condition_key
from simstudy.studies.metrics import mean_summary
from simstudy.studies.nedelko_fisher.worker import draw, fit_weights

BAYES_GRID = (0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.48)
#: R_hat variants: name -> re-aggregation settings of the nedelko_fisher study.
VARIANTS = {"worst_case": {"rhat_method": "nedelko_worst_case", "rhat_cells": "growth"},
            "worst_case_vc3": {"rhat_method": "nedelko_worst_case", "rhat_cells": "vc_dimension"},
            "vc_halfplane": {"rhat_method": "vc_halfplane"},
            "oracle_mean_curve": {"rhat_method": "oracle_mean_curve"},
            "oracle_conditional_max": {"rhat_method": "oracle_conditional_max"}}


# ----------------------------------------------------------------------------- distributions outside the family
@dataclass(frozen=True)
class Component:
    """One Gaussian component of a class-conditional mixture."""

    weight: float
    mean: tuple[float, float]
    cov: tuple[tuple[float, float], tuple[float, float]] = ((1.0, 0.0), (0.0, 1.0))


@dataclass
class GaussianClassesPopulation(Population):
    """P(y = 1) = prior1; x | y a mixture of Gaussian components, with the exact risk of linear rules.

    The projection w.x of a class is a Gaussian mixture too, so the error of "predict 1 iff
    w.x > c" is R(w, c) = pi_1 sum_k a_1k Phi((c - w.mu_1k) / s_1k) + pi_0 sum_k a_0k
    (1 - Phi((c - w.mu_0k) / s_0k)), s_yk = sqrt(w' Sigma_yk w) (a step when s = 0).
    """

    label: str
    prior1: float
    class0: tuple[Component, ...]
    class1: tuple[Component, ...]
    name: str = field(default="gaussian_classes", init=False)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "gaussian_classes", "label": self.label}

    def _draw_class(self, comps, n: int, rng: np.random.Generator) -> np.ndarray:
        which = rng.choice(len(comps), size=n, p=[c.weight for c in comps])
        z = rng.standard_normal((n, 2))
        out = np.empty((n, 2))
        for k, c in enumerate(comps):
            at = which == k
            out[at] = np.asarray(c.mean) + z[at] @ np.linalg.cholesky(np.asarray(c.cov)).T
        return out

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        y = (rng.random(n) < self.prior1).astype(np.int64)
        X = np.empty((n, 2))
        X[y == 1] = self._draw_class(self.class1, int(y.sum()), rng)
        X[y == 0] = self._draw_class(self.class0, int(n - y.sum()), rng)
        return Sample(X=X, y=y)

    def risk(self, w: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Exact error of the rules (w (..., 2), c (...))."""
        w, c = np.asarray(w, float), np.asarray(c, float)

        def below(comps):
            return sum(comp.weight * _normal_below(c, w @ np.asarray(comp.mean),
                                                   np.einsum("...i,ij,...j->...", w, np.asarray(comp.cov), w))
                       for comp in comps)
        return self.prior1 * below(self.class1) + (1 - self.prior1) * (1 - below(self.class0))


def _normal_below(c, mean, var):
    """P(V <= c) for V ~ N(mean, var); var = 0 gives the step 1{mean <= c}."""
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, (c - mean) / np.where(sd > 0, sd, 1.0), 0.0)
    return np.where(sd > 0, stats.norm.cdf(z), (mean <= c).astype(float))


_TILTED = ((1.0, 0.8), (0.8, 1.0))
#: Two distributions far from the logistic model: labels depend on x non-monotonically in one,
#: class-conditional spreads differ, classes are unbalanced, a far contamination moves Fisher's
#: class-0 mean and scatter.
OUTSIDE_POPULATIONS = {
    "hetero": GaussianClassesPopulation(
        "hetero", 0.3, (Component(1.0, (0.0, 0.0)),),
        (Component(1.0, (1.2, -0.4), ((3.0, 1.0), (1.0, 0.6))),)),
    "contaminated": GaussianClassesPopulation(
        "contaminated", 0.5, (Component(0.9, (0.0, 0.0)), Component(0.1, (-5.0, 6.0), ((0.3, 0.0), (0.0, 0.3)))),
        (Component(0.6, (1.0, 1.0), _TILTED), Component(0.4, (-1.5, 0.5)))),
}


# ----------------------------------------------------------------------------- full-sample fits
@dataclass(frozen=True)
class CheckPopulation:
    """A distribution for the bound checks: sampler, exact risk of linear rules, stream key."""

    label: str
    population: Population
    risk: Any
    key: str


@dataclass(frozen=True)
class FullSampleFits:
    """True and empirical risk of the full-sample Fisher rule, one value per sample."""

    true_risk: np.ndarray
    empirical: np.ndarray


def check_populations(bayes_errors: Sequence[float] = (0.05, 0.2, 0.4, 0.48)) -> list[CheckPopulation]:
    """The logistic family at a few R0, the two outside distributions and unbalanced pure noise."""
    def logistic_risk(r0):
        alpha = LogisticPopulation(r0).alpha
        return lambda w, c: linear_rule_risk(w, c, alpha=alpha)

    out = [CheckPopulation(f"logistic R0={r0}", LogisticPopulation(r0), logistic_risk(r0),
                           condition_key({"check": "logistic", "bayes_error": r0})) for r0 in bayes_errors]
    noise = GaussianClassesPopulation("noise_0.3", 0.3, (Component(1.0, (0.0, 0.0)),), (Component(1.0, (0.0, 0.0)),))
    for pop in (*OUTSIDE_POPULATIONS.values(), noise):
        out.append(CheckPopulation(pop.label, pop, pop.risk, condition_key({"check": pop.label})))
    return out


def full_sample_fits(cp: CheckPopulation, N: int, replicates: int, seed: int = 2013,
                     tie_rule: str = "random") -> FullSampleFits:
    """Fisher's discriminant (the study's learner and draw order) fitted to ``replicates`` samples."""
    draws = draw(N, condition_key({"key": cp.key, "N": N}), cp.population, seed, range(replicates), 0, 0,
                 uniforms=tie_rule == "random")
    rules = fisher_directions(draws.X, draws.y, fit_weights(draws)).rules(tie_rule, draws.uniforms)
    empirical = (predict_rules(rules, draws.X)[:, 0] != draws.y).mean(axis=1)
    return FullSampleFits(np.asarray(cp.risk(rules.w[:, 0], rules.c[:, 0])), empirical)


# ----------------------------------------------------------------------------- bound checks
def vc_check(fits: FullSampleFits, N: int, delta: float) -> dict:
    """Violations of R <= R_emp + b_vc and the one-sided binomial test of rate <= delta."""
    b = rhat_bias_bound(fits.empirical, N, "vc_halfplane", delta=delta)
    violations, n = int(np.sum(fits.true_risk > fits.empirical + b)), len(fits.true_risk)
    return {"claim": f"P(R > R_emp + b_vc) <= {delta}", "statistic": violations / n, "bound": float(np.mean(b)),
            "mean_empirical": float(fits.empirical.mean()),
            "p_value": float(stats.binomtest(violations, n, delta, alternative="greater").pvalue)}


def worst_case_check(fits: FullSampleFits, N: int) -> dict:
    """E[R - R_emp] <= B_n(E[R_emp]): one-sided z-test with a delta-method SE."""
    emp, opt = fits.empirical, fits.true_risk - fits.empirical
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
            fits = full_sample_fits(cp, N, replicates, seed, tie_rule)
            base = {"population": cp.label, "sample_size": N, "replicates": replicates}
            if N in sizes_vc:
                rows.append({**base, "method": "vc_halfplane", **vc_check(fits, N, 0.05)})
            if N in sizes_wc:
                rows.append({**base, "method": "nedelko_worst_case", **worst_case_check(fits, N)})
    return pd.DataFrame(rows)


def worst_case_curves(N: int, r: Sequence[float] = tuple(np.round(np.arange(0, 0.51, 0.025), 3))) -> pd.DataFrame:
    """b(r) of each distribution-free method at sample size N."""
    r = np.asarray(r, float)
    return pd.DataFrame({"sample_size": N, "empirical_risk": r,
                         "worst_case_growth": rhat_bias_bound(r, N, cells="growth"),
                         "worst_case_vc3": rhat_bias_bound(r, N, cells="vc_dimension"),
                         "vc_halfplane": rhat_bias_bound(r, N, "vc_halfplane")})


# ----------------------------------------------------------------------------- R_hat variants on the study's samples
def rhat_comparison(N: int = 20, replicates: int = 10_000, bayes_errors: Sequence[float] = BAYES_GRID,
                    seed: int = 2013, n_jobs: int = -1) -> pd.DataFrame:
    """One row per (R0, estimate): LOO, K-fold, empirical and every R_hat variant of :data:`VARIANTS`,
    with mean Delta0 and the paired differences to LOO and K-fold (the study's tables)."""
    result = run_study("nedelko_fisher", sample_size=N, bayes_error=list(bayes_errors), replicates=replicates,
                       seed=seed, tie_rule_sensitivity=False, rhat_method="oracle_mean_curve",
                       runner={"n_jobs": n_jobs, "progress": False})
    frames = []
    for name, settings in VARIANTS.items():
        again = result.reaggregate(**settings)
        s = again.summary
        keep = ["loo", "kfold", "empirical"] if name == "worst_case" else []
        rows = s[s["estimator"].isin(keep + ["rhat"])].assign(
            estimate=lambda f: f["estimator"].where(f["estimator"] != "rhat", f"rhat_{name}"))
        p = again.tables.extra["paired_delta0"]
        p = p[p["reference"].isin(["loo", "kfold"])].pivot_table(
            index=["bayes_error", "estimator"], columns="reference", values=["mean_difference", "se"])
        p.columns = [f"{'minus' if v == 'mean_difference' else 'se'}_{ref}" for v, ref in p.columns]
        frames.append(rows.merge(p.reset_index(), on=["bayes_error", "estimator"], how="left"))
    cols = ["sample_size", "bayes_error", "estimate", "mean_true_risk", "mean_estimate", "bias", "mean_delta0",
            "mean_delta0_se", "minus_loo", "se_loo", "minus_kfold", "se_kfold"]
    return pd.concat(frames, ignore_index=True)[cols]


def winners(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per R0: mean Delta0 of each estimate side by side, and the smallest one."""
    wide = comparison.pivot(index="bayes_error", columns="estimate", values="mean_delta0")
    order = ["loo", "kfold", "empirical"] + [f"rhat_{v}" for v in VARIANTS]
    wide = wide[[c for c in order if c in wide]]
    wide["best"] = wide.idxmin(axis=1)
    return wide.reset_index()


# ----------------------------------------------------------------------------- main
def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("results/nedelko_rhat"))
    parser.add_argument("--replicates", type=int, default=10_000)
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    comparison = rhat_comparison(replicates=args.replicates, n_jobs=args.n_jobs)
    comparison.to_csv(args.out / "rhat_delta0.csv", index=False)
    checks = bound_checks()
    checks.to_csv(args.out / "rhat_checks.csv", index=False)
    pd.concat([worst_case_curves(N) for N in (20, 30, 50)]).to_csv(args.out / "rhat_curves.csv", index=False)
    seconds = time.perf_counter() - start
    command = (f"`PYTHONPATH=. python experiments/nedelko_rhat.py --replicates {args.replicates}` ({seconds:.0f} s, "
               f"commit {environment_info()['git_commit']})")
    rhat = comparison[comparison["estimate"].str.startswith("rhat_")]
    (args.out / "rhat_delta0.md").write_text("\n".join([
        f"# R_hat variants on the nedelko_fisher samples (N = 20, {args.replicates} samples per R0, tie rule random)\n",
        f"Command: {command}. The study's records re-aggregated under each `study.rhat_method`; the samples, "
        "LOO, K-fold and empirical risks are those of results/nedelko_fisher.\n",
        "## Mean Delta0 per estimate\n", frame_to_markdown(winners(comparison)),
        "\n## Bias (mean estimate - mean true risk)\n",
        frame_to_markdown(comparison.pivot(index="bayes_error", columns="estimate", values="bias").reset_index()),
        "\n## R_hat against LOO and K-fold on the same samples\n",
        "Mean of per-sample differences of Delta0 (negative: R_hat more accurate), with SEs.\n",
        frame_to_markdown(rhat[["bayes_error", "estimate", "mean_delta0", "minus_loo", "se_loo", "minus_kfold",
                                "se_kfold"]])]) + "\n")
    (args.out / "rhat_checks.md").write_text(
        "# Simulation checks of the R_hat upper-bound claims\n\n"
        f"Command: {command}. vc_halfplane: share of samples with R > R_emp + b (statistic), mean b (bound), "
        "one-sided binomial p-value of rate <= 0.05. nedelko_worst_case: mean optimism (statistic) against "
        "B(mean R_emp) (bound), one-sided z-test.\n\n" + frame_to_markdown(checks) + "\n")
    print((args.out / "rhat_delta0.md").read_text())


if __name__ == "__main__":
    main()
