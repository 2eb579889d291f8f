"""Conditional risks of the built-in classification losses, written out over the classes.

For a model with predicted labels g(x) and class probabilities q(x), and a population with
P(y = c | x), the conditional risk is m(x) = sum_c P(y = c | x) L(c, g(x), q(x)). For the
built-in losses (:mod:`simstudy.cv.losses`) each class term is the loss's own expression for
the label c, added in class order, so the values equal those of a loop calling the
:class:`~simstudy.cv.losses.Loss` once per class, bit for bit:

- zero_one: m = sum_c P_c 1{g != c};
- log_loss: m = -sum_c P_c log clip(q_c, eps, 1), the clipping of the built-in log loss;
- brier:    m = sum_c P_c (S - 2 q_c + 1) / 2 with S = sum_c' q_c'^2 (half the multi-class
  Brier score).

Binary models whose class-1 probability is expit(x.w + b) (a learner's ``probability_rule``:
scikit-learn's LinearDiscriminantAnalysis and LogisticRegression, the logistic kernel) are scored
from their rules, without the estimator's ``predict_proba`` and its input checks: d = X w + b
for a few models by one matrix product, then q_1 = expit(d), q_0 = 1 - q_1 as their
``predict_proba`` computes them. Only the rounding of the product may differ from the
estimator's X @ coef_.T (a unit or so in the last place of d).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["LOG_EPS", "PROBABILITY_LOSSES", "builtin_class_risks", "linear_probability_risks", "probability_rules"]

#: The clipping [eps, 1 - eps] of the built-in log loss (``simstudy.cv.losses``, a layer above
#: the populations, which cannot import it; a test ties the two).
LOG_EPS = 1e-15

#: The built-in losses scored from class probabilities.
PROBABILITY_LOSSES = ("log_loss", "brier")

#: Models whose decision values one matrix product computes.
_MODELS_PER_PRODUCT = 8

def builtin_class_risks(name: str, P: np.ndarray, predicted: np.ndarray | None,
                        proba: np.ndarray | None) -> np.ndarray:
    """m(x_i) of the built-in loss ``name`` (zero_one, log_loss or brier) at each point.

    Parameters
    ----------
    name : str
        The built-in loss.
    P : ndarray (N, C)
        P(y = c | x_i).
    predicted : ndarray (N,) or None
        Predicted labels (zero_one).
    proba : ndarray (N, width >= C) or None
        Predicted probabilities, column c for class c (log_loss, brier).
    """
    out = np.zeros(P.shape[0])
    if name == "zero_one":
        predicted = np.asarray(predicted)
        for c in range(P.shape[1]):
            out += P[:, c] * (predicted != c).astype(float)
        return out
    proba = np.asarray(proba, dtype=float)
    if name == "log_loss":
        for c in range(P.shape[1]):
            out += P[:, c] * -np.log(np.clip(proba[:, c], LOG_EPS, 1.0))
        return out
    if name == "brier":
        squares = np.sum(proba * proba, axis=1)
        for c in range(P.shape[1]):
            out += P[:, c] * (0.5 * (squares - 2 * proba[:, c] + 1))
        return out
    raise ValueError(f"no written-out conditional risk for the loss {name!r}.")


def probability_rules(learner: Any, models: Sequence[Any]) -> list[tuple[np.ndarray, float] | None]:
    """Per model, (w, b) with P(class 1) = expit(x.w + b) as the learner predicts it, else None."""
    read = getattr(learner, "probability_rule", None)
    if not callable(read):
        return [None] * len(models)
    return [read(model) for model in models]


def linear_probability_risks(name: str, P: np.ndarray, X: np.ndarray, W: np.ndarray,
                             b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the points of m(x) for the binary rules q_1 = expit(x.W_m + b_m).

    Parameters
    ----------
    name : {"log_loss", "brier"}
    P : ndarray (N, 2)
        P(y = c | x_i) of the evaluation points.
    X : ndarray (N, p)
        The evaluation points.
    W : ndarray (M, p), b : ndarray (M,)
        The models' coefficients and intercepts.

    Returns
    -------
    values, se : ndarray (M,)
        The mean of m over the points and sd(m) / sqrt(N), as :func:`builtin_class_risks`
        averaged model by model.
    """
    from scipy.special import expit
    from threadpoolctl import threadpool_limits

    if P.shape[1] != 2 or name not in PROBABILITY_LOSSES:
        raise ValueError(f"the linear route scores two classes with log_loss or brier; got {P.shape[1]} "
                         f"classes and {name!r}.")
    X = np.ascontiguousarray(X, dtype=np.float64)
    P0, P1 = np.ascontiguousarray(P[:, 0]), np.ascontiguousarray(P[:, 1])
    values, se = np.empty(W.shape[0]), np.empty(W.shape[0])
    # one matrix product reads X once for a few models (a product per model reads it every
    # time); the rest runs on one model's contiguous row in place, which stays in the caches
    buffer, q0 = np.empty((min(_MODELS_PER_PRODUCT, W.shape[0]), X.shape[0])), np.empty(X.shape[0])
    # one BLAS thread: replicates run in parallel processes, and threads over a product of a few
    # models only contend (as the learners' OpenMP threads, SklearnLearner.context)
    with threadpool_limits(limits=1, user_api="blas"):
        for start in range(0, W.shape[0], _MODELS_PER_PRODUCT):
            block = W[start:start + _MODELS_PER_PRODUCT]
            decision = np.matmul(block, X.T, out=buffer[:block.shape[0]])     # (models, N), C order
            for row, i in enumerate(range(start, start + block.shape[0])):
                q1 = decision[row]
                q1 += b[i]
                expit(q1, out=q1)
                np.subtract(1, q1, out=q0)
                m = _log_loss_terms(P0, P1, q0, q1) if name == "log_loss" else _brier_terms(P0, P1, q0, q1)
                values[i], se[i] = m.mean(), m.std(ddof=1) / np.sqrt(m.size)
    return values, se


def _log_loss_terms(P0, P1, q0, q1) -> np.ndarray:
    """-(P0 log clip(q0) + P1 log clip(q1)), overwriting q0 and q1 (negation commutes exactly
    with the products and the sum: the bits of P0 (-log q0) + P1 (-log q1))."""
    for q, weight in ((q0, P0), (q1, P1)):
        np.clip(q, LOG_EPS, 1.0, out=q)
        np.log(q, out=q)
        q *= weight
    q0 += q1
    return np.negative(q0, out=q0)


def _brier_terms(P0, P1, q0, q1) -> np.ndarray:
    """P0 (S - 2 q0 + 1) / 2 + P1 (S - 2 q1 + 1) / 2 with S = q0^2 + q1^2."""
    squares = q0 * q0 + q1 * q1
    m = P0 * (0.5 * (squares - 2 * q0 + 1))
    m += P1 * (0.5 * (squares - 2 * q1 + 1))
    return m
