"""Inference on cross-validation output: variance estimators, and tests with their intervals.

Pure functions on residuals, fold means and counts; no simulation happens here. One function
per procedure; each returns a result object (:class:`TestResult` or a subclass) with the
statistic, p-value, df, alternative, estimate, se and null value, and
``.confidence_interval(confidence_level)`` giving the interval that matches the test (as
``scipy.stats.ttest_1samp(...).confidence_interval()``). Nested CV is an interval procedure
(:func:`nested_cv_interval`); Alpaydin's F is a test without an interval.
"""
from simstudy.inference.results import (
    ConfidenceInterval,
    QuadraticForms,
    TestResult,
    VarianceEstimates,
)
from simstudy.inference.pivot import t_test, z_test
from simstudy.inference.kfold import (
    CVCLTSigma,
    cv_clt_sigma,
    cv_clt_test,
    cv_t_test,
    holdout_test,
    rho_alpha,
    zero_spread,
)
from simstudy.inference.resampling import (
    FTestResult,
    five_by_two_f_test,
    five_by_two_t_test,
    repeated_kfold_t_test,
    resampled_t_test,
)
from simstudy.inference.proportions import (
    BinomialTestResult,
    TwoProportionTestResult,
    binomial_test,
    mcnemar_test,
    two_proportion_z_test,
    wilson_bounds,
)
from simstudy.inference.nested import NestedCVResult, nested_cv_interval
from simstudy.inference.folds import FoldSummary, fold_summary
from simstudy.inference.rho_hat import (
    RhoEstimate,
    SubsampleCV,
    nadeau_bengio_rho,
    subsample_cv,
    subsample_rho,
    subsample_variance,
)
from simstudy.inference.variance import (
    block_residuals,
    quadratic_forms,
    variance_estimates,
    variance_estimates_from_blocks,
    variance_estimates_from_forms,
)

__all__ = [
    # result objects
    "BinomialTestResult",
    "ConfidenceInterval",
    "CVCLTSigma",
    "FoldSummary",
    "FTestResult",
    "NestedCVResult",
    "RhoEstimate",
    "SubsampleCV",
    "QuadraticForms",
    "TestResult",
    "TwoProportionTestResult",
    "VarianceEstimates",
    # procedures (tests with intervals)
    "binomial_test",
    "cv_clt_test",
    "cv_t_test",
    "five_by_two_f_test",
    "five_by_two_t_test",
    "holdout_test",
    "mcnemar_test",
    "nested_cv_interval",
    "repeated_kfold_t_test",
    "resampled_t_test",
    "two_proportion_z_test",
    # building blocks
    "t_test",
    "z_test",
    "cv_clt_sigma",
    "fold_summary",
    "rho_alpha",
    "wilson_bounds",
    "zero_spread",
    # data-driven rho_hat
    "nadeau_bengio_rho",
    "subsample_cv",
    "subsample_rho",
    "subsample_variance",
    # variance estimators of Grandvalet & Bengio
    "block_residuals",
    "quadratic_forms",
    "variance_estimates",
    "variance_estimates_from_blocks",
    "variance_estimates_from_forms",
]
