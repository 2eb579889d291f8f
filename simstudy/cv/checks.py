"""What a learner's predictions and a loss's values must be, checked where they enter the engine.

- :func:`checked_fold_predictions`: one fold's ``learner.predict`` output is a 1-D array with one
  value per test row (a scalar, a column or a short array would be broadcast or misplaced when
  the folds' predictions are put together).
- :func:`check_predictions`: the predictions of a sample against its task: class labels of the
  sample (whole numbers among the sample's labels) for classification, finite numbers for
  regression; probabilities, where a loss needs them, of shape (n, classes) within [0, 1].
- :func:`checked_losses`: a loss's values, one finite number per point.

Each check is one vectorised pass over arrays the engine holds anyway; none changes a value. A
violation raises :class:`~simstudy.errors.PartOutputError` naming the part (``learner.predict``,
``learner.predict_proba``, ``loss``) and what it returned, which fails the replicate (recorded).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from simstudy.errors import PartOutputError

__all__ = ["check_predictions", "checked_fold_predictions", "checked_losses", "scored_losses"]

PREDICT = "learner.predict"


def checked_fold_predictions(pred: Any, rows: int, part: str = PREDICT) -> np.ndarray:
    """``pred`` as an array, if it holds one prediction per test row (shape ``(rows,)``)."""
    out = np.asarray(pred)
    if out.shape != (rows,):
        what = "a scalar" if out.ndim == 0 else f"shape {out.shape}" + (" (2-D, a column?)" if out.ndim == 2 else "")
        raise PartOutputError(f"{part} returned {what} for {rows} test rows; return a 1-D array with one prediction "
                              "per row (length == number of rows).")
    return out


def check_predictions(pred: Any, y: np.ndarray, task: str | None = None, proba: np.ndarray | None = None,
                      part: str = PREDICT, rows: int | None = None, guaranteed: bool = False) -> None:
    """Refuse predictions that do not fit the sample's labels ``y`` and its task.

    ``task`` None: classification when ``y`` holds integers, regression otherwise. ``rows``: the
    number of predictions expected (default ``len(y)``; fewer when a subset of the sample was
    predicted, whose class labels are still those of ``y``). ``guaranteed``: the learner
    declares :class:`~simstudy.contracts.GuaranteedOutputs`; the values (label set,
    finiteness) are then not checked, the shape and dtype still are.
    """
    rows = y.shape[0] if rows is None else rows
    pred = checked_fold_predictions(pred, rows, part)
    task = task or ("regression" if y.dtype.kind == "f" else "classification")
    if pred.dtype.kind not in "biuf":
        raise PartOutputError(f"{part} returned predictions of dtype {pred.dtype} (e.g. {pred[:1].tolist()}); "
                              f"return numbers ({'class labels' if task == 'classification' else 'real values'}).")
    if not guaranteed:
        _check_values(pred, y, task, part)
    if proba is not None:
        _check_proba(proba, rows)


def _check_values(pred: np.ndarray, y: np.ndarray, task: str, part: str) -> None:
    """Class labels of the sample (classification) or finite numbers (regression)."""
    if task == "classification":
        _check_labels(pred, y, part)
    elif pred.dtype.kind == "f" and not np.isfinite(pred).all():
        bad = ~np.isfinite(pred)
        raise PartOutputError(f"{part} returned {int(bad.sum())} non-finite prediction(s) ({pred[bad][0]}, NaN or "
                              "inf); a regressor must return finite numbers.")


def _check_labels(pred: np.ndarray, y: np.ndarray, part: str) -> None:
    """Predicted class labels are labels of the sample (the training sets' labels are among them)."""
    if pred.dtype.kind in "iu" and y.dtype.kind in "iu" and pred.size and _known_integers(pred, y):
        return
    classes = np.unique(y)
    place = np.minimum(np.searchsorted(classes, pred), classes.size - 1)
    known = classes[place] == pred
    if known.all():
        return
    odd = pred[~known][0]
    hint = " (probabilities? predict must return class labels)" if pred.dtype.kind == "f" and 0 < odd < 1 else ""
    shown = classes[:10].tolist()
    raise PartOutputError(f"{part} returned {int((~known).sum())} value(s) that are no class label of the sample, "
                          f"e.g. {odd}{hint}; the labels are {shown}{' ...' if classes.size > 10 else ''}: return "
                          "one of them for every row.")


def _known_integers(pred: np.ndarray, y: np.ndarray) -> bool:
    """True when every integer prediction is a label of ``y`` (integers), decided cheaply: within
    the labels' range with at most two labels there, or by a table of the labels present; False
    means "not decided here" (the exact check follows)."""
    low, high = y.min(), y.max()
    if pred.min() < low or pred.max() > high:
        return False
    span = int(high) - int(low) + 1
    if span <= 2:
        return True
    if span > 4 * y.size + 64:
        return False
    present = np.zeros(span, dtype=bool)
    present[y - low] = True
    return bool(present[pred - low].all())


def _check_proba(proba: np.ndarray, n: int, part: str = "learner.predict_proba") -> None:
    proba = np.asarray(proba)
    if proba.ndim != 2 or proba.shape[0] != n:
        raise PartOutputError(f"{part} returned shape {proba.shape} for {n} rows; return an array (rows, classes).")
    if not (np.isfinite(proba).all() and proba.min(initial=0.0) >= 0.0 and proba.max(initial=0.0) <= 1.0 + 1e-9):
        raise PartOutputError(f"{part} returned values outside [0, 1] or non-finite (min {np.nanmin(proba)}, max "
                              f"{np.nanmax(proba)}); return class probabilities in [0, 1].")


def checked_losses(values: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    """A loss's values as floats, if there is one finite value per point (``shape``: that of ``y``)."""
    out = np.asarray(values, dtype=float)
    if out.shape != shape:
        n = int(np.prod(shape))
        what = "a scalar" if out.ndim == 0 else f"shape {out.shape}"
        raise PartOutputError(f"loss {name!r} returned {what} for {n} points; a loss must return one value per "
                              "point (length == number of points), not their mean.")
    if not np.isfinite(out).all():
        bad = ~np.isfinite(out)
        raise PartOutputError(f"loss {name!r} returned {int(bad.sum())} non-finite value(s) ({out[bad][0]}: NaN or "
                              f"inf) for {out.size} points; a loss must return finite numbers.")
    return out


def scored_losses(loss: Any, y: np.ndarray, pred: Any, proba: np.ndarray | None = None,
                  task: str | None = None, guaranteed: bool = False) -> np.ndarray:
    """Per-point losses of predictions ``pred`` of labels ``y``, both checked (:func:`check_predictions`;
    ``guaranteed``: the learner declares :class:`~simstudy.contracts.GuaranteedOutputs`)."""
    check_predictions(pred, y, task, proba if getattr(loss, "needs_proba", False) else None, guaranteed=guaranteed)
    return loss(y, pred, proba)
