"""The one K-fold loop, and fitting on any split design, for every study and nested CV.

:func:`cross_validate` is K-fold cross-validation of one prepared sample through the learner
protocol (:mod:`simstudy.learners.base`); a learner's one-call kernel (the numba CART) is used
behind it when it has one, with the same fits in the same order, so the numbers do not depend
on which path ran. :func:`cross_validate_batch` does the same for a chunk of samples at once
(the batched linear kernels), :func:`split_losses` fits and scores any sequence of
train/test splits (5x2, repeated train/validation), and :func:`nested_cv_losses` runs the fits of
nested cross-validation (Bates, Hastie & Tibshirani 2023).

Random numbers: fold k's fit draws from the replicate's generator after folds 0..k-1, exactly
as K consecutive ``learner.fit`` calls do.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from simstudy.contracts import guarantees_outputs
from simstudy.cv.checks import check_predictions, checked_fold_predictions
from simstudy.cv.splits import KFold
from simstudy.errors import PartOutputError
from simstudy.learners.base import BatchFolds, Folds

__all__ = ["NestedCVLosses", "cross_validate", "cross_validate_batch", "fold_members", "nested_cv_losses",
           "split_losses"]


def fold_members(labels: np.ndarray, K: int) -> list[np.ndarray]:
    """Row positions of each fold, ascending (``labels`` holds each row's fold 0..K-1)."""
    return [np.flatnonzero(labels == k) for k in range(K)]


def cross_validate(learner: Any, state: Any, labels: np.ndarray, K: int, rng: np.random.Generator,
                   keep_models: bool = False, proba: bool = False) -> Folds:
    """K-fold CV of ``learner`` on a prepared sample (``state = learner.start(sample)``).

    Fold k's model is ``learner.fit(state, rows not in fold k, rng)`` (folds in order
    k = 0..K-1) and predicts the rows of fold k. Folds may have unequal sizes.

    Parameters
    ----------
    learner : a simstudy learner
    state : the learner's prepared sample
    labels : ndarray (n,) of int
        The fold of each row, 0..K-1.
    K : int
    rng : numpy Generator of the replicate
    keep_models : bool
        Keep the fold models (e.g. for their exact risks on a population).
    proba : bool
        Also return predicted class probabilities (``learner.predict_proba``; loop path).

    Returns
    -------
    Folds
    """
    if not proba and callable(getattr(learner, "cross_validate", None)):
        return learner.cross_validate(state, labels, K, rng, keep_models)
    n = labels.shape[0]
    everyone = np.arange(n)
    predictions = None
    probabilities = None
    models = []
    for k in range(K):
        test = labels == k
        model = learner.fit(state, everyone[~test], rng)
        rows = everyone[test]
        pred = checked_fold_predictions(learner.predict(state, model, rows), rows.size)
        if predictions is None:
            predictions = np.empty(n, dtype=pred.dtype)
        predictions[test] = pred
        if proba:
            p = learner.predict_proba(state, model, everyone[test])
            if probabilities is None:
                probabilities = np.zeros((n, p.shape[1]))
            width = min(p.shape[1], probabilities.shape[1])
            probabilities[test, :width] = p[:, :width]
        if keep_models:
            models.append(model)
    return Folds(predictions, models if keep_models else None, probabilities)


def cross_validate_batch(learner: Any, X: np.ndarray, y: np.ndarray, labels: np.ndarray, K: int) -> BatchFolds:
    """K-fold CV of R samples at once with a learner's chunk-level kernel.

    Parameters
    ----------
    X : ndarray (R, n, p)
    y : ndarray (R, n)
    labels : ndarray (R, n)
        Fold labels of each sample.
    """
    return learner.cross_validate_batch(X, y, labels, K)


def split_losses(learner: Any, state: Any, y: np.ndarray, loss: Any, tests: Sequence[np.ndarray],
                 rng: np.random.Generator, trains: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """Per-point test losses of one fit per split, in order.

    Split j trains on ``trains[j]`` (default: the rows not in ``tests[j]``) and is scored on the
    rows ``tests[j]`` (boolean masks or position arrays). A learner's ``split_predictions`` fast
    path makes all the fits in one call when the loss needs no probabilities (the same numbers).
    """
    n = y.shape[0]
    everyone = np.arange(n)
    test_rows, train_rows = [], []
    for j, test in enumerate(tests):
        rows = everyone[test] if np.asarray(test).dtype == bool else np.asarray(test)
        test_rows.append(rows)
        if trains is None:
            keep = np.ones(n, dtype=bool)
            keep[rows] = False
            train_rows.append(everyone[keep])
        else:
            train = trains[j]
            train_rows.append(everyone[train] if np.asarray(train).dtype == bool else np.asarray(train))
    many = getattr(learner, "split_predictions", None)
    if callable(many) and not loss.needs_proba:      # all fits in one call: the same fits, draws and predictions
        predictions = list(many(state, train_rows, test_rows, rng))
        if len(predictions) != len(test_rows):
            raise PartOutputError(f"learner.split_predictions returned {len(predictions)} prediction arrays for "
                                  f"{len(test_rows)} splits; return one per split, in order.")
        guaranteed = guarantees_outputs(learner)
        for rows, pred in zip(test_rows, predictions):
            check_predictions(pred, y, rows=rows.size, part="learner.split_predictions", guaranteed=guaranteed)
        return [loss(y[rows], pred, None) for rows, pred in zip(test_rows, predictions)]
    return [score(learner, state, learner.fit(state, train, rng), test, y, loss)
            for train, test in zip(train_rows, test_rows)]


def score(learner: Any, state: Any, model: Any, rows: np.ndarray, y: np.ndarray, loss: Any) -> np.ndarray:
    """Per-point losses of ``model`` on the sample's rows ``rows`` (probabilities when the loss needs them)."""
    pred = learner.predict(state, model, rows)
    proba = learner.predict_proba(state, model, rows) if loss.needs_proba else None
    check_predictions(pred, y, proba=proba, rows=np.size(rows), guaranteed=guarantees_outputs(learner))
    return loss(y[rows], pred, proba)


@dataclass(frozen=True)
class NestedCVLosses:
    """Losses of nested cross-validation (Algorithm 1 of Bates, Hastie & Tibshirani 2023).

    Folds of unequal sizes are stored NaN-padded to the largest size m = ceil(n/K); fold k's
    losses are in the order of its points' positions.

    Attributes
    ----------
    pair_losses : ndarray, shape (R, K, K, m)
        ``pair_losses[r, k, j]`` are the losses on fold j of the model trained without folds
        k and j (repetition r): the inner CV of outer fold k. The diagonal (j = k) is NaN.
    outer_losses : ndarray, shape (R, K, m)
        ``outer_losses[r, k]`` are the losses on fold k of the model trained without fold k
        (ordinary K-fold CV of repetition r).
    labels : ndarray of int, shape (R, n)
        Fold labels of each repetition.
    """

    pair_losses: np.ndarray
    outer_losses: np.ndarray
    labels: np.ndarray


def nested_cv_losses(losses: Callable[[np.ndarray, np.ndarray], np.ndarray] | None, n: int, K: int, repetitions: int,
                     rng: np.random.Generator, first_labels: np.ndarray | None = None,
                     first_outer_losses: np.ndarray | None = None,
                     many_losses: Callable[[list, list], list] | None = None) -> NestedCVLosses:
    """Run nested K-fold CV ``repetitions`` times with random fold assignments.

    The inner CV of outer fold k trains, for each j != k, on the data without folds k and j
    and tests on fold j. That model is also the one the inner CV of outer fold j uses for
    fold k, so each repetition needs K (K - 1) / 2 pair fits plus the K outer fits, not
    K (K - 1) + K.

    Parameters
    ----------
    losses : callable ``(train_positions, test_positions) -> losses``
        Fits the learner on the training positions (indices 0..n-1 into the sample) and
        returns the loss of each test position, in the order given (finite numbers).
    n, K, repetitions : int
        n >= 2K (every fold at least 2 points: the within-fold variance), K >= 3 (the inner
        CV needs two training folds). n need not be a multiple of K: folds then have sizes
        floor(n/K) and ceil(n/K) (:class:`KFold`), stored NaN-padded.
    rng : Generator
        Draws the fold assignments of repetitions not given.
    first_labels, first_outer_losses : ndarray (n,), optional
        The fold labels (0..K-1) of an ordinary K-fold CV already run on the same sample, and
        its per-point losses in sample order: repetition 0 reuses them (no outer refits).
    many_losses : callable ``(trains, tests) -> list of losses``, optional
        The fits of a repetition at once, instead of ``losses`` (pass None for it): called
        once per repetition, after its fold labels are drawn, with its splits in the order
        ``losses`` would be called (the pair fits, then the outer fits), so a learner drawing
        random numbers per fit (even from ``rng``) draws the same ones.

    Raises
    ------
    ValueError
        If n < 2K (the message names the smallest valid n), K < 3, repetitions < 1, a fold of
        ``first_labels`` has fewer than 2 points, or a loss is not finite.

    Notes
    -----
    Unequal folds are generalised, not refused: see :mod:`simstudy.inference.nested` for what
    Algorithm 1 and the corrections do with them (the authors' package assumes equal folds).
    """
    if K < 3:
        raise ValueError(f"nested CV needs K >= 3 folds; got K={K}.")
    if repetitions < 1:
        raise ValueError(f"nested CV needs at least 1 repetition; got {repetitions}.")
    if n < 2 * K:
        raise ValueError(f"nested CV needs at least 2 points per fold (n >= 2K); got n={n}, K={K}. "
                         f"The smallest valid n is {2 * K}, or use a smaller K (at most {n // 2}).")
    if first_labels is not None:
        sizes = np.bincount(np.asarray(first_labels), minlength=K)
        if sizes.size != K or np.any(sizes < 2) or len(first_labels) != n:
            raise ValueError(f"first_labels must give each of n={n} points a fold 0..{K - 1}, with at least 2 points "
                             f"per fold; got fold sizes {sizes.tolist()}.")
    if (losses is None) == (many_losses is None):
        raise ValueError("nested CV needs exactly one of losses (one fit per call) and many_losses (all fits in one "
                         "call).")
    m = -(-n // K)
    pair = np.full((repetitions, K, K, m), np.nan)
    outer = np.full((repetitions, K, m), np.nan)
    all_labels = np.empty((repetitions, n), dtype=np.int64)
    for r in range(repetitions):
        labels = np.asarray(first_labels) if (r == 0 and first_labels is not None) else KFold(K).labels(n, rng)
        all_labels[r] = labels
        members = [np.flatnonzero(labels == k) for k in range(K)]
        trains, tests, places = [], [], []   # the repetition's fits, in order, and where their losses go
        for a in range(K):
            for b in range(a + 1, K):
                tests.append(np.concatenate([members[a], members[b]]))
                trains.append(np.flatnonzero((labels != a) & (labels != b)))
                places.append((a, b, members[a].size))
        for k in range(K):
            if r == 0 and first_outer_losses is not None:
                outer[r, k, :members[k].size] = _finite(np.asarray(first_outer_losses)[members[k]], members[k].size)
            else:
                tests.append(members[k])
                trains.append(np.flatnonzero(labels != k))
                places.append((k, -1, members[k].size))
        for (a, b, ma), test, loss in zip(places, tests, _fit_splits(losses, many_losses, trains, tests)):
            loss = _finite(loss, test.size)
            if b < 0:                                        # outer fold a
                outer[r, a, :ma] = loss
            else:                                            # fold a without {a, b}: outer fold b, and vice versa
                pair[r, b, a, :ma], pair[r, a, b, :test.size - ma] = loss[:ma], loss[ma:]
    return NestedCVLosses(pair, outer, all_labels)


def _fit_splits(losses, many_losses, trains: list, tests: list):
    """The losses of each split: one ``many_losses`` call, or ``losses`` split by split (lazily, in order)."""
    if many_losses is None:
        return map(losses, trains, tests)
    fitted = list(many_losses(trains, tests))
    if len(fitted) != len(trains):
        raise ValueError(f"many_losses returned {len(fitted)} loss arrays for {len(trains)} splits; return one per "
                         "split, in order.")
    return fitted


def _finite(values, size: int) -> np.ndarray:
    """Losses of one fit as floats, checked: one finite value per test point."""
    out = np.asarray(values, dtype=float)
    if out.shape != (size,):
        raise ValueError(f"the losses callable returned shape {out.shape} for {size} test points; return one loss "
                         "per test point.")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the losses callable returned {int(np.sum(~np.isfinite(out)))} non-finite loss(es) (NaN or "
                         "inf); nested CV needs finite losses (NaN marks padding).")
    return out
