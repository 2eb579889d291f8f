"""The audit's inputs: the task (classification or regression), the loss, and the user's data as a population.

The task follows the learner: a classifier (``tree``, ``knn``, ``lda``, ``logistic_regression``, any
scikit-learn classifier) makes a classification audit with the 0-1 loss by default; a regressor
(``ridge_regressor``, ``tree_regressor``, ``knn_regressor``, ``ols``, any scikit-learn
regressor) a regression audit with the squared loss by default (``absolute`` also fits). A
learner object without a ``task`` attribute takes the task of the loss (classification if the
loss fits either). A loss of the other task is refused, naming the field, the value and the fix.

The data become a :class:`~simstudy.populations.finite.TabularPopulation` with the same
``task``: class labels coded 0..C-1 (or binarised by ``positive``) for classification, real
targets for regression (a file's target is then its last column unless ``label_column`` says
otherwise).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simstudy.errors import ConfigError

__all__ = ["DEFAULT_LOSS", "resolve_task", "user_population", "without_replacement"]

#: The loss used when the user gives none.
DEFAULT_LOSS = {"classification": "zero_one", "regression": "squared"}
_LEARNERS = {"classification": "tree, knn, lda, logistic_regression or a scikit-learn classifier",
             "regression": "ridge_regressor, tree_regressor, knn_regressor, ols or a scikit-learn regressor"}


def _learner_task(learner: Any) -> str | None:
    """'classification' / 'regression' for a preset name, a learner spec or an estimator; None if unknown."""
    from simstudy.learners.dispatch import build_learner

    built = build_learner(learner)   # no data needed: only the estimator's kind is read
    return getattr(built, "task", None)


def resolve_task(learner: Any, loss: Any) -> tuple[str, Any]:
    """The audit's task and loss (the default loss of the task when ``loss`` is None).

    Raises
    ------
    ConfigError
        When the loss belongs to the other task (a classifier with the squared loss, a regressor
        with the 0-1 loss), or the loss is unknown.
    """
    from simstudy.cv.losses import resolve_loss

    learner_task = _learner_task(learner)
    if loss is None:
        task = learner_task or "classification"
        return task, DEFAULT_LOSS[task]
    try:
        loss_obj = resolve_loss(loss)
    except (ValueError, KeyError) as exc:
        raise ConfigError(f"loss={loss!r} is invalid: {exc}") from None
    loss_task = loss_obj.task if loss_obj.task != "any" else None
    if learner_task and loss_task and learner_task != loss_task:
        name = learner if isinstance(learner, str) else getattr(learner, "name", type(learner).__name__)
        other = "zero_one or log_loss" if learner_task == "classification" else "squared or absolute"
        raise ConfigError(f"loss={loss_obj.name!r} is a {loss_task} loss but learner={name!r} is a {learner_task} "
                          f"learner: use loss={other} with it, or a {loss_task} learner ({_LEARNERS[loss_task]}).")
    return learner_task or loss_task or "classification", loss


def _from_file(data: Any, task: str, label_column: Any, positive: Any):
    from simstudy.populations import build_population

    spec = {"kind": "tabular", "name": Path(str(data)).stem, "path": str(data), "label_column": label_column,
            "positive": positive, "replace": True}
    if task == "regression":
        spec["task"] = "regression"
    try:
        return build_population(spec)
    except ValueError as exc:  # the reader's refusal names the population field; here it is the audit's option
        if isinstance(exc, ConfigError) or "population.label_column" not in str(exc):
            raise
        raise ConfigError(str(exc).replace("Set population.label_column", "Set label_column (--label-column on the "
                                           "command line)").replace("population.label_column", "label_column")) from None


def _target(y: np.ndarray, task: str) -> np.ndarray:
    """Class codes 0..C-1 (classification) or finite, non-constant real targets (regression)."""
    if task == "classification":
        classes, codes = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ConfigError(f"y holds a single class ({classes[0]!r}); the audit needs at least two.")
        return codes
    try:
        target = y.astype(float)
    except (TypeError, ValueError):
        raise ConfigError(f"y holds non-numeric values (e.g. {y[0]!r}) but the learner is a regressor: give a real "
                          f"target, or a classifier ({_LEARNERS['classification']}).") from None
    if not np.all(np.isfinite(target)):
        raise ConfigError("y holds missing or infinite values; remove those rows or impute them first.")
    if np.ptp(target) == 0:
        raise ConfigError(f"y is constant ({target[0]:g}); a regression audit needs a target that varies.")
    return target


def user_population(data: Any, X: Any, y: Any, task: str, label_column: Any, positive: Any):
    """The user's data as a TabularPopulation of ``task``, drawn with replacement."""
    from simstudy.populations.finite import TabularPopulation

    if (data is None) == (X is None):
        raise ConfigError("give the data either as a file (data=PATH) or as arrays (X=..., y=...), not both.")
    if task == "regression" and positive is not None:
        raise ConfigError(f"positive={positive!r} is invalid for a regression audit (a real target is not "
                          "binarised): drop it, or use a classifier.")
    if data is not None:
        return _from_file(data, task, label_column, positive)
    X = np.asarray(X, dtype=float)
    if y is None:
        raise ConfigError("y is missing: give the target (class labels or real values) with X (y=...).")
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or len(y) != len(X):
        raise ConfigError(f"X must be a 2-D array (rows x features) and y a 1-D array of the same length; got "
                          f"X of shape {X.shape} and y of shape {y.shape}.")
    if not np.all(np.isfinite(X)):
        raise ConfigError("X holds missing or infinite values; remove those rows or impute them first.")
    if positive is not None:
        raise ConfigError(f"positive={positive!r} applies to a data file; with arrays, binarise y yourself.")
    seed_info = {"source": "arrays"} if task == "classification" else {"source": "arrays", "task": task}
    return TabularPopulation(X, _target(y, task), name="user_data", replace=True, seed_info=seed_info, task=task)


def without_replacement(pop):
    """The same rows, drawn without replacement (the audit's n/2 setting)."""
    from simstudy.populations.finite import TabularPopulation

    return TabularPopulation(pop.X, pop.y, name=pop.name, replace=False, seed_info=pop.seed_params(),
                             fingerprint=pop.fingerprint, source=getattr(pop, "source", None), task=pop.task)
