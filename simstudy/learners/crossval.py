"""K-fold cross-validation of one sample with any learner: the fold loop, or the learner's
own one-call kernel when it has one (``learner.cross_validate``, e.g. the numba CART)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CrossValidation", "cross_validate"]


@dataclass(frozen=True)
class CrossValidation:
    """K-fold CV of one sample.

    Attributes
    ----------
    losses : ndarray (n,)
        Each row's 0-1 loss under the model trained without the row's fold.
    models : list or None
        ``models[k]`` was trained without fold k (None when not kept).
    """

    losses: np.ndarray
    models: list | None


def cross_validate(learner, X, y: np.ndarray, labels: np.ndarray, K: int, rng: np.random.Generator,
                   keep_models: bool = True) -> CrossValidation:
    """K-fold CV of ``learner`` on a prepared sample (``X = learner.prepare(features)``).

    Folds are fitted in order k = 0..K-1 on the rows with ``labels != k``, each fit drawing
    from ``rng`` as :meth:`fit` does, so a learner's one-call kernel and this loop give the same
    numbers.

    Parameters
    ----------
    learner : a simstudy learner (``prepare``, ``fit``, ``predict``)
    X : prepared features of the sample
    y : ndarray (n,)
    labels : ndarray (n,) of int, the fold of each row
    K : int
    rng : numpy Generator of the replicate
    keep_models : bool
        Keep the fold models (e.g. for their exact errors on a population).
    """
    if hasattr(learner, "cross_validate"):
        return learner.cross_validate(X, y, labels, K, rng, keep_models)
    losses = np.empty(len(y))
    models = []
    for k in range(K):
        test = labels == k
        model = learner.fit(X[~test], y[~test], rng)
        losses[test] = learner.predict(model, X[test]) != y[test]
        models.append(model)
    return CrossValidation(losses, models if keep_models else None)
