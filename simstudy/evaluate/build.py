"""Building :class:`~simstudy.evaluate.CVLosses`: run CV of the user's estimator, or take what
scikit-learn's ``cross_val_predict`` / ``cross_validate`` already produced (no refitting)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from simstudy.cv.checks import check_predictions
from simstudy.cv.losses import Loss, resolve_loss
from simstudy.cv.splits import check_splitter
from simstudy.evaluate.result import CVLosses, Refit

__all__ = ["cross_validate_losses", "from_cross_validate", "from_predictions"]


def _rows(X: Any, index: np.ndarray) -> Any:
    """Rows of an array, DataFrame or Series by position."""
    return X.iloc[index] if hasattr(X, "iloc") else np.asarray(X)[index]


def _length(X: Any, what: str) -> int:
    try:
        return len(X)
    except TypeError:
        raise ValueError(f"{what} must be array-like with one row per example; got {type(X).__name__}.") from None


def _task(estimator: Any) -> str | None:
    from sklearn.base import is_classifier, is_regressor

    if is_classifier(estimator):
        return "classification"
    return "regression" if is_regressor(estimator) else None


def _resolve(loss: Any, task: str | None, who: str) -> Loss:
    """The loss, refused when it does not fit the task (a classifier scored with a squared loss)."""
    loss = resolve_loss(loss, "loss")
    if task is not None and loss.task not in ("any", task):
        hint = "zero_one or log_loss" if task == "classification" else "squared or absolute"
        raise ValueError(f"loss={loss.name!r} is a {loss.task} loss but {who} is a {task} model: use {hint}, or "
                         "pass your own function of (y, y_hat) if you mean it.")
    return loss


class _Scorer:
    """Per-point losses from predictions: labels as given, or class codes and probabilities."""

    def __init__(self, loss: Loss, y: np.ndarray, classes: np.ndarray | None):
        self.loss, self.y = loss, np.asarray(y)
        self.classes = np.unique(self.y) if classes is None else np.asarray(classes)
        if loss.needs_proba:
            missing = ~np.isin(self.y, self.classes)
            if missing.any():
                raise ValueError(f"y holds labels not in classes {self.classes.tolist()}: {np.unique(self.y[missing])}.")
            self.codes = np.searchsorted(self.classes, self.y)

    def __call__(self, rows: np.ndarray, y_hat, proba=None) -> np.ndarray:
        if self.loss.needs_proba:
            if proba is None:
                raise ValueError(f"loss {self.loss.name!r} needs predicted probabilities (predict_proba).")
            out = self.loss(self.codes[rows], np.argmax(proba, axis=1), proba)
        else:
            out = self.loss(self.y[rows], y_hat)
        return _checked(out, rows, self.loss.name)

    def aligned_proba(self, model: Any, proba: np.ndarray) -> np.ndarray:
        """A fold model's probabilities in the columns of all classes (absent classes get 0)."""
        out = np.zeros((proba.shape[0], self.classes.size))
        out[:, np.searchsorted(self.classes, np.asarray(model.classes_))] = proba
        return out


def _checked(values: np.ndarray, rows: np.ndarray, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.shape != (len(rows),):
        raise ValueError(f"loss {name!r} returned shape {values.shape} for {len(rows)} points; a loss returns one "
                         "value per point.")
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"loss {name!r} returned {int(bad.sum())} non-finite value(s) (NaN or inf), first at row "
                         f"{int(np.asarray(rows)[bad][0])}; fix the loss function or the predictions.")
    return values


def _fit_and_score(estimator: Any, X: Any, y: np.ndarray, scorer: _Scorer, train: np.ndarray, test: np.ndarray):
    """Fit a clone on the training rows; (model, per-point losses on the test rows)."""
    from sklearn.base import clone

    model = clone(estimator).fit(_rows(X, train), _rows(y, train))
    X_test = _rows(X, test)
    if scorer.loss.needs_proba:
        if not hasattr(model, "predict_proba"):
            raise ValueError(f"loss {scorer.loss.name!r} needs predict_proba, which {type(model).__name__} lacks.")
        proba = scorer.aligned_proba(model, model.predict_proba(X_test))
        return model, scorer(test, None, proba)
    predictions = model.predict(X_test)
    task = scorer.loss.task if scorer.loss.task in ("classification", "regression") else None
    check_predictions(predictions, y, task, rows=len(test), part=f"{type(model).__name__}.predict")
    return model, scorer(test, predictions)


@dataclass(frozen=True)
class Fitter:
    """Fits a clone of ``estimator`` on training rows and scores test rows (picklable, for refits)."""

    estimator: Any
    X: Any = field(repr=False)
    y: np.ndarray = field(repr=False)
    scorer: _Scorer = field(repr=False)

    def __call__(self, train: np.ndarray, test: np.ndarray) -> np.ndarray:
        return _fit_and_score(self.estimator, self.X, self.y, self.scorer, train, test)[1]


