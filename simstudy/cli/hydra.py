"""Hydra glue of the ``simstudy`` command: the config schema and groups (:func:`register_configs`),
the plan from a composed config (:func:`plan_from_config`), and Hydra's own output held back and
reworded (:class:`HeldStderr`, :func:`hydra_message`).

Every registered study, population preset and learner preset becomes an option of its config
group (``study=cv_clt``, ``population=letter``, ``learner=knn``) typed by its dataclass, so a
misspelt key or a value of the wrong type fails at composition time. Relations between fields
are checked by each study's ``Config.validate`` and by the engine before any work starts.
"""
from __future__ import annotations

import dataclasses
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING

from simstudy.engine.config import RunnerConfig
from simstudy.engine.plan import RunPlan, prepare
from simstudy.errors import ConfigError
from simstudy.registry import LEARNERS, POPULATIONS, STUDIES

__all__ = ["Config", "HeldStderr", "hydra_message", "mode_from_command_line", "plan_from_config", "register_configs",
           "task_has_started", "task_started"]


@dataclass
class Config:
    """The top-level schema: one node per config group."""

    population: Any = MISSING
    learner: Any = MISSING
    study: Any = MISSING
    runner: RunnerConfig = field(default_factory=RunnerConfig)


def _node(value: Any) -> Any:
    """A ConfigStore node: a dataclass instance stays typed, a mapping stays a mapping."""
    return value if dataclasses.is_dataclass(value) or isinstance(value, dict) else dict(value)


def register_configs() -> None:
    """Register the top-level schema and every registered part as Hydra config-group options."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="config_schema", node=Config)
    for name, entry in STUDIES.items():
        cs.store(group="study", name=name, node=entry.load_config())
    # a user's Study class: study=custom study._target_=package.module.Class +study.<field>=value
    cs.store(group="study", name="custom", node={"name": "custom", "_target_": MISSING})
    for name, entry in POPULATIONS.items():
        cs.store(group="population", name=name, node=_node(entry.load_config()))
    for name, entry in LEARNERS.items():
        cs.store(group="learner", name=name, node=_node(entry.load_config()))
    presets = (("default", "auto", -1), ("loky", "loky", -1), ("fork", "fork", -1), ("threading", "threading", -1),
               ("sequential", "sequential", 1), ("dask", "dask", -1), ("submitit", "submitit", -1))
    for name, backend, n_jobs in presets:
        cs.store(group="runner", name=name, node=RunnerConfig(backend=backend, n_jobs=n_jobs))


#: Set once the task function runs: Hydra's own exit status 1 before that is a composition error.
_TASK_STARTED = False


def plan_from_config(cfg, command: str = "") -> RunPlan:
    """A validated :class:`~simstudy.engine.plan.RunPlan` from a composed Hydra config (no data loaded)."""
    from omegaconf import OmegaConf

    study = OmegaConf.to_container(cfg.study, resolve=True, throw_on_missing=False)
    target = study.pop("_target_", None) or study.get("name")
    if target == "custom" or target == "???":
        raise ConfigError("study._target_ is missing: study=custom needs the import path of your Study class, e.g. "
                          "study._target_=examples.bootstrap632.study.Bootstrap632Study.")
    if target and target != study.get("name"):
        study.pop("name", None)
    population = OmegaConf.to_container(cfg.population, resolve=True) if "population" in cfg else None
    learner = OmegaConf.to_container(cfg.learner, resolve=True) if "learner" in cfg else None
    runner = OmegaConf.to_container(cfg.runner, resolve=True)
    return prepare(target, population, learner, runner, command=command,
                   **{k: v for k, v in study.items() if k != "name"})


def task_has_started() -> bool:
    """Whether Hydra has composed the config and called the task."""
    return _TASK_STARTED


def task_started() -> None:
    """Hydra composed the config and runs the task: from here on, stderr is not held back."""
    global _TASK_STARTED
    _TASK_STARTED = True
    if isinstance(sys.stderr, HeldStderr):
        sys.stderr.release()


class HeldStderr:
    """``sys.stderr`` while Hydra composes the config: what Hydra writes is held back until the task
    starts (then passed on) or Hydra gives up (then reworded as one ``simstudy: error:`` paragraph)."""

    def __init__(self, stream: Any):
        self.stream, self.held = stream, []

    def write(self, text: str) -> int:
        if _TASK_STARTED:
            return self.stream.write(text)
        self.held.append(text)
        return len(text)

    def release(self) -> None:
        if self.held:
            self.stream.write("".join(self.held))
            self.held = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def hydra_message(text: str) -> str:
    """Hydra's multi-line composition error as one paragraph (no stack-trace tip, no search path)."""
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("Set the environment variable HYDRA_FULL_ERROR")]
    if "Config search path:" in lines:
        lines = lines[:lines.index("Config search path:")]
    if any(line.startswith("Traceback") for line in lines):
        lines = lines[-1:]  # the exception itself
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith(":") and out[-1].startswith("Available options"):
            out[-1] += " " + line
        elif out and out[-1].startswith("Available options"):
            out[-1] += ", " + line
        else:
            out.append(line)
    message = "; ".join(line.rstrip(".") for line in out) or "the configuration could not be composed"
    return message + _nearest_field(message) + ". See simstudy --help for the groups, options and fields."


