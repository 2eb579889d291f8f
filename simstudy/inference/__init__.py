"""Inference on cross-validation output: variance estimators, tests and intervals.

Pure functions on residuals and fold means; no simulation happens here.
"""
from simstudy.inference.results import (
    ConfidenceInterval,
    QuadraticForms,
    TestResult,
    VarianceEstimates,
)
from simstudy.inference.tests import cv_t_test, rho_alpha, zero_spread
from simstudy.inference.variance import (
    block_residuals,
    quadratic_forms,
    variance_estimates,
    variance_estimates_from_blocks,
    variance_estimates_from_forms,
)

__all__ = [
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
