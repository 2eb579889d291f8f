"""The one run: every study, from Python or from the command line, goes through :func:`run_study`.

Order of work (nothing is computed, and no worker started, before the input is known to be
good):

1. :func:`prepare`: resolve the study (a registered name, a class, an instance, or an import
   path), build its config dataclass from the parameters and validate it, validate the runner
   settings and the parts' config fields (no data loaded yet);
2. :func:`build`: build the parts the study uses (load the population's data, choose the
   learner's engine, resolve the loss), run the study's own checks;
3. :func:`execute`: claim the run directory (lock, identity, resume or extension; only with
   ``out``), run every phase through the runner (chunks, shards, failure policy), aggregate,
   write records, tables, figures and the manifest, and return a :class:`StudyResult`.

The engine knows nothing about any particular study: its columns, tables and figures come from
the study's parts (:mod:`simstudy.studies.base`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from simstudy.engine.config import RunnerConfig, validate_runner
from simstudy.errors import ConfigError
from simstudy.engine.manifest import config_hash, environment_info, write_json
from simstudy.engine.records import timing_by_condition
from simstudy.engine.backends.prewarm import start_prewarm, wait_for_prewarm
from simstudy.results import StudyResult
from simstudy.engine.rundir import RunDirectory, RunIdentity
from simstudy.engine.runner import ChunkOutput, RunReport, ShardStore, run_chunks
from simstudy.studies.base import Phase, Study, StudyConfig

__all__ = ["RunPlan", "RunnerOptions", "prepare", "build", "execute", "run_study", "resolve_study"]

log = logging.getLogger("simstudy")


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


# ----------------------------------------------------------------------------- step 1: prepare
def resolve_study(study: Any) -> type[Study]:
    """The Study class for a registered name, an import path, a Study subclass or instance."""
    from simstudy.registry import STUDIES, import_path

    if isinstance(study, Study):
        return type(study)
    if isinstance(study, type) and issubclass(study, Study):
        return study
    if isinstance(study, str):
        if study in STUDIES:
            return STUDIES[study].load()
        if "." in study or ":" in study:
            try:
                cls = import_path(study)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ConfigError(f"study._target_={study!r} is invalid: cannot import it ({type(exc).__name__}: "
                                  f"{exc}).") from None
            if isinstance(cls, type) and issubclass(cls, Study):
                return cls
            raise ConfigError(f"study._target_={study!r} is invalid: it is not a subclass of "
                              "simstudy.studies.base.Study.")
        raise ConfigError(f"study={study!r} is invalid: choose one of {', '.join(STUDIES)}, or give the import path "
                          "of your Study class.")
    raise ConfigError(f"study={study!r} is invalid: give a study name, a Study subclass or its import path.")


def make_config(study: type[Study], params: Mapping[str, Any]) -> StudyConfig:
    """The study's config dataclass from ``params`` (unknown keys refused), validated."""
    known = set(study.Config.field_names())
    params = {k: v for k, v in params.items() if k not in ("_target_",)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ConfigError(f"study.{unknown[0]} is not a setting of study {study.name!r}: its settings are "
                          f"{', '.join(sorted(known - {'name'}))}.")
    params.setdefault("name", study.name)
    if params["name"] != study.name:
        params["name"] = study.name
    config = study.Config(**params)
    config.validate()
    return config


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


# ----------------------------------------------------------------------------- step 2: build
def build(plan: RunPlan) -> Study:
    """Build the parts the study uses and run its checks; returns the study instance."""
    from simstudy.learners.dispatch import build_learner
    from simstudy.cv.losses import resolve_loss
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


# ----------------------------------------------------------------------------- identity
def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def data_fingerprint(population: Any) -> str | None:
    """SHA-256 of a finite population's data (its ``fingerprint`` attribute when it has one)."""
    given = getattr(population, "fingerprint", None)
    if isinstance(given, str):
        return given
    X, y = getattr(population, "X", None), getattr(population, "y", None)
    if isinstance(X, np.ndarray) and isinstance(y, np.ndarray):
        h = hashlib.sha256()
        for array in (X, y):
            h.update(str((array.shape, array.dtype.str)).encode())
            h.update(np.ascontiguousarray(array).data)
        return h.hexdigest()
    return None


def run_identity(study: Study) -> RunIdentity:
    """What the records of ``study`` depend on (see :mod:`simstudy.engine.rundir`)."""
    config = study.config.as_dict()
    content: dict[str, Any] = {"study": {k: config[k] for k in study.Config.field_names("record")}}
    if study.population is not None:
        content["population"] = {**study.population.seed_params(), "data": data_fingerprint(study.population)}
    if study.learner is not None:
        content["learner"] = _describe(study.learner)
    if study.loss is not None:
        content["loss"] = study.loss.describe()
    subjects = {name: _digest(spec) for name, spec in study.subjects().items()}
    return RunIdentity(study.name, _digest(content), subjects, json.loads(json.dumps(content, default=str)))


def _describe(part: Any) -> dict[str, Any]:
    describe = getattr(part, "describe", None)
    return describe() if callable(describe) else {"name": getattr(part, "name", type(part).__name__),
                                                  "type": f"{type(part).__module__}.{type(part).__qualname__}"}


def resolved_config(study: Study, plan: RunPlan) -> dict[str, Any]:
    """The configuration as recorded in ``config.yaml``: the study's settings, the parts it used
    (their config, or a description of a part given as an object), the runner."""
    out: dict[str, Any] = {"study": study.config.as_dict()}
    for part in ("population", "learner"):
        obj = getattr(study, part)
        if obj is None:
            continue
        given = getattr(plan, part)
        if isinstance(given, Mapping) or hasattr(given, "items"):
            out[part] = json.loads(json.dumps(dict(given), default=str))
        elif isinstance(given, str):
            out[part] = {"preset": given, **_describe(obj)}
        else:
            out[part] = _describe(obj)
    runner = dataclasses.asdict(plan.runner)
    runner.pop("command", None)
    out["runner"] = runner
    return out


# ----------------------------------------------------------------------------- step 3: execute
def _failure_hint(phase: Phase, options: RunnerOptions):
    def describe(out: ChunkOutput) -> str:
        row = {}
        if out.error:
            row = {"replicate": out.chunk.start, "error": out.error}
        elif isinstance(out.records, pd.DataFrame) and "error" in out.records:
            bad = out.records[out.records["error"].fillna("") != ""]
            row = bad.iloc[0].to_dict() if len(bad) else {}
        replicate = int(row.get("replicate", out.chunk.start))
        condition = phase.conditions[out.chunk.condition]
        selection = condition.selection() if hasattr(condition, "selection") else ""
        if options.command:
            how = (f"{options.command} {selection} runner.only_replicate={replicate} runner.on_error=raise "
                   "hydra.run.dir=runs/debug").replace("  ", " ")
        else:
            how = f"run_study(..., runner={{'only_replicate': {replicate}, 'on_error': 'raise'}}) with {selection}"
        return (f"First failure in chunk {out.chunk.name} ({condition.label()}), replicate {replicate}: "
                f"{row.get('error', '')}. Reproduce it alone with: {how}")
    return describe


def run_phase(phase: Phase, options: RunnerOptions, store: ShardStore | None,
              while_computing: Callable[[], Any] | None = None) -> RunReport:
    """Run one phase of a study through :func:`simstudy.engine.runner.run_chunks` (``while_computing``: see there)."""
    replicate_range = None
    if options.only_replicate is not None:
        replicate_range = (int(options.only_replicate), int(options.only_replicate) + 1)
    return run_chunks(phase.worker, list(phase.replicates), chunk_size=options.chunk_size, n_jobs=options.n_jobs,
                      backend=options.backend, progress=options.progress, desc=phase.description or phase.name,
                      store=store, phase=phase.name, on_error=options.on_error,
                      max_failure_rate=options.max_failure_rate, replicate_range=replicate_range,
                      scheduler_address=options.scheduler_address, describe_failure=_failure_hint(phase, options),
                      keys=[c.key for c in phase.conditions], subjects=phase.subjects, while_computing=while_computing,
                      chunk_cost=_chunk_cost(phase))


def _chunk_cost(phase: Phase) -> Callable[[Any], float] | None:
    """Replicates x sample size, when every condition has a sample size ``n`` (the cost of a CV
    replicate grows with n): the runner then starts the costliest chunks first. None otherwise."""
    sizes = [getattr(c, "n", None) for c in phase.conditions]
    if not sizes or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in sizes):
        return None
    return lambda chunk: chunk.size * int(sizes[chunk.condition])


