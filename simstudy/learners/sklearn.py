"""Any scikit-learn classifier or regressor as a learner, with a fast path for trees.

Conventions (documented in the README):

- a fresh ``clone`` of the configured estimator is fitted for every training fold;
- if the estimator has a ``random_state`` parameter left at None, each fit gets an integer
  seed drawn from the replicate's generator, so runs are reproducible while the learner keeps
  its randomised behaviour (for trees: the random order of features, which breaks ties between
  equally good splits);
- a training fold holding a single class yields the constant classifier predicting it (what
  scikit-learn's trees do anyway; estimators such as LogisticRegression would raise);
- fast path: for scikit-learn trees (``BaseDecisionTree``), ``fit``/``predict`` are called
  with ``check_input=False`` on float32 C-contiguous arrays, the trees' native dtype; the
  caller also disables parameter validation per fit after it was done once at build time.
  For ``LinearRegression`` and ``Ridge`` (Cholesky), the fit is scikit-learn's own computation
  without the estimator around it (:mod:`simstudy.learners.linear.exact`: the same
  coefficients bit for bit, without the estimator's per-fit overhead); likewise for the binary
  ``LinearDiscriminantAnalysis(solver="lsqr")`` (:mod:`simstudy.learners.linear.exact_lda`).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from simstudy.learners.base import SampleArrays
from simstudy.learners.linear.exact import linear_fast_path
from simstudy.learners.linear.exact_lda import lda_fast_path

if TYPE_CHECKING:  # scikit-learn is imported where it is used: workers of other learners skip it
    from sklearn.base import BaseEstimator

__all__ = ["SklearnLearner", "ConstantClassifier", "SampleArrays"]


@dataclass(frozen=True)
class ConstantClassifier:
    """Predicts one class everywhere (used when a training fold holds a single class)."""

    label: Any

    def predict(self, X):
        return np.full(X.shape[0], self.label)


class SklearnLearner:
    """Any scikit-learn estimator behind the learner protocol (:mod:`simstudy.learners.base`).

    Parameters
    ----------
    estimator : BaseEstimator
        An unfitted classifier or regressor; it is cloned for every fit.
    name : str
        Name used in tables.
    fast_path : bool
        Enable ``check_input=False`` calls for scikit-learn trees.
    """

    def __init__(self, estimator: BaseEstimator, name: str = "learner", fast_path: bool = True):
        from sklearn.base import is_classifier, is_regressor

        if not (is_classifier(estimator) or is_regressor(estimator)):
            raise ValueError(f"learner {name!r}: {type(estimator).__name__} is neither a scikit-learn classifier "
                             "nor a regressor.")
        if hasattr(estimator, "_validate_params"):
            estimator._validate_params()  # parameters are checked once here, not per fit
        from sklearn.tree import BaseDecisionTree

        self.template = estimator
        self.name = name
        self.task = "classification" if is_classifier(estimator) else "regression"
        #: scikit-learn trees called with check_input=False
        self._tree_fast = bool(fast_path) and isinstance(estimator, BaseDecisionTree)
        #: scikit-learn's own linear least-squares fit without the estimator (None: fit the estimator)
        self._linear = linear_fast_path(estimator) if fast_path else None
        #: scikit-learn's binary lsqr LDA fit without the estimator's checks (None: fit the estimator).
        #: Its models are scikit-learn's bit for bit, so it leaves ``fast_path`` (part of a run's
        #: identity) as it was.
        self._lda = lda_fast_path(estimator) if fast_path else None
        #: binary LDA / LogisticRegression models predict from their coefficients without the
        #: estimator's input checks (the same operations: :func:`_binary_linear_scores`)
        self._direct_linear = bool(fast_path)
        self.fast_path = self._tree_fast or self._linear is not None
        params = estimator.get_params(deep=False)
        self._seed_random_state = "random_state" in params and params["random_state"] is None
        #: dtype of the feature arrays handed to fit/predict
        self.dtype = np.float32 if self._tree_fast else np.float64

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": f"{type(self.template).__module__}.{type(self.template).__name__}",
                "engine": "scikit-learn",
                "params": {k: repr(v) for k, v in self.template.get_params(deep=False).items()},
                "fast_path": self.fast_path}

    def start(self, sample) -> SampleArrays:
        """Cast the sample's features to the dtype and layout the estimator's fast path expects."""
        return SampleArrays(np.ascontiguousarray(sample.X, dtype=self.dtype), sample.y)

    def fit(self, state: SampleArrays, rows: np.ndarray, rng: np.random.Generator):
        """Fit a fresh clone on the sample's rows ``rows``.

        A classifier's training set holding one class gives the :class:`ConstantClassifier`.
        An estimator whose ``random_state`` is None gets a seed drawn from ``rng``.
        """
        from sklearn.base import clone

        X, y = state.X[rows], state.y[rows]
        if self.task == "classification" and np.all(y == y[0]):
            return ConstantClassifier(y[0])
        seed = int(rng.integers(0, 2**31 - 1)) if self._seed_random_state else None  # drawn on every path
        if self._linear is not None or self._lda is not None:
            model = (self._linear or self._lda).fit(X, y)
            if model is not None:
                return model
        est = clone(self.template)
        if seed is not None:
            est.set_params(random_state=seed)
        if self._tree_fast:
            est.fit(X, y, check_input=False)
        else:
            est.fit(X, y)
        return est

    def predict(self, state: SampleArrays, model, rows: np.ndarray) -> np.ndarray:
        """Predictions for the sample's rows ``rows``."""
        return self.predict_features(model, state.X[rows])

    def predict_features(self, model, X: np.ndarray) -> np.ndarray:
        """Predictions for features ``X`` (cast to the learner's dtype)."""
        X = np.ascontiguousarray(X, dtype=self.dtype)
        if self._tree_fast and not isinstance(model, ConstantClassifier):
            return model.predict(X, check_input=False)
        scores = _binary_linear_scores(model, X) if self._direct_linear else None
        if scores is not None:                      # LinearClassifierMixin.predict, two classes
            return np.take(model.classes_, (scores > 0).astype(np.intp), axis=0)
        return model.predict(X)

    def predict_proba(self, state: SampleArrays, model, rows: np.ndarray) -> np.ndarray:
        """Class probabilities (rows, classes) with column c for class code c (labels 0..C-1)."""
        return self.predict_features_proba(model, state.X[rows], n_classes=int(np.max(state.y)) + 1)

    def predict_features_proba(self, model, X: np.ndarray, n_classes: int | None = None) -> np.ndarray:
        """Class probabilities of features ``X``: (rows, width), column c for class code c, width
        ``n_classes`` (at least 2 and the model's largest class + 1); a constant model is one-hot."""
        labels = [int(model.label)] if isinstance(model, ConstantClassifier) else \
            np.asarray(model.classes_, dtype=np.int64)
        width = max(int(n_classes or 0), int(np.max(labels)) + 1, 2)
        out = np.zeros((X.shape[0], width))
        if isinstance(model, ConstantClassifier):
            out[:, int(model.label)] = 1.0
            return out
        X = np.ascontiguousarray(X, dtype=self.dtype)
        scores = _binary_linear_scores(model, X) if self._direct_linear else None
        if scores is not None:                      # their predict_proba with two classes
            from scipy.special import expit

            q1 = expit(scores)
            out[:, labels] = np.stack([1 - q1, q1], axis=1)
        else:
            out[:, labels] = model.predict_proba(X)
        return out

    def probability_rule(self, model) -> tuple[np.ndarray, float] | None:
        """(w, b) when ``model`` is a binary LinearDiscriminantAnalysis or LogisticRegression of
        classes 0, 1 fitted on float64 features: its ``predict_proba`` is (1 - q, q) with
        q = expit(x.w + b), w = ``coef_[0]``, b = ``intercept_[0]``; None for any other model."""
        if self.dtype != np.float64 or not _is_binary_linear(model) or not np.array_equal(model.classes_, [0, 1]):
            return None
        return np.asarray(model.coef_[0], dtype=float), float(np.reshape(model.intercept_, -1)[0])

    def context(self) -> contextlib.AbstractContextManager:
        """scikit-learn's input and parameter validation off for a chunk of fits (the
        parameters were validated once at build time), and one OpenMP thread per fit: replicates
        run in parallel processes, and OpenMP threads over a small training set only contend
        (HistGradientBoosting's fits, e.g., slow down many times on a loaded machine)."""
        import sklearn
        from threadpoolctl import threadpool_limits

        stack = contextlib.ExitStack()
        stack.enter_context(sklearn.config_context(assume_finite=True, skip_parameter_validation=True))
        stack.enter_context(threadpool_limits(limits=1, user_api="openmp"))
        return stack


