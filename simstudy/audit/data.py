"""The audit's inputs: the task (classification or regression), the loss, and the user's data as a population.

The task follows the learner: a classifier (``tree``, ``knn``, ``lda``, ``logistic_regression``, any
scikit-learn classifier) makes a classification audit with the 0-1 loss by default; a regressor
(``ridge_regressor``, ``tree_regressor``, ``knn_regressor``, ``ols``, any scikit-learn
regressor) a regression audit with the squared loss by default (``absolute`` also fits). A
learner object without a ``task`` attribute takes the task of the loss (classification if the
loss fits either). A loss of the other task is refused, naming the field, the value and the fix.

The data become a :class:`~simstudy.populations.finite.TabularPopulation` with the same
``task`` (arrays through :func:`simstudy.populations.in_memory.arrays_population`, the checks of
``population=(X, y)``; a file through the tabular reader): class labels coded 0..C-1 (or
binarised by ``positive``) for classification, real targets for regression (a file's target is
then its last column unless ``label_column`` says otherwise).
"""
from __future__ import annotations

from typing import Any

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

    # one name for every file: the population's name enters the seed of every simulated training set, and the
    # same rows must give the same audit whatever the file is called (the report names the file itself)
    spec = {"kind": "tabular", "name": "user_data", "path": str(data), "label_column": label_column,
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


def user_population(data: Any, X: Any, y: Any, task: str, label_column: Any, positive: Any):
    """The user's data as a TabularPopulation of ``task``, drawn with replacement."""
    from simstudy.populations.in_memory import arrays_population

    if (data is None) == (X is None):
        raise ConfigError("give the data either as a file (data=PATH) or as arrays (X=..., y=...), not both.")
    if task == "regression" and positive is not None:
        raise ConfigError(f"positive={positive!r} is invalid for a regression audit (a real target is not "
                          "binarised): drop it, or use a classifier.")
    if data is not None:
        return _seeded_as_arrays(_from_file(data, task, label_column, positive))
    if positive is not None:
        raise ConfigError(f"positive={positive!r} applies to a data file; with arrays, binarise y yourself.")
    # the checks of population=(X, y) (simstudy.populations.in_memory), named as the audit's X= and y=
    return arrays_population(X, y, task, name="user_data", replace=True, source="arrays", prefix="")


def _seeded_as_arrays(pop):
    """A file's population with the seed identity of the same rows given as arrays.

    The seed identity enters every simulated training set's seed; a file's own (its positive labels,
    rows and features) would give other simulations than ``X=``/``y=`` holding the same rows, so the
    audit seeds every route as :func:`~simstudy.populations.in_memory.arrays_population` does. The
    report still names the file (``source``)."""
    from simstudy.populations.finite import TabularPopulation

    seed_info = {"source": "arrays"} if pop.task == "classification" else {"source": "arrays", "task": pop.task}
    return TabularPopulation(pop.X, pop.y, name="user_data", replace=True, seed_info=seed_info,
                             fingerprint=pop.fingerprint, source=getattr(pop, "source", None), task=pop.task)


def without_replacement(pop):
    """The same rows, drawn without replacement (the audit's n/2 setting)."""
    from simstudy.populations.finite import TabularPopulation

    # the parent's identity beyond its own kind, name and replace (which would say replace=True here)
    seed_info = {k: v for k, v in pop.seed_params().items() if k not in ("kind", "name", "replace")}
    return TabularPopulation(pop.X, pop.y, name=pop.name, replace=False, seed_info=seed_info,
                             fingerprint=pop.fingerprint, source=getattr(pop, "source", None), task=pop.task)
