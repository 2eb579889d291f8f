"""Builders and field checks of the benchmark's population kinds (config mapping -> population).

:data:`simstudy.registry.POPULATIONS` names the builders; :func:`validate_mechanism_config` runs
the checks that need no data before any work starts (the synthetic populations are cheap to
construct: their evaluation samples are drawn on first use).
"""
from __future__ import annotations

from typing import Any, Mapping

from simstudy.errors import ConfigError

__all__ = ["MECHANISM_KINDS", "gaussian_classes", "hastie_10_2", "sparse_linear", "student_t_linear",
           "heteroscedastic_linear", "packaged", "openml_task", "validate_mechanism_config"]

#: The kinds defined here (each a ``population.kind``).
MECHANISM_KINDS = ("gaussian_classes", "hastie_10_2", "sparse_linear", "student_t_linear", "heteroscedastic_linear",
                   "packaged", "openml_task")


def _named(population: Any, cfg: Mapping[str, Any]) -> Any:
    """A preset's name (``imbalanced_classes`` is a ``gaussian_classes``) on the population."""
    if isinstance(cfg.get("name"), str) and cfg["name"]:
        population.name = cfg["name"]
    return population


def _made(build, cfg: Mapping[str, Any]) -> Any:
    """``build()``, its ValueError (a bad field) as a ConfigError, named as the config says."""
    try:
        return _named(build(), cfg)
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _beta(cfg: Mapping[str, Any]):
    beta = cfg.get("beta")
    return None if beta is None else list(beta)


def gaussian_classes(cfg: Mapping[str, Any]):
    """Two Gaussian classes (exact 0-1 risk of linear rules)."""
    from simstudy.populations.gaussian_classes import GaussianClassesPopulation

    return _made(lambda: GaussianClassesPopulation(
        p=cfg.get("p", 5), support=cfg.get("support"), separation=cfg.get("separation", 2.0),
        positive_rate=cfg.get("positive_rate", 0.5), correlation=cfg.get("correlation", 0.0),
        evaluation_size=cfg.get("evaluation_size", 100_000)), cfg)


def hastie_10_2(cfg: Mapping[str, Any]):
    """The sphere in 10 dimensions (exact 0-1 risk of linear rules)."""
    from simstudy.populations.hastie import HastieSpherePopulation

    return _made(lambda: HastieSpherePopulation(p=cfg.get("p", 10), evaluation_size=cfg.get("evaluation_size",
                                                                                           100_000)), cfg)


def sparse_linear(cfg: Mapping[str, Any]):
    """High-dimensional sparse linear regression (exact risk of linear models)."""
    from simstudy.populations.noisy_linear import SparseLinearPopulation

    return _made(lambda: SparseLinearPopulation(
        p=cfg.get("p", 100), support=cfg.get("support", 5), signal=cfg.get("signal", 1.0), sigma=cfg.get("sigma", 1.0),
        correlation=cfg.get("correlation", 0.0), evaluation_size=cfg.get("evaluation_size", 20_000)), cfg)


def student_t_linear(cfg: Mapping[str, Any]):
    """Linear regression with Student t noise (exact squared and absolute risk of linear models)."""
    from simstudy.populations.noisy_linear import StudentTLinearPopulation

    return _made(lambda: StudentTLinearPopulation(
        p=cfg.get("p", 5), beta=_beta(cfg), sigma=cfg.get("sigma", 1.0), df=cfg.get("df", 3.0),
        correlation=cfg.get("correlation", 0.0), evaluation_size=cfg.get("evaluation_size", 100_000)), cfg)


def heteroscedastic_linear(cfg: Mapping[str, Any]):
    """Linear regression with noise variance sigma^2 (1 + gamma x_1^2) (exact risk of linear models)."""
    from simstudy.populations.noisy_linear import HeteroscedasticLinearPopulation

    return _made(lambda: HeteroscedasticLinearPopulation(
        p=cfg.get("p", 5), beta=_beta(cfg), sigma=cfg.get("sigma", 1.0), gamma=cfg.get("gamma", 1.0),
        correlation=cfg.get("correlation", 0.0), evaluation_size=cfg.get("evaluation_size", 100_000)), cfg)


def packaged(cfg: Mapping[str, Any]):
    """A data set shipped inside scikit-learn or statsmodels (a finite population)."""
    from simstudy.populations.packaged import build_packaged_population

    return _made(lambda: build_packaged_population(cfg), cfg)


def openml_task(cfg: Mapping[str, Any]):
    """One OpenML task (e.g. of suite 396) as a finite population."""
    from simstudy.populations.openml_suite import build_openml_task_population

    return _made(lambda: build_openml_task_population(cfg), cfg)


def validate_mechanism_config(cfg: Mapping[str, Any]) -> None:
    """Field checks of the kinds of :data:`MECHANISM_KINDS` that need no data."""
    kind = cfg.get("kind")
    required = {"packaged": "dataset", "openml_task": "task_id"}.get(kind)
    if required and cfg.get(required) in (None, "???"):
        what = "a data set name (e.g. population.dataset=fair)" if kind == "packaged" else "an OpenML task id"
        raise ConfigError(f"population.{required} is missing: population={kind} needs {what}.")
    if kind == "packaged":
        from simstudy.populations.packaged import DATASETS

        if cfg.get("dataset") not in DATASETS:
            raise ConfigError(f"population.dataset={cfg.get('dataset')!r} is invalid: choose one of "
                              f"{', '.join(DATASETS)}.")
    elif kind == "openml_task":
        task_id = cfg.get("task_id")
        if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 1:
            raise ConfigError(f"population.task_id={task_id!r} is invalid: give an OpenML task id (a positive "
                              "integer), e.g. one of suite 396's.")
        if cfg.get("missing", "error") not in ("error", "drop_rows"):
            raise ConfigError(f"population.missing={cfg.get('missing')!r} is invalid: use 'error' (refuse missing "
                              "values) or 'drop_rows' (leave out the rows with a missing feature).")
    else:
        import simstudy.populations.mechanism_builders as builders

        getattr(builders, kind)(cfg)     # construction checks every field; the evaluation sample is drawn later
