"""The tasks of an OpenML benchmarking suite as finite populations (suite 396 by default).

An OpenML suite is a list of tasks; a task names a data set and its target column, and its type
says classification (task type 1) or regression (2). :func:`suite_tasks` lists a suite's tasks
from the OpenML REST API, :func:`load_suite_task` loads one through the tabular OpenML route
(:func:`simstudy.populations.io.openml.load_openml`, via the registered ``tabular`` builder) as a
finite population, and :func:`load_suite` does both for every task. ``population=openml_task
population.task_id=<id>`` does it from the command line.

The tabular route takes the data set's default target; a task whose target is another column is
refused with the fix (save the data as a file and name the column). The API's answers are cached
as JSON files under ``<data_home>/openml_suites`` (``data_home``: scikit-learn's cache,
``~/scikit_learn_data``, when None), so a suite listed once is listed offline afterwards.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from simstudy.errors import ConfigError, DataUnavailableError

__all__ = ["OPENML_API", "SCHULZ_KUEMPEL_SUITE", "SuiteTask", "openml_json", "suite_tasks", "task_info",
           "load_suite_task", "load_suite", "build_openml_task_population"]

OPENML_API = "https://www.openml.org/api/v1/json"
#: The suite of the R benchmark of Schulz-Kuempel et al. (arXiv 2409.18836).
SCHULZ_KUEMPEL_SUITE = 396
#: OpenML task types simstudy can sample from.
TASK_TYPES = {1: "classification", 2: "regression"}


@dataclass(frozen=True)
class SuiteTask:
    """One OpenML task: its id, data set, target column and kind."""

    task_id: int
    data_id: int
    target: str
    task: str               # "classification" or "regression"
    name: str = ""          # the data set's name


def _cache_dir(data_home: str | os.PathLike | None) -> Path:
    from sklearn.datasets import get_data_home

    return Path(get_data_home(None if data_home is None else os.path.expanduser(str(data_home)))) / "openml_suites"


def openml_json(path: str, data_home: str | os.PathLike | None = None) -> dict[str, Any]:
    """The OpenML API's JSON answer for ``path`` (e.g. ``"study/396"``), cached under ``data_home``.

    Raises
    ------
    DataUnavailableError
        Neither the cache nor the network has it.
    """
    cached = _cache_dir(data_home) / (path.replace("/", "_") + ".json")
    if cached.is_file():
        return json.loads(cached.read_text())
    from urllib.request import urlopen

    try:
        with urlopen(f"{OPENML_API}/{path}", timeout=60) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except Exception as exc:  # network errors come in many types (URLError, OSError, timeouts)
        raise DataUnavailableError(
            f"OpenML {path!r}: the request failed ({type(exc).__name__}: {exc}). Connect to the internet once (the "
            f"answer is then cached under {str(cached.parent)!r}), or load the data set from a file with "
            "population=tabular population.path=...") from None
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(answer))
    return answer


def _task_ids(study: Mapping[str, Any], suite_id: int) -> list[int]:
    tasks = (study.get("study") or {}).get("tasks") or {}
    ids = tasks.get("task_id") if isinstance(tasks, Mapping) else None
    if not ids:
        raise ValueError(f"OpenML suite {suite_id} lists no tasks; check the suite id (Schulz-Kuempel et al.'s is "
                         f"{SCHULZ_KUEMPEL_SUITE}).")
    return [int(t) for t in (ids if isinstance(ids, list) else [ids])]


def task_info(task_id: int, data_home: str | os.PathLike | None = None) -> SuiteTask:
    """The data set, target and kind of OpenML task ``task_id``."""
    task = openml_json(f"task/{int(task_id)}", data_home).get("task") or {}
    kind = TASK_TYPES.get(int(task.get("task_type_id", 0)))
    if kind is None:
        raise ValueError(f"population.task_id={task_id}: OpenML task type {task.get('task_type')!r} is neither "
                         "supervised classification nor regression; choose another task.")
    inputs = task.get("input") or []
    source = next((i.get("data_set") for i in inputs if i.get("name") == "source_data"), None)
    if not source:
        raise ValueError(f"population.task_id={task_id}: OpenML's description of the task names no data set.")
    data_id = int(source["data_set_id"])
    described = openml_json(f"data/{data_id}", data_home).get("data_set_description") or {}
    return SuiteTask(int(task_id), data_id, str(source.get("target_feature", "")), kind, str(described.get("name", "")))


def suite_tasks(suite_id: int = SCHULZ_KUEMPEL_SUITE, data_home: str | os.PathLike | None = None) -> list[SuiteTask]:
    """The tasks of OpenML suite ``suite_id`` in the suite's order."""
    return [task_info(t, data_home) for t in _task_ids(openml_json(f"study/{int(suite_id)}", data_home), suite_id)]


def load_suite_task(task: SuiteTask, data_home: str | os.PathLike | None = None, missing: str = "error",
                    replace: bool = True, name: str | None = None):
    """The finite population of one task: its data set (all classes kept) and target.

    Raises
    ------
    ValueError
        The task's target is not its data set's default target (which the tabular route reads).
    """
    from simstudy.registry import POPULATIONS

    described = openml_json(f"data/{task.data_id}", data_home).get("data_set_description") or {}
    default = str(described.get("default_target_attribute", ""))
    if task.target and default and task.target != default:
        raise ValueError(f"OpenML task {task.task_id}: its target {task.target!r} is not the default target "
                         f"{default!r} of data set {task.data_id}; save the data as a CSV file and use "
                         f"population=tabular population.path=... population.label_column=<the column of "
                         f"{task.target!r}>.")
    cfg = {"kind": "tabular", "name": name or task.name or f"openml_task_{task.task_id}", "source": "openml",
           "openml_id": task.data_id, "task": task.task, "data_home": None if data_home is None else str(data_home),
           "missing": missing, "replace": replace, "positive": None, "label_column": "auto"}
    return POPULATIONS["tabular"].load()(cfg)


def load_suite(suite_id: int = SCHULZ_KUEMPEL_SUITE, data_home: str | os.PathLike | None = None,
               missing: str = "error", replace: bool = True) -> dict[str, Any]:
    """Every task of a suite as a finite population: {data set name: population}."""
    return {task.name or f"openml_task_{task.task_id}": load_suite_task(task, data_home, missing, replace)
            for task in suite_tasks(suite_id, data_home)}


def build_openml_task_population(cfg: Mapping[str, Any]):
    """The population of ``population=openml_task population.task_id=<id>``."""
    task_id = cfg.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 1:
        raise ConfigError(f"population.task_id={task_id!r} is invalid: give an OpenML task id (a positive integer), "
                          f"e.g. one of suite {SCHULZ_KUEMPEL_SUITE}'s "
                          "(simstudy.populations.openml_suite.suite_tasks).")
    task = task_info(task_id, cfg.get("data_home"))
    name = cfg.get("name") if cfg.get("name") not in (None, "openml_task") else None
    return load_suite_task(task, cfg.get("data_home"), cfg.get("missing", "error"), cfg.get("replace", True), name)