def _ordered_records(report: RunReport, phase: Phase) -> pd.DataFrame:
    """The phase's records in (condition, replicate, subject) order, whatever chunks made them."""
    records = report.records
    if not phase.subjects or records.empty or "subject" not in records:
        return records
    condition = {c.key: i for i, c in enumerate(phase.conditions)}
    rank = {s: i for i, s in enumerate(phase.subjects)}
    order = np.lexsort((records["subject"].map(rank).to_numpy(), records["replicate"].to_numpy(),
                        records["condition_key"].map(condition).to_numpy()))
    return records.iloc[order].reset_index(drop=True)


def _phase_manifest(phase: Phase, report: RunReport, records: pd.DataFrame) -> dict[str, Any]:
    timing = timing_by_condition(report.outputs)
    failed: dict[str, int] = {}
    if {"error", "condition_key", "replicate"} <= set(records.columns):
        bad = records[records["error"].fillna("") != ""]
        failed = bad.groupby("condition_key")["replicate"].nunique().to_dict()
    conditions = [{"condition": c.label(), "condition_key": c.key, "replicates": int(R),
                   "failed": int(failed.get(c.key, 0)), **timing.get(i, {})}
                  for i, (c, R) in enumerate(zip(phase.conditions, phase.replicates))]
    return {"shards": report.shards, "resumed_chunks": report.resumed_chunks,
            "computed_chunks": report.computed_chunks, "chunk_errors": report.chunk_errors,
            "warnings": report.warnings, "backend": report.backend, "conditions": conditions}


