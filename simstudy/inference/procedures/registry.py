"""The registry of inference procedures: ``PROCEDURES[name].load()`` is the
:class:`~.protocol.Procedure` (imported on first use, as every entry of :mod:`simstudy.registry`).

A user's own procedure is registered the same way::

    from simstudy.inference.procedures import PROCEDURES
    PROCEDURES.register("my_interval", "mypackage.module:MY_PROCEDURE", "what it does")
"""
from __future__ import annotations

from simstudy.registry import Registry

__all__ = ["PROCEDURES"]

PROCEDURES = Registry("procedure")

_C = "simstudy.inference.procedures.catalog"
for _name, _attribute, _description in (
    ("holdout_wald", "HOLDOUT_WALD", "hold-out Wald z: mean -+ z s / sqrt(n_test) on the held-out points"),
    ("holdout_wilson", "HOLDOUT_WILSON", "hold-out Wilson score interval for an error rate (0-1 losses)"),
    ("kfold_t", "KFOLD_T", "naive K-fold t: fold means, Student t with K-1 df"),
    ("kfold_t_rho0.7", "KFOLD_T_RHO07", "Grandvalet-Bengio t with rho_hat = 0.7"),
    ("kfold_t_nadeau_bengio_rho", "KFOLD_T_NADEAU_BENGIO_RHO",
     "Grandvalet-Bengio t with the Nadeau-Bengio correction read as rho_hat"),
    ("kfold_t_subsample_rho", "KFOLD_T_SUBSAMPLE_RHO",
     "Grandvalet-Bengio t with rho_hat from half-sample CVs (t with K-1 df)"),
    ("kfold_t_subsample_rho_satterthwaite", "KFOLD_T_SUBSAMPLE_RHO_SATTERTHWAITE",
     "Grandvalet-Bengio t with rho_hat from half-sample CVs (Satterthwaite df)"),
    ("kfold_t_subsample_variance", "KFOLD_T_SUBSAMPLE_VARIANCE",
     "t with Var(mu_hat) estimated from half-sample CVs (B df)"),
    ("cv_clt_within_fold", "CV_CLT_WITHIN_FOLD", "CV CLT, within-fold variance"),
    ("cv_clt_all_pairs", "CV_CLT_ALL_PAIRS", "CV CLT, all-pairs variance"),
    ("loo_clt", "LOO_CLT", "leave-one-out CV CLT (all-pairs variance)"),
    ("repeated_splits_t", "REPEATED_SPLITS_T", "repeated train/validation t, uncorrected"),
    ("nadeau_bengio_t", "NADEAU_BENGIO_T", "corrected resampled t (Nadeau-Bengio)"),
    ("conservative_z", "CONSERVATIVE_Z",
     "conservative Z: variance of the J-split estimate from M pairs of half samples"),
    ("bouckaert_frank", "BOUCKAERT_FRANK", "corrected repeated K-fold CV t (Bouckaert-Frank)"),
    ("five_by_two_t", "FIVE_BY_TWO_T", "Dietterich 5x2cv t"),
    ("five_by_two_f", "FIVE_BY_TWO_F", "Alpaydin combined 5x2cv F (test only, no interval)"),
    ("nested_cv", "NESTED_CV", "nested CV interval (Bates, Hastie & Tibshirani)"),
    ("bootstrap_oob", "BOOTSTRAP_OOB", "leave-one-out (out-of-bag) bootstrap with the delta-method SE"),
    ("bootstrap_632plus", "BOOTSTRAP_632PLUS", ".632+ bootstrap -+ z SE_del Err632+/Err1"),
    ("bootstrap_location_shifted", "BOOTSTRAP_LOCATION_SHIFTED", "location-shifted bootstrap around the .632+"),
    ("bayesian_correlated_t", "BAYESIAN_CORRELATED_T",
     "Bayesian correlated t: credible interval and posterior probabilities (rope 0)"),
):
    PROCEDURES.register(_name, f"{_C}:{_attribute}", _description)
