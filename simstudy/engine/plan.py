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

__all__ = ["RunPlan", "RunnerOptions", "build", "make_runner", "prepare"]


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
    values: dict[str, Any] = {}
    if runner is not None:
        values.update(dataclasses.asdict(runner) if dataclasses.is_dataclass(runner) else dict(runner))
    values.update({k: v for k, v in overrides.items() if v is not None})
    values.pop("command", None)
    known = {f.name for f in dataclasses.fields(RunnerConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"runner.{unknown[0]} is not a runner setting: use {', '.join(sorted(known))}.")
    options = RunnerOptions(**values, command=command)
    validate_runner(options)
    return options


def prepare(study: Any, population: Any = None, learner: Any = None, runner: Any = None, command: str = "",
            **params: Any) -> RunPlan:
    """Validate a request without loading data or starting workers (see the module docstring)."""
    from simstudy.populations import expand_preset, validate_population_config

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
    if "learner" in cls.uses and (isinstance(learner, Mapping) or hasattr(learner, "items")):
        from simstudy.learners.dispatch import validate_learner_config

        validate_learner_config(dict(learner))
    if "population" in cls.uses:
        if population is None:
            raise ConfigError(f"population=None is invalid: study {cls.name!r} needs a population (a name such as "
                              "'letter', a config mapping, or a population object).")
        if isinstance(population, Mapping) or hasattr(population, "items"):
            spec = expand_preset(population)
            if "_target_" not in spec:
                validate_population_config(spec)
    return RunPlan(cls, config, population, learner, options)


def _check_loss_field(config: StudyConfig) -> None:
    """``study.loss`` names a known loss or an importable function (no data needed)."""
    if not hasattr(config, "loss"):
        return
    from simstudy.cv.losses import resolve_loss

    try:
        resolve_loss(config.loss)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


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