def _failures(records: pd.DataFrame) -> pd.DataFrame:
    if "error" not in records:
        return records.iloc[:0]
    return records[records["error"].fillna("") != ""]


def _manifest(study: Study, plan: RunPlan, identity: RunIdentity, phases: dict[str, dict],
              records: dict[str, pd.DataFrame], started: str, wall: float, environment: dict[str, Any]) -> dict[str, Any]:
    failures = _failures(records[study.main_phase])
    scalar = [c for c in failures.columns if failures[c].map(np.isscalar).all()] if len(failures) else []
    main = phases.get(study.main_phase, {})
    return {
        "study": study.name, "started_utc": started,
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wall_time_s": wall,
        "identity_hash": identity.hash, "subjects": identity.subjects, "seed": getattr(study.config, "seed", None),
        "command": plan.runner.command, "overrides": list(plan.overrides),
        "runner": {k: v for k, v in dataclasses.asdict(plan.runner).items() if k != "command"},
        **{k: main.get(k) for k in ("shards", "resumed_chunks", "computed_chunks", "chunk_errors", "warnings",
                                    "backend", "conditions")},
        "phases": {name: m for name, m in phases.items() if name != study.main_phase},
        **study.manifest(records),
        "replicates_total": int(len(records[study.main_phase])), "replicates_failed": int(len(failures)),
        "failures_sample": failures[scalar].head(20).to_dict("records"),
        "environment": environment,
    }


