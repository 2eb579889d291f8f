"""Regression populations with known truth: a Gaussian linear model and Friedman #1.

- :class:`GaussianLinearPopulation`: x ~ N(0, Sigma), y = x.beta + sigma eps. The risk of any
  linear predictor f(x) = w.x + b is closed form (:func:`linear_predictor_risk`) for the
  squared and absolute losses, so the truth of OLS, ridge, lasso... fold models is exact;
  other learners (trees, k-NN) or losses use a large fixed evaluation sample.
- :class:`Friedman1Population`: x ~ U[0, 1]^p, y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 +
  5 x5 + sigma eps (Friedman 1991). Truth from a large fixed evaluation sample, with its Monte
  Carlo standard error reported (:class:`simstudy.populations.truth.RiskValues`).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simstudy.lazy import LazyModule
from simstudy.populations.base import Population, Sample
from simstudy.populations.truth import RiskValues
from simstudy.rng import condition_key, condition_words

special = LazyModule("scipy.special")

__all__ = ["GaussianLinearPopulation", "Friedman1Population", "linear_predictor_risk", "linear_coefficients",
           "friedman1_mean"]

#: Losses with a closed-form risk for a linear predictor in the Gaussian linear model.
CLOSED_FORM_LOSSES = ("squared", "absolute")


def linear_predictor_risk(w, b, beta, Sigma, sigma: float, loss: str = "squared") -> np.ndarray:
    """Exact risk of the predictors f(x) = w.x + b when x ~ N(0, Sigma), y = x.beta + sigma eps.

    The residual y - f(x) = x.(beta - w) - b + sigma eps is N(-b, s^2) with
    s^2 = sigma^2 + (w - beta)' Sigma (w - beta), so

    - squared loss: E (y - f)^2 = s^2 + b^2 (= sigma^2 + (w - beta)' Sigma (w - beta) without intercept);
    - absolute loss: E |y - f| = s sqrt(2/pi) exp(-b^2 / (2 s^2)) + b (1 - 2 Phi(-b / s))
      (the mean of a folded normal).

    Parameters
    ----------
    w : array_like (..., p)
    b : array_like (...)
    beta : array_like (p,)
    Sigma : array_like (p, p)
    sigma : float
    loss : {"squared", "absolute"}

    Returns
    -------
    ndarray (...)
    """
    w = np.asarray(w, dtype=float)
    d = w - np.asarray(beta, dtype=float)
    b = np.asarray(b, dtype=float)
    s2 = sigma**2 + np.einsum("...i,ij,...j->...", d, np.asarray(Sigma, dtype=float), d)
    if loss == "squared":
        return s2 + b**2
    if loss == "absolute":
        s = np.sqrt(s2)
        return s * np.sqrt(2 / np.pi) * np.exp(-b**2 / (2 * s2)) + b * (1 - 2 * special.ndtr(-b / s))
    raise ValueError(f"no closed form for loss {loss!r}; use one of {CLOSED_FORM_LOSSES}.")


def linear_coefficients(learner: Any, model: Any, p: int) -> tuple[np.ndarray, float] | None:
    """(w, b) of a fitted model that predicts w.x + b, or None.

    A model counts as linear when it has ``coef_`` (p values) and ``intercept_`` and its
    predictions on four probe points equal x.w + b (to 1e-9 relative): scikit-learn's
    LinearRegression, Ridge, Lasso, ElasticNet, LinearSVR, SGDRegressor...; anything else
    (a tree, k-NN) returns None.
    """
    coef, intercept = getattr(model, "coef_", None), getattr(model, "intercept_", 0.0)
    if coef is None:
        return None
    w = np.asarray(coef, dtype=float).ravel()
    b = np.asarray(intercept, dtype=float).ravel()
    if w.size != p or b.size > 1:
        return None
    b = float(b[0]) if b.size else 0.0
    probe = np.linspace(-1.0, 1.0, 4 * p).reshape(4, p) + np.eye(4, p)
    predicted = np.asarray(learner.predict_features(model, probe), dtype=float)
    expected = probe @ w + b
    if not np.allclose(predicted, expected, rtol=1e-9, atol=1e-9 * (1 + np.abs(expected).max())):
        return None
    return w, b


def _fixed_rng(params: dict[str, Any]) -> np.random.Generator:
    """The generator of a population's evaluation sample: fixed by its parameters, unrelated to
    any replicate's stream."""
    words = condition_words(condition_key({**params, "evaluation_sample": True}))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(words))))


