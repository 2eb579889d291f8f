"""Distributions outside Nedelko's logistic family, with the exact risk of linear rules.

Each class y has a Gaussian mixture as its conditional law, so the projection w.x of a class
is a Gaussian mixture too and the error of "predict 1 iff w.x > c" is exact:

    R(w, c) = pi_1 sum_k a_1k Phi((c - w.mu_1k) / s_1k) + pi_0 sum_k a_0k (1 - Phi((c - w.mu_0k) / s_0k)),

s_yk = sqrt(w' Sigma_yk w) (a step function when s = 0, e.g. the constant rules w = 0).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from simstudy.populations.base import Population, Sample

__all__ = ["Component", "GaussianClassesPopulation", "OUTSIDE_POPULATIONS"]


@dataclass(frozen=True)
class Component:
    """One Gaussian component of a class-conditional mixture."""

    weight: float
    mean: tuple[float, float]
    cov: tuple[tuple[float, float], tuple[float, float]] = ((1.0, 0.0), (0.0, 1.0))


@dataclass
class GaussianClassesPopulation(Population):
    """P(y = 1) = prior1; x | y a mixture of Gaussian components (module docstring)."""

    label: str
    prior1: float
    class0: tuple[Component, ...]
    class1: tuple[Component, ...]
    name: str = field(default="gaussian_classes", init=False)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "gaussian_classes", "label": self.label}

    def _draw_class(self, comps, n: int, rng: np.random.Generator) -> np.ndarray:
        which = rng.choice(len(comps), size=n, p=[c.weight for c in comps])
        z = rng.standard_normal((n, 2))
        out = np.empty((n, 2))
        for k, c in enumerate(comps):
            at = which == k
            out[at] = np.asarray(c.mean) + z[at] @ np.linalg.cholesky(np.asarray(c.cov)).T
        return out

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        y = (rng.random(n) < self.prior1).astype(np.int64)
        X = np.empty((n, 2))
        X[y == 1] = self._draw_class(self.class1, int(y.sum()), rng)
        X[y == 0] = self._draw_class(self.class0, int(n - y.sum()), rng)
        return Sample(X=X, y=y)

    def risk(self, w: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Exact error of the rules (w (..., 2), c (...))."""
        w, c = np.asarray(w, float), np.asarray(c, float)
        below = lambda comps: sum(comp.weight * _normal_below(c, w @ np.asarray(comp.mean),  # noqa: E731
                                                               np.einsum("...i,ij,...j->...", w, np.asarray(comp.cov), w))
                                  for comp in comps)
        return self.prior1 * below(self.class1) + (1 - self.prior1) * (1 - below(self.class0))


def _normal_below(c, mean, var):
    """P(V <= c) for V ~ N(mean, var); var = 0 gives the step 1{mean <= c}."""
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, (c - mean) / np.where(sd > 0, sd, 1.0), 0.0)
    return np.where(sd > 0, stats.norm.cdf(z), (mean <= c).astype(float))


_TILTED = ((1.0, 0.8), (0.8, 1.0))
#: Two distributions far from the logistic model (labels depend on x non-monotonically in
#: one, class-conditional spreads differ, classes are unbalanced, a far contamination moves
#: Fisher's class-0 mean and scatter).
OUTSIDE_POPULATIONS = {
    "hetero": GaussianClassesPopulation(
        "hetero", 0.3, (Component(1.0, (0.0, 0.0)),),
        (Component(1.0, (1.2, -0.4), ((3.0, 1.0), (1.0, 0.6))),)),
    "contaminated": GaussianClassesPopulation(
        "contaminated", 0.5, (Component(0.9, (0.0, 0.0)), Component(0.1, (-5.0, 6.0), ((0.3, 0.0), (0.0, 0.3)))),
        (Component(0.6, (1.0, 1.0), _TILTED), Component(0.4, (-1.5, 0.5)))),
}
