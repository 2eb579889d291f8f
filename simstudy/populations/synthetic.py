"""Synthetic populations with known truth."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from simstudy.populations.base import Population, Sample

__all__ = ["LogisticPopulation", "logistic_bayes_error", "logistic_alpha_for_bayes_error"]

#: Direction of the logistic model of Nedelko: P(y=1|x) = sigmoid(alpha * w1.x), w1 = (1, 1).
W1 = np.array([1.0, 1.0])


def logistic_bayes_error(alpha: float) -> float:
    """Bayes error of Nedelko's 2-D logistic model for slope ``alpha``.

    With x ~ N(0, I_2) and s = w1.x ~ N(0, |w1|^2 = 2), the Bayes rule predicts sign(s) and
    errs with probability min(p, 1-p) = sigmoid(-alpha |s|):

        R0(alpha) = 2 * int_0^inf sigmoid(-alpha s) phi(s; 0, 2) ds.
    """
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0; got {alpha}.")
    sd = np.sqrt(W1 @ W1)

    def integrand(s):
        return special.expit(-alpha * s) * np.exp(-0.5 * (s / sd) ** 2) / (sd * np.sqrt(2 * np.pi))

    value, _ = integrate.quad(integrand, 0.0, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)
    return 2.0 * value


@lru_cache(maxsize=256)
def logistic_alpha_for_bayes_error(bayes_error: float) -> float:
    """Solve R0(alpha) = bayes_error for alpha (R0 decreases from 1/2 at alpha = 0 to 0)."""
    if not 0 < bayes_error < 0.5:
        raise ValueError(
            f"population.bayes_error must lie strictly between 0 and 0.5; got {bayes_error}."
        )
    hi = 1.0
    while logistic_bayes_error(hi) > bayes_error:
        hi *= 2.0
    return optimize.brentq(lambda a: logistic_bayes_error(a) - bayes_error, 0.0, hi, xtol=1e-14, rtol=1e-13)


class LogisticPopulation(Population):
    """Nedelko's model: x ~ N(0, I_2), P(y = 1 | x) = 1 / (1 + exp(-alpha w1.x)), w1 = (1, 1).

    Parameters
    ----------
    bayes_error : float in (0, 0.5)
        Target Bayes error R0; alpha is solved numerically from it.
    """

    name = "logistic"

    def __init__(self, bayes_error: float = 0.2):
        self.bayes_error = float(bayes_error)
        self.alpha = logistic_alpha_for_bayes_error(self.bayes_error)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "logistic", "bayes_error": self.bayes_error}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "alpha": self.alpha}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        X = rng.standard_normal((n, 2))
        p = special.expit(self.alpha * (X @ W1))
        y = (rng.random(n) < p).astype(np.int64)
        return Sample(X=X, y=y)