def execute(plan: RunPlan, out: str | Path | RunDirectory | None = None, study: Study | None = None,
            release_workers: bool = False) -> StudyResult:
    """Build (unless ``study`` is given), run every phase, aggregate; write files when ``out`` is set.

    ``release_workers``: stop the worker processes once the chunks are done (the command line,
    which needs them no more): the process then runs one thread again and may fork to draw its
    figures in parallel (:func:`simstudy.report.figures.start_saving_figures`).

    The run directory is locked before any data is loaded (a busy or foreign directory is
    refused at once) and claimed for the run's identity once the parts are built. ``out`` may be
    a :class:`RunDirectory` the caller has locked already (the command line does, before it
    starts its workers).
    """
    t_start = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    directory = None if out is None else (out if isinstance(out, RunDirectory) else RunDirectory(out)).lock()
    # the git state before the run writes anything (its own files, e.g. a committed cli.log, do not count)
    environment = environment_info(directory.path if directory is not None else None)
    try:
        study = study if study is not None else build(plan)
        phases = study.phases(plan.runner.on_error)
        _check_only_replicate(plan, phases)
        identity = run_identity(study)
        config = resolved_config(study, plan)
        if directory is not None:
            directory.claim(identity, plan.runner.overwrite)
            _check_debug_run(plan, directory)
    except BaseException:
        if directory is not None:
            directory.abandon()  # a refused run leaves the directory as it found it
        raise
    try:
        if directory is not None:
            _write_config(directory.path, config, plan.overrides)
            _attach_log(directory.path)
        _note_cold_start()
        records, manifests = {}, {}
        for phase in phases:
            store = None
            if directory is not None and plan.runner.only_replicate is None:
                store = ShardStore(directory.path / "shards", identity.hash)
            # while the workers warm up and compute, the aggregation's and the report's libraries load here
            prewarm = partial(start_prewarm, study.aggregation_imports) if directory is not None else None
            report = run_phase(phase, plan.runner, store, while_computing=prewarm)
            records[phase.name] = _ordered_records(report, phase)
            manifests[phase.name] = _phase_manifest(phase, report, records[phase.name])
        if release_workers:
            from simstudy.engine.backends.warmup import kill_workers

            kill_workers()
        main = records[study.main_phase]
        labels = study.record_labels()
        for i, (name, value) in enumerate(labels.items()):
            main.insert(i, name, value)
        tables = study.aggregate(records)
        wall = time.perf_counter() - t_start
        manifest = _manifest(study, plan, identity, manifests, records, started, wall, environment)
        result = StudyResult(study, config, records, tables, manifest, directory.path if directory else None)
        if directory is not None:
            result.write(directory.path)
        _log_end(result, manifests)
        return result
    finally:
        wait_for_prewarm()  # never leave a thread importing matplotlib behind (an error or Ctrl-C ends the run)
        if directory is not None:
            _detach_log()
            directory.release()


def _check_only_replicate(plan: RunPlan, phases: list[Phase]) -> None:
    """``runner.only_replicate`` names a replicate that every phase has (checked before any work)."""
    r = plan.runner.only_replicate
    if r is None:
        return
    for phase in phases:
        most = max(phase.replicates, default=0)
        if r >= most:
            raise ConfigError(f"runner.only_replicate={r} is invalid: the {phase.name!r} phase of study "
                              f"{plan.study.name!r} has {most} replicate(s) per condition (indices 0..{most - 1}); "
                              "a debugging run needs a replicate index that every phase has.")


def _check_debug_run(plan: RunPlan, directory: RunDirectory) -> None:
    """A one-replicate debugging run never writes over a run's records."""
    if plan.runner.only_replicate is not None and (directory.path / "shards").is_dir():
        raise ConfigError(f"runner.only_replicate={plan.runner.only_replicate} is a one-replicate debugging run, but "
                          f"hydra.run.dir={str(directory.path)!r} holds a full run whose tables it would replace. "
                          "Add hydra.run.dir=runs/debug (any new directory).")


