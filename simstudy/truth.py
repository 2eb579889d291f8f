"""The true risk of fitted models: their expected loss on the population.

:func:`model_risks` picks the exact route available, in this order:

1. the learner's fast path for the 0-1 loss on a finite population
   (``learner.population_errors``: the numba CART's row bitsets, the population k-NN's
   neighbour lists);
2. the population's closed form (``population.exact_risks(learner, models, loss)``, e.g. the
   risk of a linear predictor in a Gaussian linear model), when it returns one;
3. the mean loss over the population's evaluation set (``population.evaluation_set()``): the
   whole data set of a finite population (exact, because training sets are drawn from it
   uniformly), or a large fixed sample of an infinite one (a Monte Carlo value whose error the
   population reports).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["model_risks", "truth_available"]


def truth_available(population: Any, learner: Any) -> str:
    """"" when :func:`model_risks` can give the true risk of this learner's models, else why not."""
    if callable(getattr(population, "exact_risks", None)) or callable(getattr(population, "evaluation_set", None)):
        if callable(getattr(learner, "predict_features", None)) or callable(getattr(learner, "population_errors", None)):
            return ""
        return f"learner {getattr(learner, 'name', learner)!r} cannot predict arbitrary features (no predict_features)"
    return f"population {getattr(population, 'name', population)!r} has neither an evaluation set nor exact risks"


def model_risks(learner: Any, models: Sequence[Any], population: Any, loss: Any) -> np.ndarray:
    """True risk (expected ``loss``) of each fitted model on ``population``.

    Parameters
    ----------
    learner : a simstudy learner (the one that fitted ``models``)
    models : sequence of fitted models
    population : a population with an evaluation set or exact risks
    loss : simstudy.losses.Loss

    Returns
    -------
    ndarray (len(models),)
    """
    if loss.name == "zero_one" and callable(getattr(learner, "population_errors", None)) \
            and hasattr(population, "X"):
        return np.asarray(learner.population_errors(list(models), population), dtype=float)
    exact = getattr(population, "exact_risks", None)
    if callable(exact):
        risks = exact(learner, models, loss)
        if risks is not None:
            return np.asarray(risks, dtype=float)
    X, y = population.evaluation_set(getattr(learner, "dtype", np.float64))
    out = np.empty(len(models))
    for i, model in enumerate(models):
        pred = learner.predict_features(model, X)
        proba = learner.predict_features_proba(model, X) if loss.needs_proba else None
        out[i] = np.mean(loss(y, pred, proba))
    return out
