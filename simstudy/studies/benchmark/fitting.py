"""The fitting side: one model per split of a plan, its losses where the plan evaluates, and
the true errors of the models the truths need.

For a sample of n points and a drawn :class:`~simstudy.inference.procedures.SplitPlan`, split s
trains on every point i ``plan.train[s, i]`` times (bootstrap counts repeat a row) and its model
is scored at the points ``plan.evaluate[s]`` (its test points; every point for the bootstrap).
A residual mechanism (gaussian_folds) has no model: its K-fold CV losses are drawn directly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.cv.loop import score
from simstudy.inference.procedures import BootstrapDesign, KFoldDesign, SplitPlan, no_information_error
from simstudy.populations.truth import true_risks

__all__ = ["FittedPlan", "fit_plan", "fit_full", "no_information", "residual_losses", "split_models"]


@dataclass
class FittedPlan:
    """The losses of one learner on one plan, and the true errors the truths need.

    Attributes
    ----------
    losses : ndarray (S, n)
        NaN where the plan does not evaluate.
    risks : ndarray (S,)
        True error of the split models with a non-zero truth weight (NaN elsewhere).
    no_information : float or None
        The no-information error gamma of the model trained on all n points (bootstrap plans).
    """

    losses: np.ndarray
    risks: np.ndarray
    no_information: float | None = None


def no_information(loss: Any, y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, task: str) -> float:
    """gamma = (1/n^2) sum_i sum_j L(y_i, f(x_j)).

    Classification: gamma = sum_c p_c mean_j L(c, f(x_j)), p_c the share of class c among the
    labels (the double sum grouped by the label y_i), which also serves losses of probabilities
    (log loss, Brier); regression: :func:`~simstudy.inference.procedures.no_information_error`.
    """
    if task == "classification":
        classes, counts = np.unique(y, return_counts=True)
        return float(sum(p * np.mean(loss(np.full(y.shape, c), pred, proba))
                         for c, p in zip(classes, counts / y.size)))
    return no_information_error(loss.function, y, pred)


def split_models(learner: Any, state: Any, plan: SplitPlan, rng: np.random.Generator) -> list:
    """One model per split. The batched linear kernels (:mod:`simstudy.learners.linear.batched`: ridge,
    LDA) fit every split in one call from its training weights (the bootstrap counts are weights),
    the same rules as one fit per split; any other learner fits split by split from ``rng``."""
    batch = getattr(learner, "fit_weighted", None)
    if callable(batch) and hasattr(state, "X"):
        rules = batch(state.X[None], state.y[None], plan.train[None].astype(float))
        return [type(rules)(rules.w[:, s:s + 1], rules.b[:, s:s + 1]) for s in range(plan.splits)]
    everyone = np.arange(plan.n)
    return [learner.fit(state, np.repeat(everyone, plan.train[s]), rng) for s in range(plan.splits)]


def fit_plan(learner: Any, state: Any, sample: Any, loss: Any, plan: SplitPlan, weights: np.ndarray | None,
             population: Any, rng: np.random.Generator, task: str) -> FittedPlan:
    """Fit one model per split (in split order, all from ``rng``), score it where the plan evaluates.

    ``weights`` (S,) are the truth weights of :func:`~.truth.estimate_weights`: the true error is
    computed for the models with a non-zero weight only (none when None).
    """
    n, y = plan.n, sample.y
    everyone = np.arange(n)
    losses = np.full((plan.splits, n), np.nan)
    models = split_models(learner, state, plan, rng)
    for s, model in enumerate(models):
        rows = everyone[plan.evaluate[s]]
        losses[s, rows] = score(learner, state, model, rows, y, loss)
    risks = np.full(plan.splits, np.nan)
    if weights is not None:
        used = np.flatnonzero(weights > 0)
        risks[used] = true_risks(learner, [models[s] for s in used], population, loss).values
    gamma = None
    if isinstance(plan.design, BootstrapDesign):   # split 0 trains on the whole sample
        pred = learner.predict(state, models[0], everyone)
        proba = learner.predict_proba(state, models[0], everyone) if loss.needs_proba else None
        gamma = no_information(loss, y, pred, proba, task)
    return FittedPlan(losses, risks, gamma)


def fit_full(learner: Any, state: Any, n: int, loss: Any, population: Any, rng: np.random.Generator) -> tuple:
    """The true error (and its Monte Carlo error) of the model trained on all n points."""
    model = learner.fit(state, np.arange(n), rng)
    risk = true_risks(learner, [model], population, loss)
    return float(risk.values[0]), float(risk.mc_se[0])


def residual_losses(population: Any, plan: SplitPlan, rng: np.random.Generator) -> np.ndarray:
    """K-fold CV losses drawn directly from a residual population: fold k's points get block k
    of ``population.residual_blocks(K, n / K, rng)`` (exchangeable folds: the order within a
    fold does not matter)."""
    if not isinstance(plan.design, KFoldDesign) or plan.n % plan.design.K:
        raise ValueError("a residual mechanism gives K-fold CV losses only, with n a multiple of K.")
    K = plan.design.K
    blocks = population.residual_blocks(K, plan.n // K, rng)
    losses = np.full((K, plan.n), np.nan)
    for k in range(K):
        losses[k, plan.test[k]] = blocks[k]
    return losses