def _expit_classifiers() -> tuple[type, ...]:
    """The scikit-learn classes whose binary ``predict_proba`` is expit of the decision value
    x.coef_[0] + intercept_[0] (subclasses may override it and are not among them)."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression

    return LinearDiscriminantAnalysis, LogisticRegression


def _is_binary_linear(model) -> bool:
    """A fitted LinearDiscriminantAnalysis or LogisticRegression of two classes (coef_ (1, p))."""
    if not any(type(model) is cls for cls in _expit_classifiers()):
        return False
    coef, intercept = getattr(model, "coef_", None), getattr(model, "intercept_", None)
    return (np.shape(getattr(model, "classes_", ())) == (2,) and np.ndim(coef) == 2 and np.shape(coef)[0] == 1
            and np.size(intercept) == 1)


def _binary_linear_scores(model, X: np.ndarray) -> np.ndarray | None:
    """Decision values X @ coef_.T + intercept_ as (rows,) of a binary LDA or LogisticRegression
    (``LinearClassifierMixin.decision_function`` on dense float64 features without its input
    checks), else None. Their ``predict`` is ``classes_[score > 0]`` and their ``predict_proba``
    (1 - expit(score), expit(score))."""
    if X.dtype != np.float64 or X.ndim != 2 or not _is_binary_linear(model) or X.shape[1] != model.coef_.shape[1]:
        return None
    return np.reshape(X @ model.coef_.T + model.intercept_, (-1,))
