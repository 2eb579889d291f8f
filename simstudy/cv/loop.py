"""The one K-fold loop, and fitting on any split design, for every study and nested CV.

:func:`cross_validate` is K-fold cross-validation of one prepared sample through the learner
protocol (:mod:`simstudy.learners.base`); a learner's one-call kernel (the numba CART) is used
behind it when it has one, with the same fits in the same order, so the numbers do not depend
on which path ran. :func:`cross_validate_batch` does the same for a chunk of samples at once
(the batched linear kernels), and :func:`split_losses` fits and scores any sequence of
train/test splits (5x2, repeated train/validation, nested CV's pair fits).

Random numbers: fold k's fit draws from the replicate's generator after folds 0..k-1, exactly
as K consecutive ``learner.fit`` calls do.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simstudy.learners.base import BatchFolds, Folds

__all__ = ["cross_validate", "cross_validate_batch", "split_losses", "fold_members"]


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
        pred = np.asarray(learner.predict(state, model, everyone[test]))
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
        predictions = many(state, train_rows, test_rows, rng)
        return [loss(y[rows], pred, None) for rows, pred in zip(test_rows, predictions)]
    return [score(learner, state, learner.fit(state, train, rng), test, y, loss)
            for train, test in zip(train_rows, test_rows)]


def score(learner: Any, state: Any, model: Any, rows: np.ndarray, y: np.ndarray, loss: Any) -> np.ndarray:
    """Per-point losses of ``model`` on the sample's rows ``rows`` (probabilities when the loss needs them)."""
    pred = learner.predict(state, model, rows)
    proba = learner.predict_proba(state, model, rows) if loss.needs_proba else None
    return loss(y[rows], pred, proba)