def _schema_classes() -> dict[str, type]:
    """The registered study configs and the dataclasses of their fields (e.g. the targets), by name."""
    classes: dict[str, type] = {}
    for entry in STUDIES.values():
        config = entry.load_config()
        config = config if isinstance(config, type) else type(config)
        classes[config.__name__] = config
        for f in dataclasses.fields(config):
            factory = f.default_factory
            if isinstance(factory, type) and dataclasses.is_dataclass(factory):
                classes[factory.__name__] = factory
    return classes


def _nearest_field(message: str) -> str:
    """"; did you mean 'rho'?" for Hydra's "Key 'rhoo' not in 'CVVarianceTargets'" (a study's field)."""
    import difflib
    import re

    found = re.search(r"Key '([^']+)' not in '([A-Za-z_][A-Za-z0-9_]*)'", message)
    cls = _schema_classes().get(found.group(2)) if found else None
    if cls is None:
        return ""
    names = [f.name for f in dataclasses.fields(cls) if f.name != "name"]
    near = difflib.get_close_matches(found.group(1), names, n=1, cutoff=0.0)
    return f"; did you mean {near[0]!r}? Valid: {', '.join(names)}" if near else ""


#: Arguments that may set ``hydra.mode`` (or bring config files that do): with any of them Hydra
#: reads the mode from the composed configuration as usual.
MODE_ARGUMENTS = ("hydra.mode", "hydra.searchpath", "--config-dir", "--config-path", "--config-name", "-cd", "-cp",
                  "-cn")


@contextmanager
def mode_from_command_line(argv: list[str]):
    """Run Hydra without the composition it makes only to read ``hydra.mode``.

    Before a run Hydra composes the whole configuration once just to read ``hydra.mode`` (set
    by a config file or an override), then again for the run: the first composition is start-up
    spent on nothing. simstudy's own configs leave the mode unset (tested for every preset), so unless the command
    line names the mode or other config files (:data:`MODE_ARGUMENTS`), the first composition
    is skipped and Hydra takes the mode from ``-m``/``--multirun``, as it does when the composed
    config leaves it unset.
    """
    try:
        from hydra._internal.hydra import Hydra
    except ImportError:  # pragma: no cover - another Hydra layout: its own behaviour
        yield
        return
    names = [arg.split("=", 1)[0].lstrip("+~") for arg in argv]
    original = getattr(Hydra, "get_mode", None)
    if original is None or any(name.startswith(MODE_ARGUMENTS) for name in names):
        yield
        return
    Hydra.get_mode = lambda self, config_name, overrides: None
    try:
        yield
    finally:
        Hydra.get_mode = original
