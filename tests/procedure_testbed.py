"""A vectorised testbed with exact truth for the procedures of :mod:`simstudy.inference.procedures`.

Population: x ~ N(0, I_p), y = x . beta + sigma eps, eps ~ N(0, 1); squared loss (or absolute
loss, lighter-tailed: then the risks below become E|N(0, s^2)| = sqrt(2/pi) s with s^2 the
risk under squared loss, since every residual y - f(x) is Gaussian given the model). Learners,
each fitted on a training multiset with counts c_i (0/1, or bootstrap counts):

- ``"mean"``: predicts c_bar = sum c_i y_i / sum c_i. True risk E(y - c_bar)^2 = v + c_bar^2 with
  v = Var(y) = sigma^2 + |beta|^2; on an i.i.d. sample of size s, Err_s = v (1 + 1/s).
- ``"slope0"``, ``"slope1"``: least squares through the origin on feature j,
  b = sum c_i x_ij y_i / sum c_i x_ij^2. True risk tau_j^2 + (b - beta_j)^2, tau_j^2 = sigma^2 +
  sum_{l != j} beta_l^2; on an i.i.d. sample of size s, b - beta_j given x_j is
  N(0, tau_j^2 / sum x_ij^2) and E[1 / chi2_s] = 1/(s - 2), so Err_s = tau_j^2 (1 + 1/(s - 2)).
- ``"first"``: predicts the label of its lowest-numbered training point (an unstable learner:
  fold models share that point, so their errors are strongly correlated). Risk v + c^2, Err_s = 2v.
- ``"zero"``: predicts 0 without looking at the data. Risk v = Err_s for every s.

Every model's risk is exact, so R_n (the fold models'), Err_n and Err_XY (the model fitted on
all n points) are exact for every replicate.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.inference.procedures import SplitLosses, SplitPlan


@dataclass(frozen=True)
class Testbed:
    beta: tuple = (1.0, 1.0)
    sigma: float = 1.0
    loss: str = "squared"

    __test__ = False

    @property
    def p(self) -> int:
        return len(self.beta)

    def draw(self, replicates: int, n: int, rng: np.random.Generator):
        x = rng.standard_normal((replicates, n, self.p))
        y = x @ np.asarray(self.beta) + self.sigma * rng.standard_normal((replicates, n))
        return x, y

    @property
    def variance(self) -> float:
        """v = Var(y) = sigma^2 + |beta|^2."""
        return self.sigma ** 2 + float(np.sum(np.square(self.beta)))

    def _tau2(self, j: int) -> float:
        b = np.asarray(self.beta, dtype=float)
        return self.sigma ** 2 + float(np.sum(b ** 2) - b[j] ** 2)

    def fit(self, learner: str, x, y, counts) -> np.ndarray:
        """Coefficients (replicates, S) of the learner on each split's training counts (S, n)."""
        c = np.asarray(counts, dtype=float)
        if learner == "zero":
            return np.zeros((y.shape[0], c.shape[0]))
        if learner == "first":
            return y[:, np.argmax(c > 0, axis=1)]
        if learner == "mean":
            return np.einsum("sn,rn->rs", c, y) / c.sum(axis=1)
        j = int(learner[-1])
        xj = x[..., j]
        return np.einsum("sn,rn->rs", c, xj * y) / np.einsum("sn,rn->rs", c, xj * xj)

    def predict(self, learner: str, coef, x) -> np.ndarray:
        """Predictions (replicates, S, n) of each split's model at every point."""
        if learner in ("mean", "first", "zero"):
            return np.broadcast_to(coef[..., None], coef.shape + (x.shape[1],))
        return coef[..., None] * x[:, None, :, int(learner[-1])]

    def pointwise(self, y, predictions) -> np.ndarray:
        residual = y - predictions
        return residual ** 2 if self.loss == "squared" else np.abs(residual)

    def _scale(self, mse):
        """Risk from the mean squared residual of a Gaussian residual."""
        return mse if self.loss == "squared" else np.sqrt(2 / np.pi * np.asarray(mse))

    def risk(self, learner: str, coef) -> np.ndarray:
        """Exact true risk of each fitted model."""
        if learner in ("mean", "first", "zero"):
            return self._scale(self.variance + coef ** 2)
        j = int(learner[-1])
        return self._scale(self._tau2(j) + (coef - self.beta[j]) ** 2)

    def expected_risk(self, learner: str, size: float) -> float:
        """Err at training size ``size``: E over i.i.d. samples of the fitted model's risk.

        Under absolute loss the mean's, first's and zero's residual y - c is Gaussian over the
        sample too (variance v (1 + 1/s), 2v, v); the slope's is not (a scale mixture): NaN.
        """
        if learner in ("first", "zero"):
            return float(self._scale(self.variance * (2.0 if learner == "first" else 1.0)))
        if learner == "mean":
            return float(self._scale(self.variance * (1 + 1 / size)))
        if self.loss != "squared":
            return float("nan")
        return self._tau2(int(learner[-1])) * (1 + 1 / (size - 2))


@dataclass
class Run:
    """Split losses of a batch of replicates and their exact truths."""

    losses: SplitLosses
    split_risk: np.ndarray      # (replicates, S) exact risk of each split's model
    full_risk: np.ndarray       # (replicates,) Err_XY
    err_n: float                # Err_n: expected risk of the learner trained on n points

    def r_n(self, rows=slice(None)) -> np.ndarray:
        """Test-size weighted mean risk of the models of ``rows`` (Bayle et al.'s R_n for a K-fold block)."""
        sizes = self.losses.plan.test_sizes()[rows].astype(float)
        return self.split_risk[:, rows] @ (sizes / sizes.sum())


def run(testbed: Testbed, learners, plan: SplitPlan, replicates: int, rng: np.random.Generator,
        no_information: bool = False) -> Run:
    """Fit ``learners`` (one name, or two for the difference first - second) on every split of ``plan``."""
    learners = (learners,) if isinstance(learners, str) else tuple(learners)
    x, y = testbed.draw(replicates, plan.n, rng)
    parts = []
    for learner in learners:
        coef = testbed.fit(learner, x, y, plan.train)
        full = testbed.fit(learner, x, y, np.ones((1, plan.n)))[:, 0]
        loss = np.where(plan.evaluate, testbed.pointwise(y[:, None, :], testbed.predict(learner, coef, x)), np.nan)
        gamma = None
        if no_information:   # (1/n^2) sum_ij L(y_i, f(x_j)) for the model fitted on all points
            f = testbed.predict(learner, full[:, None], x)[:, 0]
            gamma = np.array([testbed.pointwise(yr[:, None], fr[None, :]).mean() for yr, fr in zip(y, f)])
        err = testbed.expected_risk(learner, plan.n)
        parts.append((loss, testbed.risk(learner, coef), testbed.risk(learner, full), err, gamma))
    if len(parts) == 1:
        loss, risk, full, err, gamma = parts[0]
    else:
        (l1, r1, f1, e1, g1), (l2, r2, f2, e2, _) = parts
        loss, risk, full, err, gamma = l1 - l2, r1 - r2, f1 - f2, e1 - e2, None
    return Run(SplitLosses(plan, loss, no_information=gamma), risk, full, err)
