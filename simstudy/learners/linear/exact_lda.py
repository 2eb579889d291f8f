"""scikit-learn's ``LinearDiscriminantAnalysis(solver="lsqr")`` fit on two classes without its
per-fit overhead.

A fast path of :class:`simstudy.learners.sklearn.SklearnLearner`, used where the batched
kernel does not apply (the probability losses need ``predict_proba``). scikit-learn's fit spends
most of its time in input validation around a few small array operations; here those operations
are the same NumPy and SciPy calls in the same order as scikit-learn 1.9's
(``sklearn/discriminant_analysis.py``: ``LinearDiscriminantAnalysis.fit``, ``_solve_lstsq``,
``_class_means``, ``_class_cov``, ``_cov``; ``sklearn.covariance.empirical_covariance``), and
their results are set on a copy of the unfitted estimator, which then predicts as a fitted one. The
fitted attributes equal scikit-learn's bit for bit (the tests compare with ``np.array_equal``):

- priors pi_k = n_k / n; class means by ``np.add.at`` and a division by the counts;
- pooled covariance S = sum_k pi_k cov_k, cov_k the biased covariance of class k (``np.cov``);
- coef = ``scipy.linalg.lstsq(S, means.T)[0].T``, intercept_k = -m_k.coef_k / 2 + log pi_k;
- two classes: coef_ = coef_1 - coef_0, intercept_ = intercept_1 - intercept_0.

Everything else goes through scikit-learn itself (:func:`lda_fast_path` returns None, or
:meth:`ExactLDA.fit` returns None for one fit): other solvers, shrinkage, priors, a covariance
estimator or ``n_components``; labels other than two classes 0 and 1; a class with fewer than two
rows (scikit-learn warns there) or non-finite features.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ExactLDA", "lda_fast_path"]


@dataclass(frozen=True)
class ExactLDA:
    """scikit-learn's binary ``lsqr`` fit of ``template`` (an unfitted LinearDiscriminantAnalysis,
    a ``clone``: its parameters are None, strings and numbers, so a shallow copy is a fresh
    estimator without ``clone``'s cost)."""

    template: Any

    def fit(self, X: np.ndarray, y: np.ndarray):
        """A copy of the template holding scikit-learn's fitted attributes for features X (n, p)
        (float64) and labels y (n,) in {0, 1}; None where scikit-learn's own fit must run."""
        from scipy import linalg

        X = np.asarray(X)
        classes, y_index, counts = np.unique(y, return_inverse=True, return_counts=True)
        if X.dtype != np.float64 or X.ndim != 2 or classes.shape != (2,) or not np.array_equal(classes, [0, 1]) \
                or counts.min() < 2 or not np.all(np.isfinite(X)):
            return None
        n, p = X.shape
        priors = counts.astype(X.dtype) / float(n)
        means = np.zeros((2, p), dtype=X.dtype)                        # _class_means
        np.add.at(means, y_index, X)
        means /= np.bincount(y_index)[:, None]
        covariance = np.zeros(shape=(p, p))                             # _class_cov
        for index, label in enumerate(classes):
            within = np.cov(X[y == label, :].T, bias=1)                 # empirical_covariance
            if within.ndim == 0:
                within = np.array([[within]])
            covariance += priors[index] * np.atleast_2d(within)
        coef = linalg.lstsq(covariance, means.T)[0].T                   # _solve_lstsq
        intercept = -0.5 * np.diag(np.dot(means, coef.T)) + np.log(priors)
        model = copy.copy(self.template)
        model.n_features_in_, model.classes_, model.priors_ = p, classes, priors
        model.means_, model.covariance_ = means, covariance
        model.coef_ = np.asarray(coef[1, :] - coef[0, :], dtype=X.dtype).reshape(1, -1)
        model.intercept_ = np.asarray(intercept[1] - intercept[0], dtype=X.dtype).reshape((1,))
        model._max_components = model._n_features_out = 1
        return model


def lda_fast_path(estimator) -> ExactLDA | None:
    """The exact fast fit of ``estimator`` (an unfitted scikit-learn estimator), or None."""
    from sklearn.base import clone
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    if type(estimator) is not LinearDiscriminantAnalysis:
        return None
    params = estimator.get_params(deep=False)
    if params["solver"] != "lsqr" or any(params[k] is not None for k in ("shrinkage", "priors",
                                                                           "covariance_estimator", "n_components")):
        return None
    return ExactLDA(clone(estimator))
