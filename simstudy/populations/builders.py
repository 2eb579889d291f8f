"""Builders of the registered population kinds: a config mapping -> a population object.

:data:`simstudy.registry.POPULATIONS` names these functions; :func:`simstudy.populations.build_population`
calls the one of a config's ``kind``.
"""
from __future__ import annotations

from typing import Any, Mapping

from simstudy.errors import ConfigError
from simstudy.populations.finite import TabularPopulation, build_tabular_population
from simstudy.populations.regression import Friedman1Population, GaussianLinearPopulation

__all__ = ["logistic", "gaussian_folds", "tabular", "custom", "gaussian_linear", "friedman1"]

#: Keys of every population config that are not the population's own (label noise: a transform).
TRANSFORM_KEYS = ("label_noise", "noise_truth")


def _made(build, cfg: Mapping[str, Any]):
    """``build()``, with its ValueError (a bad field) as a ConfigError."""
    try:
        return build()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def gaussian_linear(cfg: Mapping[str, Any]) -> GaussianLinearPopulation:
    """x ~ N(0, Sigma), y = x.beta + sigma eps (exact risk of linear predictors)."""
    beta = cfg.get("beta")
    return _made(lambda: GaussianLinearPopulation(p=cfg.get("p", 5), beta=None if beta is None else list(beta),
                                                  sigma=cfg.get("sigma", 1.0), correlation=cfg.get("correlation", 0.0),
                                                  evaluation_size=cfg.get("evaluation_size", 100_000)), cfg)


def friedman1(cfg: Mapping[str, Any]) -> Friedman1Population:
    """Friedman #1 (truth from a fixed evaluation sample, Monte Carlo error reported)."""
    return _made(lambda: Friedman1Population(p=cfg.get("p", 10), sigma=cfg.get("sigma", 1.0),
                                             evaluation_size=cfg.get("evaluation_size", 100_000)), cfg)


def logistic(cfg: Mapping[str, Any]) -> LogisticPopulation:
    """Nedelko's 2-D logistic model with Bayes error ``cfg["bayes_error"]``."""
    from simstudy.populations.synthetic import LogisticPopulation  # numba: imported only for this kind

    return LogisticPopulation(bayes_error=cfg.get("bayes_error", 0.2))


def gaussian_folds(cfg: Mapping[str, Any]) -> GaussianFoldsPopulation:
    """CV residuals with exchangeable Gaussian fold means (``rho``, ``mean``, ``sigma``)."""
    from simstudy.populations.synthetic import GaussianFoldsPopulation  # numba: imported only for this kind

    return GaussianFoldsPopulation(rho=cfg.get("rho", 0.5), mean=cfg.get("mean", 0.0), sigma=cfg.get("sigma", 1.0))


def tabular(cfg: Mapping[str, Any]) -> TabularPopulation:
    """A finite data set (a file, an OpenML id or CoverType) as population, with its data fingerprint."""
    return build_tabular_population(cfg)


def custom(cfg: Mapping[str, Any]) -> Any:
    """A user's population class ``cfg["_target_"]`` called with the other keys as keyword arguments."""
    from simstudy.registry import import_path

    spec = {k: v for k, v in cfg.items() if k not in ("kind", "name", "_target_", *TRANSFORM_KEYS)}
    target = cfg.get("_target_")
    if not target or target == "???":
        raise ConfigError("population._target_ is missing: population=custom needs the import path of your "
                          "population class, e.g. population._target_=mypackage.populations.Mixture.")
    try:
        cls = import_path(str(target))
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"population._target_={target!r} is invalid: cannot import it ({type(exc).__name__}: "
                          f"{exc}); give the full import path of a class importable from the current directory.") from None
    try:
        population = cls(**spec)
    except TypeError as exc:
        raise ConfigError(f"population: {target}({', '.join(f'{k}={v!r}' for k, v in spec.items())}) failed "
                          f"({exc}); check the keyword arguments given with +population.<name>=value.") from None
    if cfg.get("name") not in (None, "custom") and isinstance(getattr(population, "name", None), str):
        population.name = cfg["name"]
    return population
