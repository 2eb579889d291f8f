"""The registered procedures: one :class:`~.protocol.Procedure` per entry of
:data:`~.registry.PROCEDURES` (the module attribute of the same name in capitals).

Designs below are the defaults; ``procedure.with_design(...)`` changes their parameters.
"""
from __future__ import annotations

from simstudy.inference.procedures import adapters as a
from simstudy.inference.procedures.designs import (
    BootstrapDesign, FiveByTwoDesign, HoldOutDesign, KFoldDesign, KFoldHalvesDesign, LeaveOneOutDesign, NestedCVDesign,
    PairedSubsamplingDesign, RepeatedKFoldDesign, RepeatedSplitsDesign,
)
from simstudy.inference.procedures.protocol import Procedure

__all__ = ["ALL", "table"]

_TWO_SIDED = ("two-sided",)
_GB = "Grandvalet & Bengio (2006), eq. 9 (Proposition 2)"

HOLDOUT_WALD = Procedure(
    "holdout_wald", "both", HoldOutDesign(0.1), "R_n", a.holdout_wald,
    "the normal (Wald) interval of a mean on an independent test set; Bayle et al. (2020), Section 5",
    "hold-out Wald z: mean -+ z s / sqrt(n_test) on the held-out points")
HOLDOUT_WILSON = Procedure(
    "holdout_wilson", "interval", HoldOutDesign(0.1), "R_n", a.holdout_wilson,
    "Wilson (1927), the score interval of a binomial proportion",
    "hold-out Wilson score interval for an error rate (0-1 losses)", alternatives=_TWO_SIDED)
KFOLD_T = Procedure(
    "kfold_t", "both", KFoldDesign(10), "Err_n", a.kfold_t, _GB + " with rho = 0 (the naive K-fold paired t)",
    "naive K-fold t: fold means, Student t with K-1 df")
KFOLD_T_RHO07 = Procedure(
    "kfold_t_rho0.7", "both", KFoldDesign(10), "Err_n", a.kfold_t, _GB + " with rho = 0.7 (the paper's conservative t)",
    "Grandvalet-Bengio t with rho_hat = 0.7", options=(("rho", 0.7),))
KFOLD_T_NADEAU_BENGIO_RHO = Procedure(
    "kfold_t_nadeau_bengio_rho", "both", KFoldDesign(10), "Err_n", a.kfold_t_rho_hat,
    _GB + " with rho_hat = K r / (1 + K r), r = n_test/n_train (simstudy.inference.nadeau_bengio_rho)",
    "Grandvalet-Bengio t with the Nadeau-Bengio correction read as rho_hat",
    options=(("estimator", "nadeau_bengio"),))
KFOLD_T_SUBSAMPLE_RHO = Procedure(
    "kfold_t_subsample_rho", "both", KFoldHalvesDesign(10, 5), "Err_n", a.kfold_t_rho_hat,
    _GB + " with rho_hat = rho(n/2) from K-fold CVs of disjoint halves (simstudy.inference.subsample_rho)",
    "Grandvalet-Bengio t with rho_hat from half-sample CVs (t with K-1 df)",
    options=(("estimator", "subsample_rho"),))
KFOLD_T_SUBSAMPLE_RHO_SATTERTHWAITE = Procedure(
    "kfold_t_subsample_rho_satterthwaite", "both", KFoldHalvesDesign(10, 5), "Err_n", a.kfold_t_rho_hat,
    _GB + " with rho_hat from half-sample CVs, Satterthwaite df (simstudy.inference.subsample_rho)",
    "Grandvalet-Bengio t with rho_hat from half-sample CVs (Satterthwaite df)",
    options=(("estimator", "subsample_rho_satterthwaite"),))
KFOLD_T_SUBSAMPLE_VARIANCE = Procedure(
    "kfold_t_subsample_variance", "both", KFoldHalvesDesign(10, 5), "Err_n", a.kfold_t_rho_hat,
    "Var(mu_hat) at n/2 from disjoint halves, scaled by h/n (simstudy.inference.subsample_variance)",
    "t with Var(mu_hat) estimated from half-sample CVs (B df)",
    options=(("estimator", "subsample_variance"),))
CV_CLT_WITHIN_FOLD = Procedure(
    "cv_clt_within_fold", "both", KFoldDesign(10), "R_n", a.cv_clt,
    "Bayle, Bayle, Janson & Mackey (2020), Theorems 1-2 and the within-fold variance estimator",
    "CV CLT, within-fold variance", options=(("variance", "within-fold"),))
CV_CLT_ALL_PAIRS = Procedure(
    "cv_clt_all_pairs", "both", KFoldDesign(10), "R_n", a.cv_clt,
    "Bayle, Bayle, Janson & Mackey (2020), Theorems 1-2 and the all-pairs variance estimator",
    "CV CLT, all-pairs variance", options=(("variance", "all-pairs"),))
LOO_CLT = Procedure(
    "loo_clt", "both", LeaveOneOutDesign(), "R_n", a.cv_clt,
    "Bayle et al. (2020), the CV CLT with k = n and the all-pairs variance",
    "leave-one-out CV CLT (all-pairs variance)", options=(("variance", "all-pairs"),))
