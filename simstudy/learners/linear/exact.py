"""scikit-learn's ``LinearRegression`` and ``Ridge`` fits without scikit-learn's per-fit overhead.

The fast path of :class:`simstudy.learners.sklearn.SklearnLearner` for these two regressors.
A fit through scikit-learn spends about a millisecond in input validation, cloning and
parameter handling around a least-squares solve that takes tens of microseconds on the
studies' samples (p = 5 or 10 features). Here the solve is the same: the same NumPy and SciPy
calls in the same order as scikit-learn 1.9's ``fit`` (``sklearn/linear_model/_base.py``:
``LinearRegression.fit``, ``_preprocess_data``, ``_set_intercept``;
``sklearn/linear_model/_ridge.py``: ``_BaseRidge.fit``, ``_ridge_regression``,
``_solve_cholesky``), so coefficients and intercepts are scikit-learn's bit for bit (the tests
compare with ``np.array_equal``):

- centring (``fit_intercept=True``): x_offset = mean of the rows (``np.average``), X - x_offset,
  y_offset = mean of y, y - y_offset;
- ``LinearRegression``: ``scipy.linalg.lstsq(Xc, yc, cond=tol)`` (LAPACK gelsd, the
  minimum-norm least-squares solution; ``tol`` is scikit-learn's cut-off for small singular
  values);
- ``Ridge`` (solver ``auto`` or ``cholesky``): w = (Xc'Xc + alpha I)^-1 Xc'yc by
  ``scipy.linalg.solve(..., assume_a="pos")`` (Cholesky);
- intercept b = y_offset - x_offset.w (0 without an intercept); prediction X w + b.

Everything else goes through scikit-learn itself (:func:`linear_fast_path` returns None, or
:meth:`ExactLinearRegressor.fit` returns None for one fit): other estimators or settings
(``positive=True``, an array of alphas, other Ridge solvers), and the two cases where
scikit-learn changes method: Ridge with more features than training rows (its kernel form) or a
Cholesky factorisation that fails (its SVD fallback).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LinearFit", "ExactLinearRegressor", "linear_fast_path"]


@dataclass(frozen=True)
class LinearFit:
    """A fitted linear regression, as scikit-learn's estimator holds it: predicts X coef_ + intercept_."""

    coef_: np.ndarray      # (p,)
    intercept_: Any        # float or 0-d array, as scikit-learn stores it

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X coef_ + intercept_ (``LinearModel._decision_function``)."""
        return X @ self.coef_ + self.intercept_


@dataclass(frozen=True)
class ExactLinearRegressor:
    """scikit-learn's fit of ``LinearRegression`` (``alpha is None``) or ``Ridge`` (``alpha``).

    Parameters
    ----------
    fit_intercept : bool
    alpha : float or None
        Ridge's penalty; None for ordinary least squares.
    tol : float
        ``LinearRegression``'s ``tol`` (the ``cond`` of ``scipy.linalg.lstsq``); unused by Ridge's
        Cholesky solve.
    """

    fit_intercept: bool
    alpha: float | None
    tol: float = 1e-6

    def fit(self, X: np.ndarray, y: np.ndarray) -> LinearFit | None:
        """The fit on features X (n, p) and targets y (n,); None where scikit-learn would take
        another route (then fit scikit-learn's estimator)."""
        from scipy import linalg

        X = np.array(X, dtype=np.float64, copy=True)     # _preprocess_data: check_array(copy=True)
        y = np.array(y, dtype=np.float64, copy=True)
        n, p = X.shape
        if self.fit_intercept:
            x_offset = np.asarray(np.average(X, axis=0))  # sklearn.utils._array_api._average
            X -= x_offset
            y_offset = np.asarray(np.average(y, axis=0))
            y -= y_offset
        if self.alpha is None:
            coef = linalg.lstsq(X, y, cond=self.tol)[0]
            coef = np.ravel(coef.T)
        else:
            if p > n:  # scikit-learn solves the kernel form here
                return None
            A = X.T @ X                                   # _solve_cholesky, one target
            Xy = X.T @ y.reshape(-1, 1)
            A.flat[:: p + 1] += np.asarray([self.alpha], dtype=np.float64)[0]
            try:
                coef = linalg.solve(A, Xy, assume_a="pos", overwrite_a=True).T
            except linalg.LinAlgError:                    # scikit-learn falls back to its SVD solver
                return None
            coef = np.ravel(coef)
        if not self.fit_intercept:
            return LinearFit(coef, 0.0)
        return LinearFit(coef, y_offset - x_offset @ coef)  # _set_intercept


def linear_fast_path(estimator) -> ExactLinearRegressor | None:
    """The exact fast fit of ``estimator`` (an unfitted scikit-learn estimator), or None."""
    from sklearn.linear_model import LinearRegression, Ridge

    params = estimator.get_params(deep=False)
    if type(estimator) is LinearRegression and not params["positive"]:
        return ExactLinearRegressor(bool(params["fit_intercept"]), None, float(params["tol"]))
    if (type(estimator) is Ridge and not params["positive"] and params["solver"] in ("auto", "cholesky")
            and np.ndim(params["alpha"]) == 0):
        return ExactLinearRegressor(bool(params["fit_intercept"]), float(params["alpha"]))
    return None