def _write_config(path: Path, config: dict[str, Any], overrides: list[str]) -> None:
    import yaml

    (path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    if overrides:
        (path / "overrides.yaml").write_text(yaml.safe_dump(list(overrides)))


_LOG_HANDLER: logging.Handler | None = None


def _attach_log(path: Path) -> None:
    """Everything logged during the run also goes to ``RUN_DIR/cli.log`` (all levels, all loggers)."""
    global _LOG_HANDLER
    handler = logging.FileHandler(path / "cli.log")
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    for early in [h for h in root.handlers if getattr(h, "early_records", None) is not None]:
        for record in early.early_records:  # logged before the directory was claimed (the CLI keeps them)
            handler.handle(record)
        root.removeHandler(early)
    root.addHandler(handler)
    _LOG_HANDLER = handler


def _detach_log() -> None:
    global _LOG_HANDLER
    if _LOG_HANDLER is not None:
        logging.getLogger().removeHandler(_LOG_HANDLER)
        _LOG_HANDLER.close()
        _LOG_HANDLER = None


def _note_cold_start() -> bool:
    """Log that numba kernels are being compiled when no compiled cache exists yet."""
    import os

    package = Path(__file__).resolve().parent
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    roots = [package] + ([Path(cache_dir)] if cache_dir else [])
    if any(any(root.rglob("*.nbi")) for root in roots if root.exists()):
        return False
    log.info("first run on this installation: compiling simstudy's numba kernels "
             "(about 10-30 s once; later runs load them from the cache)")
    return True


def _log_end(result: StudyResult, manifests: dict[str, dict]) -> None:
    warnings = {k: v for m in manifests.values() for k, v in (m.get("warnings") or {}).items()}
    if warnings:
        log.info("warnings raised in workers (counted, not printed): %s", warnings)
    failures = _failures(result.records)
    if len(failures):
        log.warning("%d replicate(s) failed; first: replicate %s: %s", len(failures),
                    failures.iloc[0].get("replicate"), failures.iloc[0]["error"])
    where = f"; results in {result.run_dir.resolve()}" if result.run_dir is not None else ""
    log.info("done in %.1f s%s", result.manifest["wall_time_s"], where)


# ----------------------------------------------------------------------------- the public call
def run_study(study: Any, *, population: Any = None, learner: Any = None, runner: Any = None,
              out: str | Path | None = None, n_jobs: int | None = None, chunk_size: int | None = None,
              progress: bool | None = None, backend: str | None = None, overwrite: bool | None = None,
              **params: Any) -> StudyResult:
    """Run a study and return its results (in memory, and in ``out`` when given).

    Parameters
    ----------
    study : str, Study subclass, Study instance or import path
        ``"cv_variance"``, ``"cv_clt"``, ``"nedelko_fisher"``, ``"nedelko_histogram"``, a
        registered name of your own, or your Study class.
    population : str, mapping or population object, optional
        A preset name (``"letter"``, ``"logistic"``, ...), a config mapping (``{"kind":
        "tabular", "path": ..., "positive": [...]}``), or an object with ``name``,
        ``sample(n, rng)`` and ``seed_params()``. Studies that define their own population
        (Nedelko's) take none.
    learner : str, scikit-learn estimator, mapping or learner object, optional
        A preset name (``"tree"``, ``"knn"``, ...), an estimator instance
        (``DecisionTreeClassifier(max_depth=3)``), a config mapping, or an object implementing
        :class:`simstudy.learners.base.Learner`.
    runner : mapping or RunnerConfig, optional
        Runner settings (``n_jobs``, ``chunk_size``, ``backend``, ``progress``, ``on_error``,
        ``max_failure_rate``, ``scheduler_address``, ``only_replicate``, ``overwrite``); the
        keyword arguments ``n_jobs``, ``chunk_size``, ``progress``, ``backend`` and
        ``overwrite`` override them.
    out : path-like, optional
        Write the run directory there (records, tables, figures, manifest; resumable). By
        default nothing is written.
    **params
        The study's settings (its config fields), e.g. ``sizes=[20, 80]``, ``replicates=2000``,
        ``K=10``, ``seed=7``, ``loss="squared"``.

    Returns
    -------
    StudyResult
        ``.records``, ``.summary``, ``.tests`` (DataFrames), ``.tables``, ``.figures()``,
        ``.headline()``, ``.manifest``, ``.run_dir``.

    Raises
    ------
    simstudy.errors.UserError
        (ConfigError, DataUnavailableError, RunDirectoryError, ...) before any work, with the
        field, the value and the fix.

    Examples
    --------
    >>> import simstudy
    >>> res = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[20],
    ...                          replicates=50, n_jobs=1, progress=False)
    >>> list(res.summary["n"])
    [20]
    """
    options = make_runner(runner, n_jobs=n_jobs, chunk_size=chunk_size, progress=progress, backend=backend,
                          overwrite=overwrite)
    plan = prepare(study, population, learner, options, **params)
    return execute(plan, out, study=None)
