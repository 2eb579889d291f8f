"""Inference on cross-validation output: variance estimators, tests and intervals.

Pure functions on residuals and fold means; no simulation happens here.
"""
from simstudy.inference.results import (
    ConfidenceInterval,
    QuadraticForms,
    TestResult,
    VarianceEstimates,
)
from simstudy.inference.intervals import (
    binomial_interval,
    clt_interval,
    clt_test,
    cv_clt_sigma,
    cv_t_interval,
    five_by_two_interval,
    holdout_interval,
    holdout_test,
    normal_interval,
    resampled_t_interval,
    t_interval,
    z_test,
)
from simstudy.inference.nested import NestedCVResult, nested_cv_interval
from simstudy.inference.tests import (
    combined_f_test_5x2cv,
    corrected_repeated_kfold_t_test,
    corrected_resampled_t_test,
    cv_t_test,
    mcnemar_test,
    paired_t_test_5x2cv,
    rho_alpha,
    two_proportion_z_test,
    zero_spread,
)
from simstudy.inference.variance import (
    block_residuals,
    quadratic_forms,
    variance_estimates,
    variance_estimates_from_blocks,
    variance_estimates_from_forms,
)

__all__ = [
    "binomial_interval",
    "clt_interval",
    "clt_test",
    "combined_f_test_5x2cv",
    "corrected_repeated_kfold_t_test",
    "corrected_resampled_t_test",
    "cv_clt_sigma",
    "cv_t_interval",
    "five_by_two_interval",
    "holdout_interval",
    "holdout_test",
    "nested_cv_interval",
    "NestedCVResult",
    "normal_interval",
    "resampled_t_interval",
    "t_interval",
    "z_test",
    "mcnemar_test",
    "paired_t_test_5x2cv",
    "two_proportion_z_test",
    "ConfidenceInterval",
    "QuadraticForms",
    "TestResult",
    "VarianceEstimates",
    "block_residuals",
    "cv_t_test",
    "quadratic_forms",
    "rho_alpha",
    "variance_estimates",
    "variance_estimates_from_blocks",
    "variance_estimates_from_forms",
    "zero_spread",
]
