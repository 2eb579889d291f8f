"""How much the ERM tie rule moves the true risk of Fisher's discriminant (Nedelko's Figure 3).

On the same samples (the study's streams, :mod:`simstudy.analyses.fisher_replicates`) and
hence the same Fisher directions, the full-sample rule is fitted under each tie rule of
:mod:`simstudy.learners.fisher`; only the threshold can differ. Its exact true risk
(:func:`linear_rule_risk`) is averaged over the samples, and each rule is compared with the
midpoint rule by the paired differences R_rule - R_midpoint (mean and its standard error
sd / sqrt(R) over the same samples). Leave-one-out and K-fold estimates are refitted under
each rule too, to show what the tie rule does to the estimates.

Run ``python -m simstudy.analyses.fisher_tie_rules [out_dir] [replicates]``.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.analyses.fisher_replicates import FisherEstimates, fit_estimates, logistic_replicates, logistic_risk
from simstudy.learners.fisher import TIE_RULES
from simstudy.learners.fisher_reference import TIE_TOL, reference_minimisers
from simstudy.metrics import mean_summary
from simstudy.report.tables import frame_to_markdown

__all__ = ["TieRuleEffect", "RuleComparison", "rule_risks", "tie_rule_effect", "main"]

BAYES_GRID = (0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.48)


@dataclass(frozen=True)
class RuleComparison:
    """One condition fitted under every tie rule: per-rule estimates and tie counts."""

    estimates: dict[str, FisherEstimates]
    minimisers: np.ndarray    # (R,) number of minimising thresholds of the full-sample fit


@dataclass(frozen=True)
class TieRuleEffect:
    """Mean true risk per tie rule with paired differences; one row per (N, R0, rule)."""

    table: pd.DataFrame
    replicates: int
    seed: int

    def to_markdown(self) -> str:
        cols = ["bayes_error", "rule", "mean_true_risk", "mean_true_risk_se", "diff_vs_midpoint",
                "diff_vs_midpoint_se", "z_vs_midpoint", "diff_vs_random", "diff_vs_random_se", "changed_vs_midpoint",
                "mean_loo", "mean_kfold"]
        out = []
        for N, g in self.table.groupby("sample_size"):
            out.append(f"\n## N = {N} ({self.replicates} samples per R0, seed {self.seed})\n\n"
                       + frame_to_markdown(g[cols]))
        return "\n".join(out)


def rule_risks(N: int, bayes_error: float, seed: int, replicates: int, K: int = 5) -> RuleComparison:
    """Fit the full sample, the N leave-one-out and the K fold training sets under every rule.

    The samples and the ``"random"`` rule's uniforms are the study's (B = 50 bootstrap counts
    are drawn and discarded so that the uniforms are the ones the study will use: fits
    0..N + K of the documented order).
    """
    rep = logistic_replicates(N, bayes_error, seed, range(replicates), K=K, B=50, tie_rule="random")
    risk = logistic_risk(bayes_error)
    estimates = {rule: fit_estimates(rep, rule, risk) for rule in TIE_RULES}
    w = estimates["midpoint"].w   # the direction does not depend on the tie rule
    ties = np.array([len(reference_minimisers(rep.X[j] @ w[j], rep.y[j])) for j in range(replicates)])
    return RuleComparison(estimates, ties)


def _unit_threshold(est: FisherEstimates) -> np.ndarray:
    """The full-sample threshold on the unit-norm direction (constant rules keep +-inf)."""
    norm = np.linalg.norm(est.w, axis=-1)
    return np.where(norm > 0, est.c / np.where(norm > 0, norm, 1.0), est.c)


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    s = mean_summary(a - b)
    return s.mean, s.se


def tie_rule_effect(sample_sizes: Sequence[int] = (20,), bayes_errors: Sequence[float] = BAYES_GRID,
                    replicates: int = 10_000, seed: int = 2013, K: int = 5) -> TieRuleEffect:
    """The table of mean true risk per tie rule (module docstring)."""
    rows = []
    for N in sample_sizes:
        for r0 in bayes_errors:
            cmp = rule_risks(N, r0, seed, replicates, K)
            mid, rnd = cmp.estimates["midpoint"], cmp.estimates["random"]
            for rule, est in cmp.estimates.items():
                tr = mean_summary(est.true_risk)
                d_mid, d_mid_se = _paired(est.true_risk, mid.true_risk)
                d_rnd, d_rnd_se = _paired(est.true_risk, rnd.true_risk)
                assert np.allclose(est.empirical, mid.empirical, atol=TIE_TOL)  # ties share the training error
                rows.append({
                    "sample_size": N, "bayes_error": r0, "rule": rule, "replicates": replicates,
                    "mean_true_risk": tr.mean, "mean_true_risk_se": tr.se,
                    "diff_vs_midpoint": d_mid, "diff_vs_midpoint_se": d_mid_se,
                    "z_vs_midpoint": d_mid / d_mid_se if d_mid_se > 0 else np.nan,
                    "diff_vs_random": d_rnd, "diff_vs_random_se": d_rnd_se,
                    "changed_vs_midpoint": float(np.mean(_unit_threshold(est) != _unit_threshold(mid))),
                    "tied_samples": float(np.mean(cmp.minimisers > 1)),
                    "mean_empirical": float(est.empirical.mean()),
                    "mean_loo": float(est.loo.mean()), "mean_kfold": float(est.kfold.mean()),
                })
    return TieRuleEffect(pd.DataFrame(rows), replicates, seed)


def main(argv: Sequence[str] | None = None) -> TieRuleEffect:
    """Write ``tie_rules.csv`` and ``tie_rules.md`` to ``argv[0]`` (default results/nedelko_referee)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Path(argv[0] if argv else "results/nedelko_referee")
    replicates = int(argv[1]) if len(argv) > 1 else 10_000
    out.mkdir(parents=True, exist_ok=True)
    effect = tie_rule_effect(replicates=replicates)
    effect.table.to_csv(out / "tie_rules.csv", index=False)
    head = ("# Fisher ERM threshold: mean true risk per tie rule\n\nSame samples and directions for all rules "
            "(the study's streams); differences are paired over samples, SE = sd / sqrt(R). "
            "`changed_vs_midpoint`: share of samples whose full-sample threshold differs from the midpoint rule's; "
            "`tied_samples` (in the CSV): share with more than one minimiser.\n")
    (out / "tie_rules.md").write_text(head + effect.to_markdown())
    return effect


if __name__ == "__main__":
    main()
