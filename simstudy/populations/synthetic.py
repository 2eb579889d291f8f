"""Synthetic populations with known truth."""
from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import Any

import numba
import numpy as np
from simstudy.lazy import LazyModule
from simstudy.populations.base import Population, ResidualPopulation, Sample
from simstudy.populations.conditional import ConditionalClassTruth, builtin_loss_name

integrate = LazyModule("scipy.integrate")
optimize = LazyModule("scipy.optimize")
special = LazyModule("scipy.special")

__all__ = ["GaussianFoldsPopulation", "LogisticPopulation", "linear_rule_risk", "linear_rule_risk_quad", "logistic_alpha_for_bayes_error",
           "logistic_bayes_error"]

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


class LogisticPopulation(ConditionalClassTruth, Population):
    """Nedelko's model: x ~ N(0, I_2), P(y = 1 | x) = 1 / (1 + exp(-alpha w1.x)), w1 = (1, 1).

    Truth: the exact 0-1 risk of linear rules (:func:`linear_rule_risk`); for other models or
    losses, P(y | x) averaged over a fixed sample of ``evaluation_size`` points
    (:mod:`simstudy.populations.conditional`, with its Monte Carlo error).

    Parameters
    ----------
    bayes_error : float in (0, 0.5)
        Target Bayes error R0; alpha is solved numerically from it.
    """

    name = "logistic"
    #: Size of the fixed sample giving the truth of models that are not linear rules.
    evaluation_size = 100_000

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

    def class_probabilities(self, X: np.ndarray) -> np.ndarray:
        """P(y = c | x), shape (N, 2)."""
        p1 = special.expit(self.alpha * (np.asarray(X, dtype=float) @ W1))
        return np.column_stack([1 - p1, p1])

    def linear_rule_risks(self, w, b) -> np.ndarray:
        """Exact 0-1 risk of the rules 1{x.w + b > 0}: :func:`linear_rule_risk` with c = -b."""
        return linear_rule_risk(w, -np.asarray(b, dtype=float), alpha=self.alpha)

    def closed_form_risks(self, learner: Any, models, loss: Any) -> np.ndarray | None:
        """The 0-1 risk of linear rules; None for other models or losses."""
        from simstudy.populations.linear_rules import linear_rules

        if builtin_loss_name(loss) != "zero_one":
            return None
        rules = linear_rules(learner, models, 2)
        return None if rules is None else self.linear_rule_risks(*rules)


# ----------------------------------------------------------------------------- exact risk of linear rules
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(12)
_Z_MAX = 10.0  # standard normal mass beyond +-10 is < 2e-23


@numba.njit(cache=True)
def _add_graded(edges, count, centre, scale):
    """Append centre +- scale * 4^k (k >= 0) while inside [-Z_MAX, Z_MAX]."""
    if -_Z_MAX < centre < _Z_MAX:
        edges[count] = centre
        count += 1
    offset = scale
    while offset < 2 * _Z_MAX:
        for e in (centre - offset, centre + offset):
            if -_Z_MAX < e < _Z_MAX:
                edges[count] = e
                count += 1
        offset *= 4.0
    return count


@numba.njit(cache=True)
def _linear_rule_risk_kernel(a, tau, c, kappa, nodes, weights, out):
    edges = np.empty(256)
    for r in range(a.shape[0]):
        count = 0
        for k in range(21):  # uniform panels of width 1
            edges[count] = -_Z_MAX + k
            count += 1
        count = _add_graded(edges, count, 0.0, 1.0 / max(kappa, 1e-12))
        if a[r] != 0.0 and np.isfinite(c[r]):
            z0 = c[r] / a[r]
            s0 = max(tau[r] / abs(a[r]), 1e-12)
            count = _add_graded(edges, count, z0, s0)
        e = np.sort(edges[:count])
        total = 0.0
        for p in range(count - 1):
            half = (e[p + 1] - e[p]) / 2
            if half <= 0.0:
                continue
            mid = (e[p + 1] + e[p]) / 2
            for q in range(nodes.shape[0]):
                z = mid + half * nodes[q]
                if tau[r] > 0.0:
                    below = 0.5 * math.erfc(-(c[r] - a[r] * z) / (tau[r] * math.sqrt(2.0)))
                else:
                    below = 1.0 if a[r] * z <= c[r] else 0.0
                total += weights[q] * half * math.exp(-0.5 * z * z) * math.tanh(kappa * z) * below
        out[r] = 0.5 + total / math.sqrt(2 * math.pi)


