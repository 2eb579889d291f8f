"""The true risk of fitted models: their expected loss on the population.

:func:`model_risks` picks the exact route available, in this order:

1. the learner's fast path for the 0-1 loss on a finite population
   (``learner.population_errors``: the numba CART's row bitsets, the population k-NN's
   neighbour lists);
2. the population's closed form (``population.exact_risks(learner, models, loss)``, e.g. the
   risk of a linear predictor in a Gaussian linear model), when it returns one;
3. the mean loss over the population's evaluation set (``population.evaluation_set()``,
   weighted by ``population.evaluation_weights`` when the population has them): the whole
   data set of a finite population (exact, because training sets are drawn from it
   uniformly), or a large fixed sample of an infinite one (``population.evaluation_is_sample``:
   a Monte Carlo value, whose standard error sd(loss) / sqrt(N) :func:`true_risks` reports).

A population's ``exact_risks`` returns an array (exact values), a :class:`RiskValues` (values
with their Monte Carlo errors) or None (no closed form for this learner, model or loss).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from simstudy.populations.base import finite_data
from simstudy.populations.checks import checked_evaluation_set

__all__ = ["RiskValues", "check_evaluation_set", "missing_truth", "model_risks", "true_risks", "truth_available"]


@dataclass(frozen=True)
class RiskValues:
    """True risks of fitted models and the Monte Carlo standard error of each (0 where exact)."""

    values: np.ndarray
    mc_se: np.ndarray


def truth_available(population: Any, learner: Any) -> bool:
    """Whether :func:`model_risks` can give the true risk of this learner's models on this population."""
    return not missing_truth(population, learner)


def missing_truth(population: Any, learner: Any) -> str:
    """Why :func:`model_risks` cannot give the true risk of this learner's models ("" when it can)."""
    if callable(getattr(population, "exact_risks", None)) or callable(getattr(population, "evaluation_set", None)):
        if callable(getattr(learner, "predict_features", None)) or callable(getattr(learner, "population_errors", None)):
            return ""
        return f"learner {getattr(learner, 'name', learner)!r} cannot predict arbitrary features (no predict_features)"
    return f"population {getattr(population, 'name', population)!r} has neither an evaluation set nor exact risks"


def check_evaluation_set(population: Any) -> None:
    """Check a population's evaluation set once before a run that needs the truth, so that a
    broken one stops the run (:class:`~simstudy.errors.PartOutputError`) instead of failing
    every replicate. Finite populations (checked when built) and populations without an
    evaluation set are left alone."""
    if finite_data(population) is None and callable(getattr(population, "evaluation_set", None)):
        checked_evaluation_set(population)


def model_risks(learner: Any, models: Sequence[Any], population: Any, loss: Any) -> np.ndarray:
    """True risk (expected ``loss``) of each fitted model on ``population`` (the values of :func:`true_risks`)."""
    return true_risks(learner, models, population, loss).values


def true_risks(learner: Any, models: Sequence[Any], population: Any, loss: Any) -> RiskValues:
    """True risk (expected ``loss``) of each fitted model on ``population``, with its Monte Carlo error.

    Parameters
    ----------
    learner : a simstudy learner (the one that fitted ``models``)
    models : sequence of fitted models
    population : a population with an evaluation set or exact risks
    loss : simstudy.cv.losses.Loss

    Returns
    -------
    RiskValues
        ``values`` and ``mc_se``, arrays of length ``len(models)``.
    """
    zero = np.zeros(len(models))
    if loss.name == "zero_one" and callable(getattr(learner, "population_errors", None)) \
            and finite_data(population) is not None:
        return RiskValues(np.asarray(learner.population_errors(list(models), population), dtype=float), zero)
    exact = getattr(population, "exact_risks", None)
    if callable(exact):
        risks = exact(learner, models, loss)
        if isinstance(risks, RiskValues):
            return risks
        if risks is not None:
            return RiskValues(np.asarray(risks, dtype=float), zero)
    X, y = checked_evaluation_set(population, getattr(learner, "dtype", np.float64))
    weights = getattr(population, "evaluation_weights", None)
    sampled = bool(getattr(population, "evaluation_is_sample", False))
    out, se = np.empty(len(models)), zero.copy()
    for i, model in enumerate(models):
        pred = learner.predict_features(model, X)
        proba = learner.predict_features_proba(model, X) if loss.needs_proba else None
        values = loss(y, pred, proba)
        out[i] = np.average(values, weights=weights)
        if sampled:
            se[i] = np.std(values, ddof=1) / np.sqrt(values.size)
    return RiskValues(out, se)
