"""Hastie, Tibshirani & Friedman's example 10.2: a sphere in 10 dimensions (non-linear, noiseless).

x ~ N(0, I_p) (p = 10), y = 1 iff |x|^2 > q, q the median of the chi-square law with p degrees of
freedom, so P(y = 1) = 1/2 exactly and the Bayes error is 0 (The Elements of Statistical Learning,
eq. 10.2; scikit-learn's ``make_hastie_10_2`` with labels 0/1).

Truth.

- A rule "predict 1 iff x.w + b > 0" with w != 0: by rotation invariance, with z = x.w / |w| ~
  N(0, 1) and |x|^2 = z^2 + Q, Q ~ chi2(p - 1) independent of z, its 0-1 risk depends on
  z0 = -b / |w| only:

      R(z0) = 1/2 + int_{-inf}^{z0} phi(z) (2 P1(z) - 1) dz,   P1(z) = P(Q > q - z^2),

  a one-dimensional integral computed by adaptive quadrature (absolute error < 1e-10). Every rule
  through the origin (z0 = 0) errs with probability exactly 1/2 (the integrand is even and
  integrates to 2 P(y = 1) - 1 = 0 over the line); w = 0 gives the constant rules (risk 1/2).
- Any other model: the labels are a function of x, so the truth is the mean loss over a fixed
  evaluation sample (its Monte Carlo error sqrt(R (1 - R) / N) for the 0-1 loss is reported).
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from simstudy.lazy import LazyModule
from simstudy.populations.base import Population, Sample
from simstudy.populations.conditional import ConditionalClassTruth, builtin_loss_name
from simstudy.populations.linear_rules import linear_rules

integrate = LazyModule("scipy.integrate")
special = LazyModule("scipy.special")
stats = LazyModule("scipy.stats")

__all__ = ["HastieSpherePopulation", "hastie_rule_risk"]


def _radius2(p: int) -> float:
    return float(stats.chi2.median(p))


def hastie_rule_risk(w, b, p: int = 10) -> np.ndarray:
    """Exact 0-1 risk of the rules "1 iff x.w + b > 0" in the sphere model (see the module docstring).

    Parameters
    ----------
    w : array_like (M, p)
    b : array_like (M,)
    p : int
        Dimension (the model has q = median of chi2(p)).
    """
    w = np.atleast_2d(np.asarray(w, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    q = _radius2(p)
    norms = np.sqrt(np.sum(w * w, axis=1))

    def integrand(z):  # phi(z) (2 P(chi2(p - 1) > q - z^2) - 1)
        return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) * (2 * special.chdtrc(p - 1, max(q - z * z, 0.0)) - 1)

    out = np.empty(b.shape[0])
    edge = np.sqrt(q)  # P1(z) = 1 beyond |z| = sqrt(q): the integrand is smooth but changes form there
    for i, (r, c) in enumerate(zip(norms, b)):
        if r == 0:
            out[i] = 0.5
            continue
        z0 = float(np.clip(-c / r, -40.0, 40.0))
        points = [t for t in (-edge, 0.0, edge) if -40.0 < t < z0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            value, _ = integrate.quad(integrand, -40.0, z0, points=points or None, limit=200,
                                      epsabs=1e-12, epsrel=1e-11)
        out[i] = 0.5 + value
    return out


class HastieSpherePopulation(ConditionalClassTruth, Population):
    """x ~ N(0, I_p), y = 1{|x|^2 > median of chi2(p)} (Hastie et al.'s example 10.2 with p = 10).

    Parameters
    ----------
    p : int >= 2
    evaluation_size : int
    """

    name = "hastie_10_2"
    task = "classification"

    def __init__(self, p: int = 10, evaluation_size: int = 100_000):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 2:
            raise ValueError(f"population.p={p!r} is invalid: the sphere model needs p >= 2 features.")
        if isinstance(evaluation_size, bool) or not isinstance(evaluation_size, (int, np.integer)) \
                or evaluation_size < 1000:
            raise ValueError(f"population.evaluation_size={evaluation_size!r} is invalid: use at least 1000 points.")
        self.p, self.evaluation_size = int(p), int(evaluation_size)
        self.radius2 = _radius2(self.p)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "hastie_10_2", "p": self.p, "evaluation_size": self.evaluation_size}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "radius2": self.radius2, "bayes_error": 0.0}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        X = rng.standard_normal((n, self.p))
        return Sample(X=X, y=(np.sum(X * X, axis=1) > self.radius2).astype(np.int64))

    def class_probabilities(self, X: np.ndarray) -> np.ndarray:
        """P(y = 1 | x) is 0 or 1: the labels are a function of x."""
        p1 = (np.sum(np.asarray(X, dtype=float) ** 2, axis=1) > self.radius2).astype(float)
        return np.column_stack([1 - p1, p1])

    def linear_rule_risks(self, w, b) -> np.ndarray:
        """Exact 0-1 risk of the rules 1{x.w + b > 0} (:func:`hastie_rule_risk`)."""
        return hastie_rule_risk(w, b, self.p)

    def closed_form_risks(self, learner: Any, models: Sequence[Any], loss: Any) -> np.ndarray | None:
        if builtin_loss_name(loss) != "zero_one":
            return None
        rules = linear_rules(learner, models, self.p)
        return None if rules is None else self.linear_rule_risks(*rules)
