"""Linear regression models beyond Gaussian noise, with the exact risk of every linear predictor.

All three draw x ~ N(0, Sigma), Sigma_ij = correlation^|i - j|, as
:class:`simstudy.populations.regression.GaussianLinearPopulation`, and y = x.beta + noise. For a
linear predictor f(x) = x.w + b write d = w - beta, s_g^2 = d' Sigma d; the residual is
y - f(x) = G + noise with G = -x.d - b ~ N(-b, s_g^2).

- :class:`SparseLinearPopulation` (high-dimensional sparse): p features (default 100), beta equal
  to ``signal`` on the first ``support`` (default 5) and 0 elsewhere, Gaussian noise sigma eps.
  Risks as in the Gaussian linear model (:func:`simstudy.populations.regression.linear_predictor_risk`).
- :class:`StudentTLinearPopulation` (heavy tails): noise sigma T, T ~ Student t with nu > 2 degrees
  of freedom (variance sigma^2 nu / (nu - 2))::

    squared:  E (y - f)^2 = s_g^2 + b^2 + sigma^2 nu / (nu - 2);
    absolute: E |y - f| = int phi(z) sigma B((-b + s_g z) / sigma) dz, with the closed form
              B(c) = E |T - c| = c (2 F(c) - 1) + 2 (nu + c^2) / (nu - 1) f(c)
              (F, f: the t law's distribution and density; from int_c^inf t f(t) dt =
              (nu + c^2) f(c) / (nu - 1)); at w = beta, b = 0: sigma 2 sqrt(nu) Gamma((nu+1)/2) /
              (sqrt(pi) (nu - 1) Gamma(nu/2)) (2 sqrt(3) / pi sigma for nu = 3).
- :class:`HeteroscedasticLinearPopulation`: noise sigma sqrt(1 + gamma x_1^2) eps, eps ~ N(0, 1).
  With z = x_1 ~ N(0, 1), a = (Sigma d)_1 and tau^2 = s_g^2 - a^2 (x.d given z is N(a z, tau^2))::

    squared:  E (y - f)^2 = s_g^2 + b^2 + sigma^2 (1 + gamma);
    absolute: E |y - f| = int phi(z) FN(a z + b, sqrt(tau^2 + sigma^2 (1 + gamma z^2))) dz, with
              FN(m, s) = E |N(m, s^2)| = s sqrt(2/pi) exp(-m^2 / (2 s^2)) + m (1 - 2 Phi(-m / s));
              at w = beta, b = 0 and gamma = 1: sigma e^(1/4) (K_0(1/4) + K_1(1/4)) / (2 pi).

The one-dimensional integrals are computed by adaptive quadrature (``scipy.integrate.quad_vec``,
absolute error below 1e-10): exact for simulation purposes. Other models (trees, k-NN) get the
conditional risk E[L(y, g(x)) | x] averaged over a fixed sample of x
(:mod:`simstudy.populations.conditional`).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simstudy.lazy import LazyModule
from simstudy.populations.base import Sample
from simstudy.populations.conditional import ConditionalRegressionTruth, builtin_loss_name
from simstudy.populations.regression import GaussianLinearPopulation, linear_coefficients, linear_predictor_risk

integrate = LazyModule("scipy.integrate")
special = LazyModule("scipy.special")

__all__ = ["SparseLinearPopulation", "StudentTLinearPopulation", "HeteroscedasticLinearPopulation",
           "folded_normal_mean", "student_t_abs_mean", "student_t_linear_risk", "heteroscedastic_linear_risk"]

#: Tolerances of the one-dimensional integrals.
_EPSABS, _EPSREL = 1e-12, 1e-10


def folded_normal_mean(m, s) -> np.ndarray:
    """E |N(m, s^2)| = s sqrt(2/pi) exp(-m^2 / (2 s^2)) + m (1 - 2 Phi(-m / s)); |m| where s = 0."""
    m, s = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(s, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = s * np.sqrt(2 / np.pi) * np.exp(-m * m / (2 * s * s)) + m * (1 - 2 * special.ndtr(-m / s))
    return np.where(s > 0, value, np.abs(m))


def student_t_abs_mean(c, df: float) -> np.ndarray:
    """B(c) = E |T - c| for T ~ t(df), df > 1: c (2 F(c) - 1) + 2 (df + c^2) f(c) / (df - 1)."""
    c = np.asarray(c, dtype=float)
    log_norm = special.gammaln((df + 1) / 2) - special.gammaln(df / 2) - 0.5 * np.log(df * np.pi)
    density = np.exp(log_norm - (df + 1) / 2 * np.log1p(c * c / df))
    return c * (2 * special.stdtr(df, c) - 1) + 2 * (df + c * c) * density / (df - 1)


def _quad(integrand, size: int) -> np.ndarray:
    """int_{-inf}^{inf} integrand(z) dz of a vector-valued integrand (``size`` values)."""
    if size == 0:
        return np.empty(0)
    value, _ = integrate.quad_vec(integrand, -np.inf, np.inf, epsabs=_EPSABS, epsrel=_EPSREL, limit=400)
    return np.asarray(value, dtype=float).reshape(size)


def _gaps(w, b, beta, Sigma):
    """(d = w - beta (M, p), b (M,), s_g (M,)) for predictors x.w + b."""
    d = np.atleast_2d(np.asarray(w, dtype=float)) - np.asarray(beta, dtype=float)
    b = np.atleast_1d(np.asarray(b, dtype=float))
    s_g = np.sqrt(np.maximum(np.einsum("mi,ij,mj->m", d, Sigma, d), 0.0))
    return d, b, s_g


def _phi(z):
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def student_t_linear_risk(w, b, beta, Sigma, sigma: float, df: float, loss: str = "squared") -> np.ndarray:
    """Exact risk of the predictors x.w + b when y = x.beta + sigma T, T ~ t(df) (module docstring)."""
    _, b, s_g = _gaps(w, b, beta, Sigma)
    if loss == "squared":
        return s_g**2 + b**2 + sigma**2 * df / (df - 2)
    if loss == "absolute":
        return _quad(lambda z: _phi(z) * sigma * student_t_abs_mean((-b + s_g * z) / sigma, df), b.size)
    raise ValueError(f"no closed form for loss {loss!r}; use squared or absolute.")


def heteroscedastic_linear_risk(w, b, beta, Sigma, sigma: float, gamma: float, loss: str = "squared") -> np.ndarray:
    """Exact risk of the predictors x.w + b when y = x.beta + sigma sqrt(1 + gamma x_1^2) eps."""
    d, b, s_g = _gaps(w, b, beta, Sigma)
    if loss == "squared":
        return s_g**2 + b**2 + sigma**2 * (1 + gamma * Sigma[0, 0])
    if loss != "absolute":
        raise ValueError(f"no closed form for loss {loss!r}; use squared or absolute.")
    a = (d @ Sigma[:, 0]) / np.sqrt(Sigma[0, 0])                # Cov(x.d, z) with z = x_1 standardised
    tau2 = np.maximum(s_g**2 - a**2, 0.0)
    scale2 = sigma**2 * Sigma[0, 0] * gamma                     # gamma x_1^2 = gamma Sigma_11 z^2

    def integrand(z):
        return _phi(z) * folded_normal_mean(a * z + b, np.sqrt(tau2 + sigma**2 + scale2 * z * z))

    return _quad(integrand, b.size)


class _LinearModelTruth(ConditionalRegressionTruth, GaussianLinearPopulation):
    """Closed form for linear predictors under the squared and absolute losses, else the
    conditional risk over the evaluation sample."""

    def predictor_risks(self, w, b, loss: str) -> np.ndarray:
        raise NotImplementedError

    def bayes_risk(self, loss: str = "squared") -> float:
        """Risk of the true regression function x.beta."""
        return float(self.predictor_risks(self.beta[None], np.zeros(1), loss)[0])

    def closed_form_risks(self, learner: Any, models: Sequence[Any], loss: Any) -> np.ndarray | None:
        name = builtin_loss_name(loss)
        if name not in ("squared", "absolute") or not callable(getattr(learner, "predict_features", None)):
            return None
        coefficients = [linear_coefficients(learner, model, self.p) for model in models]
        if any(c is None for c in coefficients):
            return None
        w = np.array([c[0] for c in coefficients]).reshape(len(models), self.p)
        return self.predictor_risks(w, np.array([c[1] for c in coefficients]), name)


class SparseLinearPopulation(_LinearModelTruth):
    """x ~ N(0, Sigma) in p dimensions, y = signal (x_1 + ... + x_s) + sigma eps (s = ``support``).

    Parameters
    ----------
    p : int
    support : int in [1, p]
    signal : float
        The non-zero coefficient.
    sigma, correlation, evaluation_size
        As in :class:`GaussianLinearPopulation`.
    """

    name = "sparse_linear"

    def __init__(self, p: int = 100, support: int = 5, signal: float = 1.0, sigma: float = 1.0,
                 correlation: float = 0.0, evaluation_size: int = 20_000):
        if isinstance(support, bool) or not isinstance(support, (int, np.integer)) \
                or not isinstance(p, (int, np.integer)) or not 1 <= support <= p:
            raise ValueError(f"population.support={support!r} is invalid: the number of non-zero coefficients must "
                             f"lie in [1, p={p!r}].")
        beta = [float(signal)] * int(support) + [0.0] * (int(p) - int(support))
        super().__init__(p=p, beta=beta, sigma=sigma, correlation=correlation, evaluation_size=evaluation_size)
        self.support, self.signal = int(support), float(signal)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "sparse_linear", "p": self.p, "support": self.support, "signal": self.signal,
                "sigma": self.sigma, "correlation": self.correlation, "evaluation_size": self.evaluation_size}

    def predictor_risks(self, w, b, loss: str) -> np.ndarray:
        return linear_predictor_risk(w, b, self.beta, self.Sigma, self.sigma, loss)

    def conditional_loss(self, X: np.ndarray, prediction: np.ndarray, loss_name: str) -> np.ndarray:
        gap = X @ self.beta - prediction
        return gap**2 + self.sigma**2 if loss_name == "squared" else folded_normal_mean(gap, self.sigma)


class StudentTLinearPopulation(_LinearModelTruth):
    """x ~ N(0, Sigma), y = x.beta + sigma T with T ~ Student t(df), df > 2 (heavy-tailed noise).

    Parameters
    ----------
    df : float > 2
        Degrees of freedom (3: finite variance, infinite fourth moment).
    p, beta, sigma, correlation, evaluation_size
        As in :class:`GaussianLinearPopulation` (``sigma`` scales T; the noise variance is
        sigma^2 df / (df - 2)).
    """

    name = "student_t_linear"

    def __init__(self, p: int = 5, beta: Sequence[float] | None = None, sigma: float = 1.0, df: float = 3.0,
                 correlation: float = 0.0, evaluation_size: int = 100_000):
        if isinstance(df, bool) or not isinstance(df, (int, float)) or not df > 2:
            raise ValueError(f"population.df={df!r} is invalid: the t noise needs more than 2 degrees of freedom "
                             "(a finite variance, so that the squared-loss risk exists), e.g. 3.")
        super().__init__(p=p, beta=beta, sigma=sigma, correlation=correlation, evaluation_size=evaluation_size)
        self.df = float(df)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "student_t_linear", "p": self.p, "beta": [float(v) for v in self.beta], "sigma": self.sigma,
                "df": self.df, "correlation": self.correlation, "evaluation_size": self.evaluation_size}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        X = rng.standard_normal((n, self.p)) @ self._chol.T
        return Sample(X=X, y=X @ self.beta + self.sigma * rng.standard_t(self.df, n))

    def predictor_risks(self, w, b, loss: str) -> np.ndarray:
        return student_t_linear_risk(w, b, self.beta, self.Sigma, self.sigma, self.df, loss)

    def conditional_loss(self, X: np.ndarray, prediction: np.ndarray, loss_name: str) -> np.ndarray:
        gap = X @ self.beta - prediction
        if loss_name == "squared":
            return gap**2 + self.sigma**2 * self.df / (self.df - 2)
        return self.sigma * student_t_abs_mean(gap / self.sigma, self.df)


class HeteroscedasticLinearPopulation(_LinearModelTruth):
    """x ~ N(0, Sigma), y = x.beta + sigma sqrt(1 + gamma x_1^2) eps, eps ~ N(0, 1).

    Parameters
    ----------
    gamma : float >= 0
        Heteroscedasticity: the noise variance at x is sigma^2 (1 + gamma x_1^2) (0: homoscedastic).
    p, beta, sigma, correlation, evaluation_size
        As in :class:`GaussianLinearPopulation`.
    """

    name = "heteroscedastic_linear"

    def __init__(self, p: int = 5, beta: Sequence[float] | None = None, sigma: float = 1.0, gamma: float = 1.0,
                 correlation: float = 0.0, evaluation_size: int = 100_000):
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma >= 0:
            raise ValueError(f"population.gamma={gamma!r} is invalid: the heteroscedasticity must be >= 0 (the noise "
                             "variance at x is sigma^2 (1 + gamma x_1^2)).")
        super().__init__(p=p, beta=beta, sigma=sigma, correlation=correlation, evaluation_size=evaluation_size)
        self.gamma = float(gamma)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "heteroscedastic_linear", "p": self.p, "beta": [float(v) for v in self.beta],
                "sigma": self.sigma, "gamma": self.gamma, "correlation": self.correlation,
                "evaluation_size": self.evaluation_size}

    def noise_sd(self, X: np.ndarray) -> np.ndarray:
        """sigma sqrt(1 + gamma x_1^2)."""
        return self.sigma * np.sqrt(1 + self.gamma * X[:, 0] ** 2)

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        X = rng.standard_normal((n, self.p)) @ self._chol.T
        return Sample(X=X, y=X @ self.beta + self.noise_sd(X) * rng.standard_normal(n))

    def predictor_risks(self, w, b, loss: str) -> np.ndarray:
        return heteroscedastic_linear_risk(w, b, self.beta, self.Sigma, self.sigma, self.gamma, loss)

    def conditional_loss(self, X: np.ndarray, prediction: np.ndarray, loss_name: str) -> np.ndarray:
        gap = X @ self.beta - prediction
        sd = self.noise_sd(X)
        return gap**2 + sd**2 if loss_name == "squared" else folded_normal_mean(gap, sd)