class _SampledTruth:
    """A large fixed sample of an infinite population as evaluation set (truth by Monte Carlo)."""

    #: The mean loss over the evaluation set is a Monte Carlo estimate (see simstudy.populations.truth).
    evaluation_is_sample = True
    evaluation_size: int
    _evaluation: tuple[np.ndarray, np.ndarray] | None = None

    def evaluation_set(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
        """``evaluation_size`` points drawn once from a generator fixed by the population's
        parameters (the same set in every process and run)."""
        if self._evaluation is None:
            sample = self.sample(self.evaluation_size, _fixed_rng(self.seed_params()))
            self._evaluation = (sample.X, sample.y)
        X, y = self._evaluation
        return np.ascontiguousarray(X, dtype=dtype), y

    def __getstate__(self):  # workers rebuild the evaluation set rather than receive it
        state = dict(self.__dict__)
        state["_evaluation"] = None
        return state


def _check_common(sigma: float, evaluation_size: int) -> None:
    if not sigma > 0:
        raise ValueError(f"population.sigma={sigma!r} is invalid: use a positive noise standard deviation.")
    if int(evaluation_size) < 1000:
        raise ValueError(f"population.evaluation_size={evaluation_size!r} is invalid: use at least 1000 points "
                         "(the Monte Carlo error of the truth shrinks as 1/sqrt(size)).")


class GaussianLinearPopulation(_SampledTruth, Population):
    """x ~ N(0, Sigma), y = x.beta + sigma eps, Sigma_ij = correlation^|i - j| (AR(1); identity at 0).

    Parameters
    ----------
    p : int
        Number of features.
    beta : sequence of float, optional
        Coefficients (default: 1, 1/2, 1/3, ..., 1/p).
    sigma : float
        Noise standard deviation (the Bayes risk under squared loss is sigma^2).
    correlation : float in (-1, 1)
        Correlation of neighbouring features.
    evaluation_size : int
        Size of the fixed sample that gives the truth of non-linear predictors or other losses.
    """

    name = "gaussian_linear"
    task = "regression"

    def __init__(self, p: int = 5, beta: Sequence[float] | None = None, sigma: float = 1.0,
                 correlation: float = 0.0, evaluation_size: int = 100_000):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"population.p={p!r} is invalid: use a positive number of features.")
        beta = 1.0 / np.arange(1, p + 1) if beta is None else np.asarray(list(beta), dtype=float)
        if beta.shape != (p,):
            raise ValueError(f"population.beta has {beta.size} values but population.p={p}: give p coefficients "
                             "(or beta=null for 1, 1/2, ..., 1/p).")
        if not -1 < correlation < 1:
            raise ValueError(f"population.correlation={correlation!r} is invalid: it must lie in (-1, 1).")
        _check_common(sigma, evaluation_size)
        self.p, self.beta, self.sigma, self.correlation = int(p), beta, float(sigma), float(correlation)
        self.evaluation_size = int(evaluation_size)
        lags = np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
        self.Sigma = self.correlation ** lags
        self._chol = np.linalg.cholesky(self.Sigma)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "gaussian_linear", "p": self.p, "beta": [float(v) for v in self.beta], "sigma": self.sigma,
                "correlation": self.correlation, "evaluation_size": self.evaluation_size}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        X = rng.standard_normal((n, self.p)) @ self._chol.T
        y = X @ self.beta + self.sigma * rng.standard_normal(n)
        return Sample(X=X, y=y)

    def bayes_risk(self, loss: str = "squared") -> float:
        """Risk of the true regression function x.beta."""
        return float(linear_predictor_risk(self.beta, 0.0, self.beta, self.Sigma, self.sigma, loss))

    def exact_risks(self, learner: Any, models: Sequence[Any], loss: Any) -> np.ndarray | None:
        """Closed-form risks when every model is linear and the loss is squared or absolute, else None
        (the evaluation sample then gives the truth, with its Monte Carlo error)."""
        if loss.name not in CLOSED_FORM_LOSSES or not callable(getattr(learner, "predict_features", None)):
            return None
        coefficients = [linear_coefficients(learner, model, self.p) for model in models]
        if any(c is None for c in coefficients):
            return None
        w = np.array([c[0] for c in coefficients]).reshape(len(models), self.p)
        b = np.array([c[1] for c in coefficients])
        return linear_predictor_risk(w, b, self.beta, self.Sigma, self.sigma, loss.name)


def friedman1_mean(X: np.ndarray) -> np.ndarray:
    """Friedman #1 regression function 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5."""
    return (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4])


class Friedman1Population(_SampledTruth, Population):
    """Friedman #1: x ~ U[0, 1]^p (p >= 5; features 6..p are noise), y = f(x) + sigma eps.

    Truth: the mean loss over a fixed sample of ``evaluation_size`` points. For the squared
    loss the noise term is integrated out, Err(g) = sigma^2 + E (f(x) - g(x))^2, and only the
    second term is averaged over the sample (a smaller Monte Carlo error than averaging
    (y - g(x))^2); its standard error is reported with every value.

    Parameters
    ----------
    p : int >= 5
    sigma : float
    evaluation_size : int
    """

    name = "friedman1"
    task = "regression"

    def __init__(self, p: int = 10, sigma: float = 1.0, evaluation_size: int = 100_000):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 5:
            raise ValueError(f"population.p={p!r} is invalid: Friedman #1 uses 5 features; use p >= 5.")
        _check_common(sigma, evaluation_size)
        self.p, self.sigma, self.evaluation_size = int(p), float(sigma), int(evaluation_size)

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "friedman1", "p": self.p, "sigma": self.sigma, "evaluation_size": self.evaluation_size}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        X = rng.random((n, self.p))
        return Sample(X=X, y=friedman1_mean(X) + self.sigma * rng.standard_normal(n))

    def bayes_risk(self, loss: str = "squared") -> float:
        """Risk of f itself: sigma^2 (squared), sigma sqrt(2/pi) (absolute)."""
        return {"squared": self.sigma**2, "absolute": self.sigma * np.sqrt(2 / np.pi)}[loss]

    def exact_risks(self, learner: Any, models: Sequence[Any], loss: Any):
        """Squared loss: sigma^2 + the sample mean of (f - g)^2, with its standard error; else None."""
        if loss.name != "squared":
            return None
        X, _ = self.evaluation_set(getattr(learner, "dtype", np.float64))
        f = friedman1_mean(np.asarray(X, dtype=float))
        values, se = np.empty(len(models)), np.empty(len(models))
        for i, model in enumerate(models):
            gap = (f - np.asarray(learner.predict_features(model, X), dtype=float)) ** 2
            values[i] = self.sigma**2 + gap.mean()
            se[i] = gap.std(ddof=1) / np.sqrt(gap.size)
        return RiskValues(values, se)
