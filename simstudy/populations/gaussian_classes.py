"""Two Gaussian classes with a shared covariance: exact 0-1 risk of every linear rule.

The model (Fisher's linear discriminant model): y ~ Bernoulli(pi), x | y = k ~ N(mu_k, Sigma)
with Sigma_ij = correlation^|i - j|, mu_1 = d / 2 and mu_0 = -d / 2. The mean difference d is
non-zero on the first ``support`` features only (equal entries), scaled so that the Mahalanobis
distance between the classes is Delta = ``separation``: d' Sigma^-1 d = Delta^2. Presets:
balanced classes, 10% positives (class imbalance), and p = 100 features with a support of 5
(high-dimensional sparse).

Truth.

- A rule "predict 1 iff x.w + b > 0" (logistic regression, LDA, ridge, a constant rule): its
  score is N(w.mu_k + b, s^2) given y = k, s^2 = w' Sigma w, so its 0-1 risk is exactly

      R(w, b) = pi Phi(-(w.mu_1 + b) / s) + (1 - pi) Phi((w.mu_0 + b) / s)

  (s = 0: pi 1{b <= 0} + (1 - pi) 1{b > 0}). The Bayes rule is the linear rule w = Sigma^-1 d,
  b = logit(pi), with Bayes error pi Phi(-Delta/2 - logit(pi)/Delta) + (1 - pi) Phi(-Delta/2 +
  logit(pi)/Delta) (Phi(-Delta/2) for balanced classes).
- Any other model or loss: P(y = 1 | x) = expit(x' Sigma^-1 d + logit(pi)) is known, so the
  conditional risk is averaged over a fixed sample of x (:mod:`simstudy.populations.conditional`).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simstudy.lazy import LazyModule
from simstudy.populations.base import Population, Sample
from simstudy.populations.conditional import ConditionalClassTruth, builtin_loss_name
from simstudy.populations.linear_rules import linear_rules

special = LazyModule("scipy.special")

__all__ = ["GaussianClassesPopulation", "gaussian_rule_risk", "gaussian_bayes_error"]


def gaussian_rule_risk(w, b, mu0, mu1, Sigma, positive_rate: float) -> np.ndarray:
    """Exact 0-1 risk of the rules "1 iff x.w + b > 0" when x | y = k ~ N(mu_k, Sigma), P(y = 1) = pi.

    Parameters
    ----------
    w : array_like (..., p)
    b : array_like (...)
    mu0, mu1 : array_like (p,)
    Sigma : array_like (p, p)
    positive_rate : float in (0, 1)

    Returns
    -------
    ndarray (...)
        pi Phi(-(w.mu1 + b) / s) + (1 - pi) Phi((w.mu0 + b) / s), s = sqrt(w' Sigma w).
    """
    w = np.asarray(w, dtype=float)
    b = np.asarray(b, dtype=float)
    s = np.sqrt(np.maximum(np.einsum("...i,ij,...j->...", w, np.asarray(Sigma, dtype=float), w), 0.0))
    m1, m0 = w @ np.asarray(mu1, dtype=float) + b, w @ np.asarray(mu0, dtype=float) + b
    pi = float(positive_rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = pi * special.ndtr(-m1 / s) + (1 - pi) * special.ndtr(m0 / s)
    constant = np.where(b > 0, 1 - pi, pi)          # w = 0: the score is b everywhere
    return np.where(s > 0, scaled, constant)


def gaussian_bayes_error(separation: float, positive_rate: float) -> float:
    """Bayes error pi Phi(-Delta/2 - l/Delta) + (1 - pi) Phi(-Delta/2 + l/Delta), l = logit(pi)."""
    delta, pi = float(separation), float(positive_rate)
    logit = np.log(pi / (1 - pi))
    return float(pi * special.ndtr(-delta / 2 - logit / delta) + (1 - pi) * special.ndtr(-delta / 2 + logit / delta))


def _check(p, support, separation, positive_rate, correlation, evaluation_size) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
        raise ValueError(f"population.p={p!r} is invalid: use a positive number of features.")
    if isinstance(support, bool) or not isinstance(support, (int, np.integer)) or not 1 <= support <= p:
        raise ValueError(f"population.support={support!r} is invalid: the number of features that separate the "
                         f"classes must lie in [1, p={p}] (null: all p).")
    if isinstance(separation, bool) or not isinstance(separation, (int, float)) or not separation > 0:
        raise ValueError(f"population.separation={separation!r} is invalid: use a positive Mahalanobis distance "
                         "between the class means (2 gives a Bayes error of 0.159 with balanced classes).")
    if isinstance(positive_rate, bool) or not isinstance(positive_rate, (int, float)) or not 0 < positive_rate < 1:
        raise ValueError(f"population.positive_rate={positive_rate!r} is invalid: P(y = 1) must lie in (0, 1), "
                         "e.g. 0.1 for 10% positives.")
    if isinstance(correlation, bool) or not isinstance(correlation, (int, float)) or not -1 < correlation < 1:
        raise ValueError(f"population.correlation={correlation!r} is invalid: it must lie in (-1, 1).")
    if isinstance(evaluation_size, bool) or not isinstance(evaluation_size, (int, np.integer)) \
            or evaluation_size < 1000:
        raise ValueError(f"population.evaluation_size={evaluation_size!r} is invalid: use at least 1000 points "
                         "(the Monte Carlo error of the truth shrinks as 1/sqrt(size)).")


class GaussianClassesPopulation(ConditionalClassTruth, Population):
    """Two Gaussian classes with covariance Sigma (AR(1)) and Mahalanobis distance ``separation``.

    Parameters
    ----------
    p : int
        Number of features.
    support : int or None
        Features on which the class means differ (the first ``support``; None: all p).
    separation : float > 0
        Mahalanobis distance Delta between the class means.
    positive_rate : float in (0, 1)
        P(y = 1).
    correlation : float in (-1, 1)
        Correlation of neighbouring features.
    evaluation_size : int
        Size of the fixed sample giving the truth of models that are not linear rules.
    """

    name = "gaussian_classes"
    task = "classification"

    def __init__(self, p: int = 5, support: int | None = None, separation: float = 2.0, positive_rate: float = 0.5,
                 correlation: float = 0.0, evaluation_size: int = 100_000):
        support = p if support is None else support
        _check(p, support, separation, positive_rate, correlation, evaluation_size)
        self.p, self.support = int(p), int(support)
        self.separation, self.positive_rate = float(separation), float(positive_rate)
        self.correlation, self.evaluation_size = float(correlation), int(evaluation_size)
        lags = np.abs(np.subtract.outer(np.arange(self.p), np.arange(self.p)))
        self.Sigma = self.correlation ** lags
        self._chol = np.linalg.cholesky(self.Sigma)
        direction = np.r_[np.ones(self.support), np.zeros(self.p - self.support)]
        scale = self.separation / np.sqrt(direction @ np.linalg.solve(self.Sigma, direction))
        self.d = scale * direction                                  # d' Sigma^-1 d = Delta^2
        self.mu0, self.mu1 = -self.d / 2, self.d / 2
        self.bayes_w = np.linalg.solve(self.Sigma, self.d)          # the Bayes rule: x.w + logit(pi) > 0
        self.bayes_b = float(np.log(self.positive_rate / (1 - self.positive_rate)))

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "gaussian_classes", "p": self.p, "support": self.support, "separation": self.separation,
                "positive_rate": self.positive_rate, "correlation": self.correlation,
                "evaluation_size": self.evaluation_size}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "bayes_error": self.bayes_error()}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        """Labels first (one uniform each), then the features."""
        y = (rng.random(n) < self.positive_rate).astype(np.int64)
        X = rng.standard_normal((n, self.p)) @ self._chol.T + np.where(y[:, None] == 1, self.mu1, self.mu0)
        return Sample(X=X, y=y)

    def bayes_error(self) -> float:
        """The 0-1 risk of the Bayes rule (see the module docstring)."""
        return gaussian_bayes_error(self.separation, self.positive_rate)

    def linear_rule_risks(self, w, b) -> np.ndarray:
        """Exact 0-1 risk of the rules 1{x.w + b > 0} (:func:`gaussian_rule_risk`)."""
        return gaussian_rule_risk(w, b, self.mu0, self.mu1, self.Sigma, self.positive_rate)

    def class_probabilities(self, X: np.ndarray) -> np.ndarray:
        p1 = special.expit(np.asarray(X, dtype=float) @ self.bayes_w + self.bayes_b)
        return np.column_stack([1 - p1, p1])

    def closed_form_risks(self, learner: Any, models: Sequence[Any], loss: Any) -> np.ndarray | None:
        """The 0-1 risk of linear rules; None for other models or losses."""
        if builtin_loss_name(loss) != "zero_one":
            return None
        rules = linear_rules(learner, models, self.p)
        return None if rules is None else self.linear_rule_risks(*rules)
