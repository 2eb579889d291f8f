"""What Schulz-Kuempel, Fischer, Hornung, Boulesteix, Nagler & Bischl (arXiv 2409.18836) found, as
far as we could verify it, mapped to our procedure names.

Sources, each named in the ``source`` of a claim (nothing here is inferred from memory):

- ``summary``: the paper's abstract and its public summaries, which name the corrected resampled t,
  the conservative Z and nested CV as the robust methods (also issue 34's reading of the paper);
- ``code``: their analysis code, github.com/slds-lmu/paper_2023_ci_for_ge: ``experiments/resample.R``
  (designs, sizes 100-10,000, 500 repetitions, learners), ``analysis/figures/main/Round1.R``
  (screening: mean under-coverage with a cut-off at 0.10), ``Round2.R`` (the expensive methods run
  at n <= 500 only) and ``Round4.R`` (the final comparison keeps the cheap corrected t, conservative
  Z and nested CV);
- ``mlr3inferr``: the reference pages of their R package (co-authored by Schulz-Kuempel): ci.cor_t
  "tends to be liberal", ci.con_z "tends to be conservative" (variance from n/2 observations),
  ci.wald_cv "asymptotically exact for the test error ... for the (expected) risk too liberal", and
  its all-pairs and within-fold variances give "very similar" results.

Their targets and ours: their *risk* (error of the model fitted on all n points) is our ``Err_XY``,
their *expected risk* our ``Err_n``, their *proxy quantity* of CV and hold-out (the error of the
models at hand) our ``R_n``.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Claim", "CLAIMS", "METHOD_MAP", "SOURCES", "THEIR_SETTING", "THEIR_UNDERCOVERAGE_CUTOFF"]

#: What each source of a claim is (shown under the comparison).
SOURCES = {
    "summary": "the paper's abstract and public summaries of arXiv 2409.18836 (the robust methods they name)",
    "code": "their analysis code, github.com/slds-lmu/paper_2023_ci_for_ge: experiments/resample.R, "
            "analysis/figures/main/Round1.R, Round2.R, Round4.R",
    "mlr3inferr": "the reference pages of their R package mlr3inferr (ci.cor_t, ci.con_z, ci.wald_cv)",
}

#: Their screening cut-off of the mean under-coverage, mean(max(0, 0.95 - coverage)) (Round1.R).
THEIR_UNDERCOVERAGE_CUTOFF = 0.10

#: Their grid (experiments/resample.R): what a disagreement may come from.
THEIR_SETTING = {
    "sizes": (100, 500, 1000, 5000, 10000),
    "replicates": 500,
    "learners": "linear or logistic regression, ridge, CART (rpart), random forest (ranger, 50 trees)",
    "losses": "squared and 0-1 in the main comparison (8 losses in all)",
    "data": ("18 tabular problems of OpenML suite 396 (simulated or large real data; truth from 100,000 held-out "
             "points)"),
}


@dataclass(frozen=True)
class Claim:
    """One verifiable statement of theirs and how our cell table tests it.

    Attributes
    ----------
    key : str
        Short id.
    their_method : str
        Their method (their names).
    ours : tuple of str
        Our procedures it maps to.
    verdict : str
        Their verdict, as stated.
    setting : str
        Their setting for it.
    source : str
        Where we read it (see the module docstring).
    check : str
        How our table tests it: "screen" (mean under-coverage <= their cut-off), "liberal" (median
        coverage - nominal < 0), "conservative" (> 0), "exact_at_largest_n" (median coverage at the
        largest n within nominal +- 2 MCSE_0), "similar" (median |coverage difference| of the two
        procedures <= 2 MCSE_0), "top_half" (every procedure in the better half of our interval
        leaderboard by the share of cells within nominal +- 2 MCSE_0).
    estimands : tuple of str
        Our estimands the check uses (the first present in the table is used).
    why : str
        Where our design differs from theirs for this point.
    """

    key: str
    their_method: str
    ours: tuple
    verdict: str
    setting: str
    source: str
    check: str
    estimands: tuple
    why: str


_ALL_N = "n = 100-10,000, 500 repetitions, risk and expected risk"
CLAIMS = (
    Claim("cort-robust", "corrected resampled t (cort_10-100)", ("nadeau_bengio_t",),
          "among the robust, recommended methods", _ALL_N + "; subsampling 90/10, J = 10-100",
          "summary; code (Round4.R)",
          "screen", ("Err_n", "Err_XY"),
          "ours: J = 15 splits of 90/10 and their cut-off applied to our cells."),
    Claim("conz-robust", "conservative Z (conz)", ("conservative_z",), "among the robust, recommended methods",
          _ALL_N + "; J = 15, M = 10 at n <= 500, cheaper J = 10, M = 5 in the final round", "summary; code (Round4.R)",
          "screen", ("Err_n", "Err_XY"), "ours: J = 15, M = 10 at every n."),
    Claim("ncv-robust", "nested CV (ncv)", ("nested_cv",), "among the robust, recommended methods",
          _ALL_N + "; 5-fold, 200 repetitions at n <= 500, 10 or 3 repetitions above", "summary; code (Round4.R)",
          "screen", ("Err_XY", "Err_n"), "ours: 5-fold, 10 repetitions; its native estimand is Err_XY."),
    Claim("recommended-rank", "corrected resampled t, conservative Z, nested CV",
          ("nadeau_bengio_t", "conservative_z", "nested_cv"), "the subset they recommend over the other methods",
          _ALL_N, "summary; code (Round4.R)", "top_half", ("Err_n", "Err_XY"),
          "our ranking counts over-coverage as a miss too (within nominal ± 2 MCSE₀); theirs screens under-coverage "
          "and width."),
    Claim("cort-liberal", "corrected resampled t", ("nadeau_bengio_t",), "tends to be liberal (under-covers)",
          "their R package's documentation", "mlr3inferr ci.cor_t", "liberal", ("Err_n", "Err_XY"),
          "a median over our cells; their documentation calls the correction a heuristic factor."),
    Claim("conz-conservative", "conservative Z", ("conservative_z",),
          "tends to be conservative (variance from n/2 observations)", "their R package's documentation",
          "mlr3inferr ci.con_z", "conservative", ("Err_n", "Err_XY"),
          "a median over our cells."),
    Claim("cv-exact-test-error", "CV Wald interval of Bayle et al. (cv_5/10)",
          ("cv_clt_all_pairs", "cv_clt_within_fold"),
          "asymptotically exact for the test error (their proxy quantity)", "their R package's documentation",
          "mlr3inferr ci.wald_cv", "exact_at_largest_n", ("R_n",),
          "asymptotic: judged at our largest n only; ours: 10 folds."),
    Claim("cv-liberal-risk", "CV Wald interval of Bayle et al.", ("cv_clt_all_pairs", "cv_clt_within_fold"),
          "too liberal for the (expected) risk", "their R package's documentation", "mlr3inferr ci.wald_cv",
          "liberal", ("Err_n", "Err_XY"), "a median over our cells."),
    Claim("cv-variances-similar", "CV Wald: all-pairs vs within-fold variance",
          ("cv_clt_all_pairs", "cv_clt_within_fold"), "the two variance estimators give very similar results",
          "their R package's documentation", "mlr3inferr ci.wald_cv", "similar", ("R_n", "Err_n"),
          "compared cell by cell on our grid."),
)

#: Their methods (analysis/MethodNames.csv) -> our procedures ("" where we have none).
METHOD_MAP = (
    ("holdout (holdout_66, holdout_90)", "holdout_wald", "ours: 90/10 split (their holdout_90)"),
    ("CV Wald, Bayle et al. (cv_5/10_allpairs, cv_5/10_within)", "cv_clt_all_pairs, cv_clt_within_fold",
     "ours: 10 folds"),
    ("leave-one-out CV Wald (cv_n)", "loo_clt", "theirs at n <= 500 only"),
    ("corrected resampled t (cort_10-100)", "nadeau_bengio_t", "ours: J = 15"),
    ("conservative Z (conz_10_15, conz_10_5)", "conservative_z", "ours: J = 15, M = 10"),
    ("5x2 CV t of Dietterich (52cv)", "five_by_two_t", ""),
    ("nested CV (ncv_200_5, ncv_10_5, ncv_3_5)", "nested_cv", "ours: 5 folds, 10 repetitions (their ncv_10_5)"),
    ("out-of-bag bootstrap (oob_10-1000)", "bootstrap_oob", "ours: B = 100"),
    (".632+ bootstrap (632plus_10-1000)", "bootstrap_632plus", "ours: B = 100"),
    ("location-shifted bootstrap (lsb_50, lsb_100)", "bootstrap_location_shifted", "ours: B = 100"),
    ("two-stage bootstrap (tsb_200_10)", "", "not implemented here"),
    ("Austern & Zhou (rocv_5, rep_rocv_5_5)", "", "not implemented here"),
    ("bootstrap bias-corrected CV (bccv_100, bccv_100_bias)", "", "not implemented here"),
)