def _splits(cv: Any, X: Any, y: Any, groups: Any, random_state: int | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) index pairs of a splitter (:func:`~simstudy.cv.splits.check_splitter`)."""
    cv = check_splitter(cv, random_state)
    try:
        return [(np.asarray(tr), np.asarray(te)) for tr, te in cv.split(X, y, groups)]
    except ValueError as exc:
        if groups is None and "group" in str(exc).lower():
            raise ValueError(f"the splitter {cv!r} needs groups: pass groups=... (one group label per row).") from None
        raise


def _design(splits: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> tuple[str, np.ndarray, np.ndarray]:
    """("kfold" or "splits", folds (rounds, n), train sizes (rounds, K)) of a list of splits.

    K-fold: consecutive splits whose test sets partition the n rows, each training on all other
    rows, with the same K in every round; anything else is a list of train/validation splits.
    """
    rounds, current, seen = [], [], np.zeros(n, dtype=bool)
    partition = True
    for train, test in splits:
        complement = np.setdiff1d(np.arange(n), test)
        if seen[test].any() or not np.array_equal(np.sort(train), complement):
            partition = False
            break
        seen[test] = True
        current.append((train, test))
        if seen.all():
            rounds.append(current)
            current, seen = [], np.zeros(n, dtype=bool)
    if partition and not current and rounds and len({len(r) for r in rounds}) == 1:
        folds = np.full((len(rounds), n), -1)
        for s, rnd in enumerate(rounds):
            for k, (_, test) in enumerate(rnd):
                folds[s, test] = k
        return "kfold", folds, np.array([[len(tr) for tr, _ in rnd] for rnd in rounds])
    folds = np.full((len(splits), n), -1)
    for s, (_, test) in enumerate(splits):
        folds[s, test] = 0
    return "splits", folds, np.array([[len(tr)] for tr, _ in splits])


def cross_validate_losses(estimator: Any, X: Any, y: Any, *, loss: Any = "zero_one", cv: Any = 10,
                          groups: Any = None, random_state: int | None = None, keep_models: bool = False,
                          name: str | None = None) -> CVLosses:
    """Cross-validate a scikit-learn estimator and keep every point's loss.

    Parameters
    ----------
    estimator : scikit-learn estimator (or pipeline)
        Cloned and fitted once per split.
    X, y : array-like
        The data (DataFrames are indexed by position).
    loss : str, callable or Loss
        ``"zero_one"``, ``"log_loss"`` (needs ``predict_proba``), ``"squared"``, ``"absolute"``, or
        your own function of ``(y, y_hat)`` or ``(y, y_hat, proba)`` (the latter receives y as
        class codes 0..C-1, positions in ``np.unique(y)``, and probabilities in that column order).
    cv : int or splitter
        An int K means ``KFold(K, shuffle=True, random_state=random_state)`` (random folds, as the
        theory assumes); any scikit-learn splitter works: ``StratifiedKFold``, ``GroupKFold`` (with
        ``groups``), ``RepeatedKFold`` (rounds for the repeated k-fold tests), ``ShuffleSplit``
        (train/validation splits: Nadeau-Bengio). K need not divide n.
    groups : array-like, optional
        Group labels for grouped splitters; refits for 5x2 and nested CV are then refused
        (their random splits would cut groups).
    random_state : int, optional
        Seed of the shuffled KFold when ``cv`` is an int. The estimator's own randomness is its
        ``random_state`` parameter.
    keep_models : bool
        Keep the fitted fold models (``.models``).
    name : str, optional
        Label in the tables (default: the estimator's class name).

    Returns
    -------
    CVLosses

    Raises
    ------
    ValueError
        Mismatched lengths, a loss that does not fit the estimator (a classifier with the squared
        loss), a loss returning NaN, a splitter that needs groups without them.
    """
    n = _length(X, "X")
    if _length(y, "y") != n:
        raise ValueError(f"X has {n} rows but y has {_length(y, 'y')}; give one label per row.")
    if groups is not None and _length(groups, "groups") != n:
        raise ValueError(f"groups has {_length(groups, 'groups')} entries for {n} rows; give one group per row.")
    who = type(estimator).__name__
    loss = _resolve(loss, _task(estimator), who)
    y_arr = np.asarray(y)
    scorer = _Scorer(loss, y_arr, None)
    splits = _splits(cv, X, y_arr, groups, random_state)
    design, folds, train_sizes = _design(splits, n)
    losses = np.full(folds.shape, np.nan)
    models = []
    for j, (train, test) in enumerate(splits):
        model, values = _fit_and_score(estimator, X, y_arr, scorer, train, test)
        losses[j // train_sizes.shape[1] if design == "kfold" else j, test] = values
        if keep_models:
            models.append(model)

    return CVLosses(losses, folds, train_sizes, design, loss, loss.bounds, name or who,
                    models=models if keep_models else None,
                    refit=Refit((Fitter(estimator, X, y_arr, scorer),), grouped=groups is not None))


def _labels_from(folds: Any, n: int) -> np.ndarray:
    """Fold labels (n,) from labels, a list of test index arrays, or a list of (train, test) pairs."""
    items = list(folds) if not isinstance(folds, np.ndarray) else folds
    if isinstance(items, np.ndarray) or (len(items) and np.isscalar(items[0])):
        labels = np.asarray(items)
        if labels.shape != (n,):
            raise ValueError(f"folds has shape {labels.shape} for {n} predictions; give one fold label per row, or "
                             "the list of test index arrays.")
        return np.unique(labels, return_inverse=True)[1]
    labels = np.full(n, -1)
    for k, item in enumerate(items):
        test = np.asarray(item[1] if isinstance(item, tuple) else item)
        if test.dtype.kind in "iu" and test.size and (test.min() < 0 or test.max() >= n):
            raise ValueError(f"folds: test fold {k} holds row index {test.max() if test.max() >= n else test.min()}, "
                             f"beyond the {n} predictions; fold indices must lie in 0..{n - 1}.")
        if (labels[test] >= 0).any():
            raise ValueError("the test folds overlap: a row is in two of them; give a partition of the rows.")
        labels[test] = k
    if (labels < 0).any():
        raise ValueError(f"{int((labels < 0).sum())} row(s) are in no test fold; the folds must cover every "
                         "prediction (as cross_val_predict's do).")
    return labels


def from_predictions(y: Any, predictions: Any, folds: Any, loss: Any = "zero_one", *, classes: Any = None,
                     name: str = "model") -> CVLosses:
    """Per-point losses of out-of-fold predictions already made (no refitting).

    Parameters
    ----------
    y : array-like (n,)
    predictions : array-like (n,) or (n, C)
        ``cross_val_predict(estimator, X, y, cv=splitter)``, or its ``method="predict_proba"``
        output (columns in the order of ``classes``, by default ``np.unique(y)``, as scikit-learn
        does) for losses that need probabilities (log loss); class predictions are then the
        most probable class.
    folds : array-like (n,) or sequence
        The fold of each row, or the splits: ``[test for _, test in splitter.split(X, y)]`` or the
        (train, test) pairs themselves (``cross_validate(..., return_indices=True)["indices"]``
        gives the test lists).
    loss : str, callable or Loss
    classes : array-like, optional
    name : str

    Returns
    -------
    CVLosses
        Without refitting information: 5x2 and nested CV are not available from it.
    """
    y_arr = np.asarray(y)
    pred = np.asarray(predictions)
    n = y_arr.shape[0]
    if pred.shape[0] != n:
        raise ValueError(f"predictions has {pred.shape[0]} rows but y has {n}; give one prediction per row.")
    loss = resolve_loss(loss, "loss")
    scorer = _Scorer(loss, y_arr, classes)
    rows = np.arange(n)
    if pred.ndim == 2:
        if pred.shape[1] != scorer.classes.size:
            raise ValueError(f"predictions has {pred.shape[1]} probability columns for {scorer.classes.size} classes "
                             f"{scorer.classes.tolist()}; pass classes= in the order of the columns.")
        values = scorer(rows, scorer.classes[np.argmax(pred, axis=1)], pred)
    elif loss.needs_proba:
        raise ValueError(f"loss {loss.name!r} needs predicted probabilities: pass "
                         "cross_val_predict(..., method='predict_proba') as predictions.")
    else:
        values = scorer(rows, pred)
    labels = _labels_from(folds, n)
    K = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=K)
    return CVLosses(values[None, :], labels[None, :], (n - sizes)[None, :], "kfold", loss, loss.bounds, name)


def from_cross_validate(results: dict, X: Any, y: Any, loss: Any = "zero_one", *, name: str | None = None) -> CVLosses:
    """Per-point losses from ``sklearn.model_selection.cross_validate`` output, without refitting.

    ``results`` must come from ``cross_validate(..., return_estimator=True, return_indices=True)``:
    each fold's fitted estimator predicts its own test rows. The fold models are kept.
    """
    if "estimator" not in results or "indices" not in results:
        raise ValueError("from_cross_validate needs cross_validate(..., return_estimator=True, return_indices=True); "
                         f"got the keys {sorted(results)}.")
    models, tests = list(results["estimator"]), [np.asarray(t) for t in results["indices"]["test"]]
    trains = [np.asarray(t) for t in results["indices"]["train"]]
    n = _length(X, "X")
    y_arr = np.asarray(y)
    if y_arr.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {y_arr.shape[0]}; give one label per row.")
    loss = _resolve(loss, _task(models[0]), type(models[0]).__name__)
    scorer = _Scorer(loss, y_arr, None)
    design, folds, train_sizes = _design(list(zip(trains, tests)), n)
    losses = np.full(folds.shape, np.nan)
    for j, (model, test) in enumerate(zip(models, tests)):
        X_test = _rows(X, test)
        if loss.needs_proba:
            values = scorer(test, None, scorer.aligned_proba(model, model.predict_proba(X_test)))
        else:
            values = scorer(test, model.predict(X_test))
        losses[j // train_sizes.shape[1] if design == "kfold" else j, test] = values
    return CVLosses(losses, folds, train_sizes, design, loss, loss.bounds, name or type(models[0]).__name__,
                    models=models)
