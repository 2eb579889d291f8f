"""Any scikit-learn classifier as a learner, with a fast path for trees.

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
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np

if TYPE_CHECKING:  # scikit-learn is imported where it is used: workers of other learners skip it
    from sklearn.base import BaseEstimator

__all__ = ["SklearnLearner", "ConstantClassifier", "fit_context"]


@dataclass(frozen=True)
class ConstantClassifier:
    """Predicts one class everywhere (used when a training fold holds a single class)."""

    label: Any

    def predict(self, X):
        return np.full(X.shape[0], self.label)


class SklearnLearner:
    """Fit and predict with a scikit-learn classifier template.

    Parameters
    ----------
    estimator : BaseEstimator
        An unfitted classifier; it is cloned for every fit.
    name : str
        Name used in tables.
    fast_path : bool
        Enable ``check_input=False`` calls for scikit-learn trees.
    """

    def __init__(self, estimator: BaseEstimator, name: str = "learner", fast_path: bool = True):
        from sklearn.base import is_classifier

        if not is_classifier(estimator):
            raise ValueError(f"learner {name!r}: {type(estimator).__name__} is not a scikit-learn classifier.")
        if hasattr(estimator, "_validate_params"):
            estimator._validate_params()  # parameters are checked once here, not per fit
        from sklearn.tree import BaseDecisionTree

        self.template = estimator
        self.name = name
        self.fast_path = bool(fast_path) and isinstance(estimator, BaseDecisionTree)
        params = estimator.get_params(deep=False)
        self._seed_random_state = "random_state" in params and params["random_state"] is None
        #: dtype of the feature arrays handed to fit/predict
        self.dtype = np.float32 if self.fast_path else np.float64

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> "SklearnLearner":
        """Build from a ``learner`` config node (``estimator._target_`` plus parameters)."""
        from hydra.utils import instantiate

        estimator = instantiate(dict(cfg["estimator"]), _convert_="all")
        return cls(estimator, name=cfg.get("name", type(estimator).__name__), fast_path=cfg.get("fast_path", True))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": type(self.template).__name__,
                "params": {k: repr(v) for k, v in self.template.get_params(deep=False).items()},
                "fast_path": self.fast_path}

    def prepare(self, X: np.ndarray) -> np.ndarray:
        """Convert a feature matrix to the dtype and layout :meth:`fit`/:meth:`predict` expect."""
        return np.ascontiguousarray(X, dtype=self.dtype)

    def fit(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator):
        """Fit a fresh clone on (X, y); X must come from :meth:`prepare`."""
        from sklearn.base import clone

        if np.all(y == y[0]):
            return ConstantClassifier(y[0])
        est = clone(self.template)
        if self._seed_random_state:
            est.set_params(random_state=int(rng.integers(0, 2**31 - 1)))
        if self.fast_path:
            est.fit(X, y, check_input=False)
        else:
            est.fit(X, y)
        return est

    def predict(self, model, X: np.ndarray) -> np.ndarray:
        """Predicted labels for X (prepared by :meth:`prepare`)."""
        if self.fast_path and not isinstance(model, ConstantClassifier):
            return model.predict(X, check_input=False)
        return model.predict(X)


def fit_context(learners: Iterable[Any]) -> contextlib.AbstractContextManager:
    """The context for a chunk of fits: scikit-learn's input and parameter validation off
    (``assume_finite``, ``skip_parameter_validation``; parameters were validated once at build
    time) when one of ``learners`` is a :class:`SklearnLearner`, a null context otherwise (then
    scikit-learn is not imported at all)."""
    if any(isinstance(learner, SklearnLearner) for learner in learners):
        import sklearn

        return sklearn.config_context(assume_finite=True, skip_parameter_validation=True)
    return contextlib.nullcontext()