def linear_rule_risk(w, c, bayes_error: float | None = None, alpha: float | None = None) -> np.ndarray:
    """Exact misclassification probability of the rule "predict 1 iff w.x > c" in the logistic model.

    With z = w1.x / |w1| ~ N(0, 1), p(z) = sigmoid(alpha sqrt(2) z), and v = w.x = a z + tau e
    (a = w.w1/|w1|, tau^2 = |w|^2 - a^2, e ~ N(0, 1) independent of z), the error probability is

        R(w, c) = E[(1 - p)] + E[(2p - 1) 1{v <= c}]
                = 1/2 + int phi(z) tanh(alpha z / sqrt 2) Phi((c - a z) / tau) dz,

    a one-dimensional integral. It is computed by Gauss-Legendre quadrature (12 nodes per
    panel) on unit panels over [-10, 10] refined geometrically (offsets s 4^k) around the two
    places where the integrand changes fast: z = 0 (scale 1/alpha) and z = c/a (scale tau/|a|).
    The absolute error stays below 1e-10 for any rule (checked against adaptive quadrature in
    the tests), i.e. the result is exact for simulation purposes.

    Parameters
    ----------
    w : array_like, shape (..., 2)
        Rule directions. w = 0 gives the constant rule (predict 1 iff 0 > c).
    c : array_like, shape (...)
        Thresholds (may be +-inf: constant rules).
    bayes_error, alpha : float
        The model, given by its Bayes error or directly by alpha (one of the two).

    Returns
    -------
    ndarray, shape (...)
    """
    if alpha is None:
        if bayes_error is None:
            raise ValueError("give bayes_error or alpha.")
        alpha = logistic_alpha_for_bayes_error(float(bayes_error))
    w = np.asarray(w, dtype=float)
    c = np.asarray(c, dtype=float)
    shape = np.broadcast_shapes(w.shape[:-1], c.shape)
    w = np.ascontiguousarray(np.broadcast_to(w, shape + (2,)).reshape(-1, 2))
    c = np.ascontiguousarray(np.broadcast_to(c, shape).reshape(-1))
    unit = W1 / np.sqrt(W1 @ W1)
    a = w @ unit
    tau = np.sqrt(np.maximum(np.sum(w * w, axis=-1) - a**2, 0.0))
    kappa = alpha * np.sqrt(W1 @ W1) / 2  # tanh(kappa z) = 2 sigmoid(2 kappa z) - 1
    out = np.empty(a.shape[0])
    _linear_rule_risk_kernel(a, tau, c, float(kappa), _GL_NODES, _GL_WEIGHTS, out)
    return out.reshape(shape)


def linear_rule_risk_quad(w, c, alpha: float) -> float:
    """Reference value of :func:`linear_rule_risk` for one rule by adaptive quadrature (slow)."""
    w = np.asarray(w, dtype=float)
    unit = W1 / np.sqrt(W1 @ W1)
    a = float(w @ unit)
    tau = float(np.sqrt(max(w @ w - a * a, 0.0)))
    kappa = alpha * np.sqrt(W1 @ W1) / 2

    def below(z):
        if tau > 0:
            return special.ndtr((c - a * z) / tau)
        return 1.0 if a * z <= c else 0.0

    def f(z):
        return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) * np.tanh(kappa * z) * below(z)

    points = [0.0] + ([float(np.clip(c / a, -_Z_MAX, _Z_MAX))] if a != 0 and np.isfinite(c) else [])
    with warnings.catch_warnings():  # asking for 1e-14 makes quad warn about round-off; the value is fine
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, _ = integrate.quad(f, -_Z_MAX, _Z_MAX, points=sorted(set(points)), limit=500,
                                  epsabs=1e-14, epsrel=1e-13)
    return 0.5 + value


class GaussianFoldsPopulation(ResidualPopulation):
    """Residuals whose fold means are jointly Gaussian with between-block correlation rho.

    e_i = mu + sigma (a Z + eps_i), with Z and eps_i independent N(0, 1) and
    a^2 = rho / (n (1 - rho)). Then theta = Var(mu_hat) = sigma^2 (a^2 + 1/n),
    gamma = sigma^2 a^2 and rho = gamma / theta exactly (Grandvalet & Bengio's definition);
    the fold means are exchangeable Gaussian, so Proposition 2 holds exactly: the t-test of
    eq. 9 with rho_hat = rho has level alpha. (Note the correlation of two fold means is
    rho / (K - (K-1) rho), not rho.)

    Parameters
    ----------
    rho : float in [0, 1)
    mean : float
        mu, the expected residual (the H0 value).
    sigma : float > 0
    """

    name = "gaussian_folds"

    def __init__(self, rho: float = 0.5, mean: float = 0.0, sigma: float = 1.0):
        if not 0 <= rho < 1:
            raise ValueError(f"population.rho must lie in [0, 1); got {rho}.")
        if sigma <= 0:
            raise ValueError(f"population.sigma must be > 0; got {sigma}.")
        self.rho, self.mean, self.sigma = float(rho), float(mean), float(sigma)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "gaussian_folds", "rho": self.rho, "mean": self.mean, "sigma": self.sigma}

    def theta(self, n: int) -> float:
        """Exact Var(mu_hat) for n residuals."""
        return self.sigma**2 / (n * (1 - self.rho))

    def residual_blocks(self, K: int, m: int, rng: np.random.Generator) -> np.ndarray:
        n = K * m
        a = np.sqrt(self.rho / (n * (1 - self.rho)))
        shift = a * rng.standard_normal()
        return self.mean + self.sigma * (shift + rng.standard_normal((K, m)))

    def draw_examples(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """An example-level version of this population: n examples, each a pair (eps_i, z_i) of
        independent N(0, 1) draws (shape (n, 2)), for procedures that re-run CV on subsets.

        The K-fold CV residuals of a subset S of them are (:meth:`subset_residuals`)

            e_i = mu + sigma (eps_i + c mean_{j in S} z_j),   c^2 = rho / (1 - rho),

        whose distribution for |S| = n is exactly that of :meth:`residual_blocks`
        (c mean_S z ~ N(0, rho / (n (1 - rho))) = a Z), at every size: theta(s) =
        sigma^2 / (s (1 - rho)) and rho(s) = rho for every s. mu_hat(S) = mu + sigma mean_S(eps + c z)
        is a mean, so the subsampling estimators are exact here.
        """
        return rng.standard_normal((n, 2))

    def subset_residuals(self, examples: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """CV residuals of the examples ``rows`` of :meth:`draw_examples` (see there); the fold
        assignment does not matter in this model."""
        c = np.sqrt(self.rho / (1 - self.rho))
        part = examples[rows]
        return self.mean + self.sigma * (part[:, 0] + c * part[:, 1].mean())
