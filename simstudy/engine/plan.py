"""Checking a request before any work: the study, its config, the runner settings and the parts'
config fields (:func:`prepare`, no data loaded), then building the parts (:func:`build`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from simstudy.engine.config import RunnerConfig, validate_runner
from simstudy.errors import ConfigError
from simstudy.studies.base import Study, StudyConfig
from simstudy.studies.resolve import make_config, resolve_study
from simstudy.studies.targets import validate_targets

__all__ = ["RunPlan", "RunnerOptions", "build", "check_storable", "function_path", "make_runner", "prepare"]


@dataclass
class RunnerOptions(RunnerConfig):
    """The runner settings plus the command that started the run (used in failure hints)."""

    command: str = ""


@dataclass
class RunPlan:
    """A validated request: the study class, its config, the parts as given, the runner."""

    study: type[Study]
    config: StudyConfig
    population: Any = None
    learner: Any = None
    runner: RunnerOptions = field(default_factory=RunnerOptions)
    #: Command-line overrides (recorded in overrides.yaml and the manifest; simstudy-collect
    #: reads the swept ones from there).
    overrides: list[str] = field(default_factory=list)


def make_runner(runner: Any = None, command: str = "", **overrides: Any) -> RunnerOptions:
    """Runner options from a mapping / RunnerConfig plus keyword overrides, validated."""
    from simstudy.schema import typed_settings

    values: dict[str, Any] = {}
    if runner is not None:
        if dataclasses.is_dataclass(runner) and not isinstance(runner, type):
            values.update(dataclasses.asdict(runner))
        elif isinstance(runner, Mapping) or hasattr(runner, "items"):
            values.update(dict(runner))
        else:
            raise ConfigError(f"runner={runner!r} is invalid: give a mapping of runner settings (e.g. "
                              "runner={'n_jobs': 2, 'backend': 'loky'}) or a RunnerConfig.")
    values.update({k: v for k, v in overrides.items() if v is not None})
    values.pop("command", None)
    values = typed_settings(RunnerConfig, values, "runner", "the runner")
    options = RunnerOptions(**values, command=command)
    validate_runner(options)
    return options


def prepare(study: Any, population: Any = None, learner: Any = None, runner: Any = None, command: str = "",
            **params: Any) -> RunPlan:
    """Validate a request without loading data or starting workers (see the module docstring)."""
    from simstudy.populations import expand_preset, typed_population_config, validate_population_config
    from simstudy.populations.in_memory import in_memory_population, is_in_memory

    cls = resolve_study(study)
    if isinstance(study, Study):
        params = {**study.config.as_dict(), **params}
    config = make_config(cls, params)
    validate_targets(cls, config)
    _check_loss_field(config)
    options = make_runner(runner, command)
    if options.only_replicate is not None:
        replicates = getattr(config, "replicates", None)
        if isinstance(replicates, int) and options.only_replicate >= replicates:
            raise ConfigError(f"runner.only_replicate={options.only_replicate} is invalid: the study has "
                              f"{replicates} replicates per condition (indices 0..{replicates - 1}).")
    if "learner" in cls.uses:
        learner = _checked_learner(learner)
    if "population" in cls.uses:
        if population is None:
            raise ConfigError(f"population=None is invalid: study {cls.name!r} needs a population (a name such as "
                              "'letter', a config mapping, or a population object).")
        if is_in_memory(population):
            population = in_memory_population(population)
        elif isinstance(population, Mapping) or hasattr(population, "items"):
            spec = expand_preset(population)
            if "_target_" not in spec:
                population = typed_population_config(spec)
                validate_population_config(population)
    from simstudy.engine.budget import check_budget

    check_budget(config, options)  # data-free lower bound (one feature): before anything is built
    return RunPlan(cls, config, population, learner, options)


def _checked_learner(learner: Any) -> Any:
    """The learner as given, refused early when it cannot be one (a class, a number, a bad mapping)."""
    if learner is None or isinstance(learner, str):
        return learner
    if isinstance(learner, type):
        raise ConfigError(f"learner={learner.__name__} is a class, not an instance: give an instance, e.g. "
                          f"learner={learner.__name__}() (with its parameters), or a preset name such as 'tree'.")
    if isinstance(learner, Mapping) or (hasattr(learner, "items") and not hasattr(learner, "fit")):
        from simstudy.learners.dispatch import validate_learner_config
        from simstudy.learners.presets import LearnerConfig
        from simstudy.schema import typed_settings

        learner = dict(learner)
        if "_target_" not in learner:
            learner = typed_settings(LearnerConfig, learner, "learner", "a learner mapping")
        validate_learner_config(learner)
        return learner
    if not hasattr(learner, "get_params"):
        from simstudy.learners.base import check_learner

        try:
            check_learner(learner)
        except ValueError as exc:
            raise ConfigError(f"learner={learner!r} ({type(learner).__name__}) is invalid: {exc}") from None
    return learner


def _check_loss_field(config: StudyConfig) -> None:
    """``study.loss`` names a known loss or an importable function (no data needed)."""
    if not hasattr(config, "loss"):
        return
    from simstudy.cv.losses import resolve_loss

    try:
        resolve_loss(config.loss)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    except (ImportError, AttributeError) as exc:  # a registered name whose target cannot be imported
        raise ConfigError(f"study.loss={config.loss!r} is invalid: its implementation cannot be imported "
                          f"({type(exc).__name__}: {exc}); fix the target it was registered with.") from None
    if callable(config.loss) and not isinstance(config.loss, str):
        path = function_path(config.loss)
        if path is not None:  # stored by name, so the run directory's config can record it
            config.loss = path


def function_path(function: Any) -> str | None:
    """The import path of ``function`` (``module.name``, or ``module:Outer.name`` when nested) when
    importing it gives back the same object; None for a lambda, a local function or ``__main__``."""
    from simstudy.registry import import_path

    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    path = f"{module}.{qualname}" if "." not in qualname else f"{module}:{qualname}"
    try:
        return path if import_path(path) is function else None
    except Exception:  # noqa: BLE001 - any failure to import means: no import path
        return None


def check_storable(plan: RunPlan) -> None:
    """A run written to a directory records its config as text: a function given as ``loss=``
    needs an import path (see :func:`function_path`); refused before anything is written."""
    loss = getattr(plan.config, "loss", None)
    if loss is not None and not isinstance(loss, (str, Mapping)):
        raise ConfigError(f"study.loss={loss!r} is invalid with out=: a run directory records its loss by import "
                          "path, and this function has none (a lambda, a local function or one defined in the "
                          "script run as __main__). Define it at the top level of a module and give "
                          "loss='package.module.function' (or the function itself), or run without out=.")


def build(plan: RunPlan) -> Study:
    """Build the parts the study uses and run its checks; returns the study instance."""
    from simstudy.cv.losses import resolve_loss
    from simstudy.learners.dispatch import build_learner
    from simstudy.populations import build_population

    cls, config = plan.study, plan.config
    try:
        population = build_population(plan.population) if "population" in cls.uses else None
    except ValueError as exc:  # unusable data (missing values, one class, ...): the message names the field
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(str(exc)) from None
    needed = cls.parts_needed(config, population)
    loss = resolve_loss(config.loss) if hasattr(config, "loss") else None
    learner = None
    if "learner" in needed:
        if plan.learner is None:
            raise ConfigError(f"learner=None is invalid: study {cls.name!r} needs a learner (a name such as 'tree', "
                              "a scikit-learn estimator, or a learner object).")
        learner = build_learner(plan.learner, population, loss)
    study = cls(config, population, learner, loss)
    sizes = getattr(config, "sizes", None)
    if callable(getattr(population, "check_size", None)) and sizes:
        try:
            population.check_size(max(sizes))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    try:
        study.check()
    except ValueError as exc:  # a part that does not fit the data (loss, learner): the message names the field
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(str(exc)) from None
    return study
