"""The learner protocol: what the engine needs from anything that fits models.

A learner works on one training sample at a time. ``start(sample)`` prepares the sample once
(casts features, ranks them for the tree kernel, keeps population row indices for the
population k-NN) and returns a *state*; ``fit(state, rows, rng)`` trains a model on the
sample's rows ``rows`` (positions 0..n-1; repeats allowed) and ``predict(state, model, rows)``
predicts those rows. Every split design (K-fold, 5x2, train/validation, nested CV, the full
sample) is a sequence of ``fit``/``predict`` calls on row subsets of the same state.

Optional fast paths, found by :func:`capabilities` and used behind :mod:`simstudy.cv.loop`
and :mod:`simstudy.populations.truth` (the results are the same as through the required methods):

- ``cross_validate(state, labels, K, rng, keep_models) -> Folds``: K-fold CV in one call;
- ``start_subset(state, rows) -> state``: the state of the sample's rows ``rows`` (distinct
  positions) from the whole sample's, as ``start`` of that sub-sample would prepare it for every
  fit and prediction, without preparing it again (the tree keeps the sample's feature ranks);
- ``split_predictions(state, trains, tests, rng) -> list``: one fit per train/test split
  (row-position arrays) and its predictions of the split's test rows, in one call; random
  draws in split order, as the same ``fit`` calls make them;
- ``cross_validate_batch(X, y, labels, K) -> BatchFolds``: all folds of a chunk of samples at
  once (deterministic learners);
- ``population_errors(models, population) -> ndarray``: exact 0-1 errors of fitted models on a
  finite population;
- ``predict_features(model, X)``: predictions on arbitrary features (truth on a population);
- ``predict_proba(state, model, rows)``: class probabilities (log loss);
- ``context()``: a context manager entered around a chunk of fits.

A learner whose predictions are class labels of its training sample (or finite numbers) by
construction declares it by deriving from :class:`simstudy.contracts.GuaranteedOutputs`; the
engine then skips the check of the predictions' values (their shape and dtype are still checked).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from simstudy.errors import ConfigError

__all__ = ["Learner", "Folds", "BatchFolds", "REQUIRED_METHODS", "OPTIONAL_METHODS", "check_learner",
           "capabilities", "check_learner_loss", "finite_population_data", "learners_context"]

REQUIRED_METHODS = ("start", "fit", "predict")
OPTIONAL_METHODS = ("cross_validate", "start_subset", "split_predictions", "cross_validate_batch",
                    "population_errors", "predict_features", "predict_proba", "context", "describe")


@runtime_checkable
class Learner(Protocol):
    """Fits models on row subsets of a prepared sample (see the module docstring)."""

    name: str

    def start(self, sample: Any) -> Any:
        """Prepare one training sample (a :class:`simstudy.populations.Sample`); returns a state."""

    def fit(self, state: Any, rows: np.ndarray, rng: np.random.Generator) -> Any:
        """A model trained on the sample's rows ``rows``; random choices draw from ``rng``."""

    def predict(self, state: Any, model: Any, rows: np.ndarray) -> np.ndarray:
        """Predictions of ``model`` for the sample's rows ``rows`` (labels or values)."""


@dataclass(frozen=True)
class Folds:
    """The result of K-fold cross-validation of one sample.

    Attributes
    ----------
    predictions : ndarray (n,)
        Each row's prediction by the model trained without the row's fold.
    models : list or None
        ``models[k]`` was trained without fold k (None when not kept).
    proba : ndarray (n, classes) or None
        Predicted class probabilities, when asked for.
    """

    predictions: np.ndarray
    models: list | None = None
    proba: np.ndarray | None = None


@dataclass(frozen=True)
class BatchFolds:
    """K-fold CV of R samples at once: ``predictions`` (R, n) and the fitted ``models`` (the
    learner's own batch object, e.g. :class:`simstudy.learners.linear.batched.LinearRuleBatch`)."""

    predictions: np.ndarray
    models: Any = None


def check_learner(learner: Any, field_name: str = "learner") -> None:
    """Refuse an object that does not implement the protocol, naming the missing methods."""
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(learner, m, None))]
    if missing or not isinstance(getattr(learner, "name", None), str):
        what = ", ".join(missing + ([] if isinstance(getattr(learner, "name", None), str) else ["name (a str)"]))
        raise ConfigError(f"{field_name}: {type(learner).__name__} is not a simstudy learner: it lacks {what}. A "
                         "learner defines name, start(sample), fit(state, rows, rng) and predict(state, model, rows) "
                         "(see simstudy.learners.base); or pass a scikit-learn estimator instead.")


def check_learner_loss(learner: Any, loss: Any, field_name: str = "learner") -> None:
    """Refuse a learner that gives no class probabilities when the loss needs them (log_loss, brier).

    ``loss`` is a :class:`simstudy.cv.losses.Loss` or None (no loss named yet).

    A scikit-learn learner qualifies when its estimator has ``predict_proba`` (RidgeClassifier,
    LinearSVC and regressors do not); a learner object when it has ``predict_proba``.
    """
    if loss is None or not loss.needs_proba:
        return
    template = getattr(learner, "template", None)
    has_proba = hasattr(template, "predict_proba") if template is not None else \
        callable(getattr(learner, "predict_proba", None))
    if not has_proba:
        what = type(template).__name__ if template is not None else type(learner).__name__
        raise ConfigError(f"{field_name}={getattr(learner, 'name', what)!r} gives no class probabilities ({what} has "
                          f"no predict_proba), which study.loss={loss.name!r} needs: use study.loss=zero_one, or a "
                          "learner with probabilities (logistic_regression, lda, tree, knn, random_forest, "
                          "gradient_boosting).")


def finite_population_data(population: Any, dtype=np.float64) -> tuple[np.ndarray, np.ndarray] | None:
    """The whole data set ``(X, y)`` of a population that declares itself finite (its
    ``finite_data`` method, :meth:`simstudy.populations.base.Population.finite_data`), else None:
    what population-specific kernels (the population k-NN, exact tree errors) may index."""
    declared = getattr(type(population), "finite_data", None)
    return population.finite_data(dtype) if callable(declared) else None


def capabilities(learner: Any) -> set[str]:
    """The optional fast paths ``learner`` offers (names of :data:`OPTIONAL_METHODS`)."""
    return {m for m in OPTIONAL_METHODS if callable(getattr(learner, m, None))}


def learners_context(learners) -> contextlib.AbstractContextManager:
    """One context for a chunk of fits: the ``context()`` of every learner that has one."""
    stack = contextlib.ExitStack()
    for learner in learners:
        context = getattr(learner, "context", None)
        if callable(context):
            stack.enter_context(context())
    return stack


@dataclass(frozen=True)
class SampleArrays:
    """A training sample prepared for scikit-learn: features in the learner's dtype, labels."""

    X: np.ndarray
    y: np.ndarray