REPEATED_SPLITS_T = Procedure(
    "repeated_splits_t", "both", RepeatedSplitsDesign(15, 0.1), "Err_n", a.repeated_splits_t,
    "the resampled t of Nadeau & Bengio (2003), variance s^2/J (Dietterich 1998's resampled paired t)",
    "repeated train/validation t, uncorrected")
NADEAU_BENGIO_T = Procedure(
    "nadeau_bengio_t", "both", RepeatedSplitsDesign(15, 0.1), "Err_n", a.repeated_splits_t,
    "Nadeau & Bengio (2003), the corrected resampled t: variance (1/J + n_test/n_train) s^2",
    "corrected resampled t (Nadeau-Bengio)", options=(("correction", "nadeau-bengio"),))
CONSERVATIVE_Z = Procedure(
    "conservative_z", "both", PairedSubsamplingDesign(15, 10, 0.1), "Err_n", a.conservative_z,
    "Nadeau & Bengio (2003), Section 4: the conservative Z",
    "conservative Z: variance of the J-split estimate from M pairs of half samples", new=True)
BOUCKAERT_FRANK = Procedure(
    "bouckaert_frank", "both", RepeatedKFoldDesign(10, 10), "Err_n", a.repeated_kfold_t,
    "Bouckaert & Frank (2004): t on the K r fold estimates, variance (1/(K r) + n_test/n_train) s^2, K r - 1 df",
    "corrected repeated K-fold CV t (Bouckaert-Frank)")
FIVE_BY_TWO_T = Procedure(
    "five_by_two_t", "both", FiveByTwoDesign(), "Err_n", a.five_by_two_t,
    "Dietterich (1998), the 5x2cv paired t: p_1^(1) / sqrt(mean_i s_i^2), 5 df",
    "Dietterich 5x2cv t")
FIVE_BY_TWO_F = Procedure(
    "five_by_two_f", "test", FiveByTwoDesign(), "Err_n", a.five_by_two_f,
    "Alpaydin (1999), the combined 5x2cv F(10, 5)", "Alpaydin combined 5x2cv F (test only, no interval)",
    alternatives=_TWO_SIDED)
NESTED_CV = Procedure(
    "nested_cv", "interval", NestedCVDesign(5, 10), "Err_XY", a.nested_cv,
    "Bates, Hastie & Tibshirani (2023), Algorithm 1 and Section 4 (simstudy.inference.nested_cv_interval)",
    "nested CV interval (Bates, Hastie & Tibshirani)", alternatives=_TWO_SIDED)
BOOTSTRAP_OOB = Procedure(
    "bootstrap_oob", "interval", BootstrapDesign(100), "Err_n", a.bootstrap_oob,
    "Efron & Tibshirani (1997): leave-one-out bootstrap Err1 and its delta-method SE (eqs. 35-40)",
    "leave-one-out (out-of-bag) bootstrap with the delta-method SE", new=True, alternatives=_TWO_SIDED)
BOOTSTRAP_632PLUS = Procedure(
    "bootstrap_632plus", "interval", BootstrapDesign(100), "Err_XY", a.bootstrap_632plus,
    "Efron & Tibshirani (1997), the .632+ estimate; SE_del Err632+/Err1 as Schulz-Kuempel et al.'s benchmark",
    ".632+ bootstrap -+ z SE_del Err632+/Err1", new=True, alternatives=_TWO_SIDED)
BOOTSTRAP_LOCATION_SHIFTED = Procedure(
    "bootstrap_location_shifted", "interval", BootstrapDesign(100), "Err_XY", a.bootstrap_location_shifted,
    "Noma et al. (2021), Algorithm 1: percentiles of the resamples' apparent errors shifted by the .632+ optimism",
    "location-shifted bootstrap around the .632+", new=True, alternatives=_TWO_SIDED)
BAYESIAN_CORRELATED_T = Procedure(
    "bayesian_correlated_t", "both", RepeatedKFoldDesign(10, 10), "Err_n", a.bayesian_correlated_t,
    "Corani & Benavoli (2015), the correlated Bayesian t (rho = n_test/n); reference implementation baycomp",
    "Bayesian correlated t: credible interval and posterior probabilities (rope 0)", new=True)

#: Every registered procedure, in registry order.
ALL = (HOLDOUT_WALD, HOLDOUT_WILSON, KFOLD_T, KFOLD_T_RHO07, KFOLD_T_NADEAU_BENGIO_RHO, KFOLD_T_SUBSAMPLE_RHO,
       KFOLD_T_SUBSAMPLE_RHO_SATTERTHWAITE, KFOLD_T_SUBSAMPLE_VARIANCE, CV_CLT_WITHIN_FOLD, CV_CLT_ALL_PAIRS,
       LOO_CLT, REPEATED_SPLITS_T, NADEAU_BENGIO_T, CONSERVATIVE_Z, BOUCKAERT_FRANK, FIVE_BY_TWO_T, FIVE_BY_TWO_F,
       NESTED_CV, BOOTSTRAP_OOB, BOOTSTRAP_632PLUS, BOOTSTRAP_LOCATION_SHIFTED, BAYESIAN_CORRELATED_T)


def table(n: int = 100) -> list[dict]:
    """One row per registered procedure: name, kind, design, fits at sample size n, estimand, new, reference."""
    return [{"name": p.name, "kind": p.kind, "design": repr(p.design), "fits": p.fits(n), "estimand": p.estimand,
             "new": p.new, "reference": p.reference} for p in ALL]
