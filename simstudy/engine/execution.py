"""Running a checked plan: :func:`execute` claims the run directory (lock, identity, resume or
extension; only with ``out``), runs every phase of the study through :func:`run_chunks` (chunks,
shards, failure policy), aggregates, and writes records, tables, figures and the manifest.

Order of work (nothing is computed, and no worker started, before the input is known to be
good): :func:`simstudy.engine.plan.prepare` checks the request without data,
:func:`simstudy.engine.plan.build` builds the parts, then :func:`execute` runs them. The engine
knows nothing about any particular study: its columns, tables and figures come from the study's
parts (:mod:`simstudy.studies.base`).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from simstudy.engine.admission import RunIdentity
from simstudy.engine.backends.prewarm import start_prewarm, wait_for_prewarm
from simstudy.engine.backends.signals import stop_on_signals
from simstudy.engine.backends.workers import kill_workers, user_modules
from simstudy.engine.budget import check_budget
from simstudy.engine.chunks import ChunkOutput, RunReport
from simstudy.engine.identity import resolved_config, run_identity
from simstudy.engine.manifest import environment_info
from simstudy.engine.plan import RunnerOptions, RunPlan, build
from simstudy.engine.records import order_records, timing_by_condition
from simstudy.engine.result import StudyResult
from simstudy.engine.rounds import RoundStore, run_to_targets
from simstudy.engine.rundir import PYTHON, RunDirectory, write_config
from simstudy.engine.runlog import attach_log, detach_log, note_cold_start
from simstudy.engine.runner import run_chunks
from simstudy.engine.shards import ShardStore
from simstudy.engine.stored import ShardPart, StoredRecords
from simstudy.errors import ConfigError, UserError
from simstudy.studies.base import Phase, Study
from simstudy.studies.settings import targets_of
from simstudy.studies.targets import Z95, aggregate_tables, has_targets

__all__ = ["execute", "run_phase"]

log = logging.getLogger("simstudy")

#: At most this many failed records of earlier runs are listed in a manifest (all stay in the shards).
_HISTORY_SHOWN = 100


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
              while_computing: Callable[[], Any] | None = None, lazy: bool = False) -> RunReport:
    """Run one phase of a study through :func:`simstudy.engine.runner.run_chunks` (``while_computing``,
    ``lazy``: see there)."""
    return run_chunks(phase.worker, list(phase.replicates), options, store=store, phase=phase.name,
                      desc=phase.description or phase.name, keys=[c.key for c in phase.conditions],
                      subjects=phase.subjects, chunk_cost=_chunk_cost(phase),
                      describe_failure=_failure_hint(phase, options), while_computing=while_computing,
                      check_records=True, lazy=lazy)


def _chunk_cost(phase: Phase) -> Callable[[Any], float] | None:
    """Replicates x sample size, when every condition has a sample size ``n`` (the cost of a CV
    replicate grows with n): the runner then starts the costliest chunks first. None otherwise."""
    sizes = [getattr(c, "n", None) for c in phase.conditions]
    if not sizes or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in sizes):
        return None
    return lambda chunk: chunk.size * int(sizes[chunk.condition])


def _run_rounds(study: Study, phase: Phase, runner: RunnerOptions, store: ShardStore | None, prewarm,
                records: dict[str, pd.DataFrame]) -> tuple[Phase, RunReport, pd.DataFrame, list[dict]]:
    """The main phase run in rounds to the study's targets (:mod:`simstudy.engine.rounds`): the
    finished chunks are kept in memory between the rounds (:class:`~simstudy.engine.rounds.RoundStore`),
    so a later round reads nothing back and computes only its new replicates."""
    kept = RoundStore(store, [int(r) for r in phase.replicates])
    first = [prewarm]

    def run_round(current: Phase, options: RunnerOptions) -> tuple[RunReport, pd.DataFrame]:
        report = run_phase(current, options, kept, while_computing=first.pop() if first else None)
        kept.keep(report)
        return report, _ordered_records(report, current)

    final, report, main, rounds = run_to_targets(study, phase, runner, run_round, records)
    if store is None:
        report.shards = []
    return final, report, main, rounds


def _targets_manifest(study: Study, tables, rounds: list[dict]) -> dict[str, Any]:
    """The rule, the counts and achieved 95% half-widths per condition, and the rounds."""
    c = study.config
    frame = tables.extra["targets"]
    return {"rule": {"targets": dict(targets_of(c)), "half_width": f"{Z95:.2f} Monte Carlo SE (means, ratios) or "
                                                               "half the 95% Wilson interval (rates)",
                     "cap": int(c.replicates), "min_replicates": int(c.min_replicates)},
            "all_met": bool(frame["met"].all()) if len(frame) else False,
            "capped": frame[frame["capped"]].drop(columns=["met", "capped"]).to_dict("records"),
            "conditions": frame.to_dict("records"), "rounds": rounds}


def _ordered_records(report: RunReport, phase: Phase) -> pd.DataFrame | StoredRecords:
    """The phase's records in (condition, replicate, subject) order, whatever chunks made them
    (a :class:`StoredRecords` when the report's chunks are on disk: ``run_phase(lazy=True)``)."""
    if report.outputs and all(isinstance(o.records, ShardPart) for o in report.outputs):
        return StoredRecords([(o.chunk.condition, o.records) for o in report.outputs])
    return order_records(report.records, [c.key for c in phase.conditions], phase.subjects)


def _phase_manifest(phase: Phase, report: RunReport, records: pd.DataFrame) -> dict[str, Any]:
    timing = timing_by_condition(report.outputs)
    failed: dict[str, int] = {}
    bad = _failures(records)
    if {"error", "condition_key", "replicate"} <= set(bad.columns):
        failed = bad.groupby("condition_key")["replicate"].nunique().to_dict()
    conditions = [{"condition": c.label(), "condition_key": c.key, "replicates": int(R),
                   "failed": int(failed.get(c.key, 0)), **timing.get(i, {})}
                  for i, (c, R) in enumerate(zip(phase.conditions, phase.replicates))]
    return {"subjects_order": list(phase.subjects), "shards": report.shards, "resumed_chunks": report.resumed_chunks,
            "computed_chunks": report.computed_chunks, "chunk_errors": report.chunk_errors,
            "warnings": report.warnings, "backend": report.backend, "conditions": conditions,
            "failure_history": report.failure_history[:_HISTORY_SHOWN],
            "failures_retried": len(report.failure_history)}


def _failures(records: pd.DataFrame | StoredRecords) -> pd.DataFrame:
    """The records that carry an ``error``."""
    if isinstance(records, StoredRecords):
        return records.failures()
    if "error" not in records:
        return records.iloc[:0]
    return records[records["error"].fillna("") != ""]


def _manifest(study: Study, plan: RunPlan, identity: RunIdentity, phases: dict[str, dict],
              records: dict[str, pd.DataFrame], started: str, wall: float, environment: dict[str, Any],
              config: dict[str, Any]) -> dict[str, Any]:
    failures = _failures(records[study.main_phase])
    scalar = [c for c in failures.columns if failures[c].map(np.isscalar).all()] if len(failures) else []
    main = phases.get(study.main_phase, {})
    return {
        "study": study.name, "started_utc": started,
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wall_time_s": wall,
        "identity_hash": identity.hash, "subjects": identity.subjects, "seed": getattr(study.config, "seed", None),
        "command": plan.runner.command, "overrides": list(plan.overrides),
        "runner": {k: v for k, v in dataclasses.asdict(plan.runner).items() if k != "command"},
        **{k: main.get(k) for k in ("subjects_order", "shards", "resumed_chunks", "computed_chunks", "chunk_errors",
                                    "warnings", "backend", "conditions", "failure_history", "failures_retried")},
        "phases": {name: m for name, m in phases.items() if name != study.main_phase},
        **study.manifest(records),
        "replicates_total": int(len(records[study.main_phase])), "replicates_failed": int(len(failures)),
        "record_labels": study.record_labels(), "config": config,
        "failures_sample": failures[scalar].head(20).to_dict("records"),
        "environment": environment,
        # the data the records were computed on (the run directory's record of them: RunDirectory)
        **({"data_fingerprints": identity.data} if identity.data else {}),
    }


def execute(plan: RunPlan, out: str | Path | RunDirectory | None = None, study: Study | None = None,
            release_workers: bool | None = None) -> StudyResult:
    """Build (unless ``study`` is given), run every phase, aggregate; write files when ``out`` is set.

    ``release_workers``: ``True``: stop the worker processes once the chunks are done (also when
    the run fails; the command line's single run): the process then runs one thread again and may
    fork to draw its figures in parallel
    (:func:`simstudy.engine.backends.figures.start_saving_figures`). ``False``: keep them for the
    next run (the command line's sweep, whose jobs run no user code in between). ``None`` (the
    Python API): a run whose parts reference a module of the user's starts fresh workers and
    stops them at its end; other runs keep them
    (:func:`~simstudy.engine.backends.workers.user_modules`: a kept worker would run the user's
    module as it was when the worker started, e.g. a global changed between two runs).
    SIGTERM and SIGHUP stop the run as Ctrl-C does
    (:func:`~simstudy.engine.backends.signals.stop_on_signals`); on any interruption the workers
    are killed and the run directory's lock released, and the run resumes from its finished chunks.

    The run directory is locked before any data is loaded (a busy or foreign directory is
    refused at once) and claimed for the run's identity once the parts are built. ``out`` may be
    a :class:`RunDirectory` the caller has locked already (the command line does, before it
    starts its workers).
    """
    with stop_on_signals():
        try:
            return _execute(plan, out, study, release_workers)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP: no worker outlives the run
            kill_workers()
            raise


def _execute(plan: RunPlan, out: str | Path | RunDirectory | None, study: Study | None,
             release_workers: bool | None) -> StudyResult:
    t_start = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    # a RunDirectory comes from a command that names its own flags; a path from Python (out=, overwrite=True)
    directory = None if out is None else (out if isinstance(out, RunDirectory) else RunDirectory(out, PYTHON)).lock()
    # the git state before the run writes anything (its own files, e.g. a committed cli.log, do not count)
    environment = environment_info(directory.path if directory is not None else None)
    try:
        study = study if study is not None else build(plan)
        check_budget(plan.config, plan.runner, _features(study.population), announce=True,
                     fits_per_replicate=study.fits_per_replicate())
        phases = _checked_phases(study, study.phases(plan.runner.on_error))
        if release_workers is None:
            release_workers = bool(user_modules(*(phase.worker for phase in phases)))
        if release_workers:
            kill_workers()  # workers kept from an earlier run never compute this one
        _check_only_replicate(plan, phases)
        identity = run_identity(study)
        config = resolved_config(study, plan)
        if directory is not None:
            identity = directory.claim(identity, plan.runner.overwrite).identity
            _check_debug_run(plan, directory)
    except BaseException:
        if directory is not None:
            directory.abandon()  # a refused run leaves the directory as it found it
        raise
    try:
        if directory is not None:
            write_config(directory.path, config, plan.overrides)
            attach_log(directory.path)
        note_cold_start()
        records, manifests, rounds = _run_phases(study, phases, plan, directory, identity)
        if release_workers:
            kill_workers()
        main = records[study.main_phase]
        labels = study.record_labels()
        if isinstance(main, StoredRecords):
            main.labels = dict(labels)
        else:
            for i, (name, value) in enumerate(labels.items()):
                main.insert(i, name, value)
        tables = aggregate_tables(study, records)
        wall = time.perf_counter() - t_start
        manifest = _manifest(study, plan, identity, manifests, records, started, wall, environment, config)
        if has_targets(study.config):
            manifest["targets"] = _targets_manifest(study, tables, rounds)
        result = StudyResult(study, config, records, tables, manifest, directory.path if directory else None)
        if directory is not None:
            result.write(directory.path)
        _log_end(result, manifests)
        return result
    finally:
        if release_workers:
            kill_workers()
        wait_for_prewarm()  # never leave a thread importing matplotlib behind (an error or Ctrl-C ends the run)
        if directory is not None:
            detach_log()
            directory.release()


def _run_phases(study: Study, phases: list[Phase], plan: RunPlan, directory: RunDirectory | None,
                identity: RunIdentity) -> tuple[dict[str, pd.DataFrame], dict[str, dict], list[dict]]:
    """Every phase through the runner (the main one in rounds when the study has targets): the
    records and manifest entries by phase, and the rounds (empty without targets)."""
    records: dict[str, pd.DataFrame] = {}
    manifests: dict[str, dict] = {}
    rounds: list[dict] = []
    for phase in phases:
        store = None
        if directory is not None and plan.runner.only_replicate is None:
            store = ShardStore(directory.path / "shards", identity.hash)
        # while the workers compute, the aggregation's and the report's libraries load here
        prewarm = partial(start_prewarm, study.aggregation_imports) if directory is not None else None
        if phase.name == study.main_phase and has_targets(study.config) and plan.runner.only_replicate is None:
            phase, report, records[phase.name], rounds = _run_rounds(study, phase, plan.runner, store, prewarm, records)
        else:
            lazy = phase.name == study.main_phase and study.streams_records and not phase.subjects
            report = run_phase(phase, plan.runner, store, while_computing=prewarm, lazy=lazy)
            records[phase.name] = _ordered_records(report, phase)
        manifests[phase.name] = _phase_manifest(phase, report, records[phase.name])
    return records, manifests, rounds


def _features(population: Any) -> int:
    """The number of features a population declares in its description (1 when it gives none)."""
    try:
        features = population.describe().get("features", 1) if population is not None else 1
    except Exception:  # noqa: BLE001 - a user's population need not describe itself
        return 1
    return features if isinstance(features, int) and features > 0 else 1


def _checked_phases(study: Study, phases: Any) -> list[Phase]:
    """A study's phases, refused unless they are Phase objects including the study's main phase."""
    phases = list(phases) if isinstance(phases, (list, tuple)) else phases
    names = [getattr(p, "name", None) for p in phases] if isinstance(phases, list) else []
    if not isinstance(phases, list) or not all(isinstance(p, Phase) for p in phases) or study.main_phase not in names:
        raise UserError(f"study {study.name!r}: phases() returned {phases!r}; a study returns a list of "
                        f"simstudy.Phase objects, one of them named {study.main_phase!r} (its main_phase).")
    return phases


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
                          f"{directory.where} holds a full run whose tables it would replace. "
                          f"Use {directory.names.directory}=runs/debug (any new directory).")


def _log_end(result: StudyResult, manifests: dict[str, dict]) -> None:
    warnings = {k: v for m in manifests.values() for k, v in (m.get("warnings") or {}).items()}
    if warnings:
        log.info("warnings raised in workers (counted, not printed): %s", warnings)
    failures = _failures(result.phase_records[result.study.main_phase])
    if len(failures):
        log.warning("%d replicate(s) failed; first: replicate %s: %s", len(failures),
                    failures.iloc[0].get("replicate"), failures.iloc[0]["error"])
    where = f"; results in {result.run_dir.resolve()}" if result.run_dir is not None else ""
    log.info("done in %.1f s%s", result.manifest["wall_time_s"], where)
