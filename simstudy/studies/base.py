"""What every study module provides to the run engine, and the helpers they share."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from simstudy.config import RunnerConfig
from simstudy.records import read_records, timing_by_condition
from simstudy.rng import condition_key
from simstudy.runner import ChunkOutput, RunReport, ShardStore, run_chunks

__all__ = ["RunnerOptions", "SizeCondition", "StudyOutput", "run_phase", "phase_manifest", "first_failure",
           "size_conditions", "size_conditions_manifest", "load_records", "write_tables"]


@dataclass
class RunnerOptions(RunnerConfig):
    """The ``runner`` config node as plain values, plus the command that started the run."""

    #: The command line that started the run (used in "how to reproduce" hints).
    command: str = "simstudy"


@dataclass(frozen=True)
class SizeCondition:
    """One cell of a K-fold study design: training-set size n, K folds, and the hash that seeds it."""

    n: int
    K: int
    key: str

    @property
    def m(self) -> int:
        """Examples per fold, n / K."""
        return self.n // self.K


def size_conditions(study: str, sizes: Sequence[int], K: int, population) -> list[SizeCondition]:
    """Conditions in the order of ``sizes``; each key hashes (study, n, K, population).

    The learner is deliberately not part of the key: learners run on the same condition see
    the same training sets and fold assignments (common random numbers), and a condition's
    seed does not depend on its position in a sweep.
    """
    return [SizeCondition(int(n), int(K), condition_key({"study": study, "n": int(n), "K": int(K),
                                                         "population": population.seed_params()}))
            for n in sizes]


@dataclass
class StudyOutput:
    """What a study's ``execute`` returns: its tables, figures and manifest entries."""

    summary: pd.DataFrame
    tests: pd.DataFrame | None
    records: pd.DataFrame
    figures: list[Path] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


def first_failure(out: ChunkOutput) -> dict[str, Any] | None:
    """The first failed replicate of a chunk output: its row as a dict, or the chunk error."""
    if out.error:
        return {"replicate": out.chunk.start, "error": out.error}
    if isinstance(out.records, pd.DataFrame) and "error" in out.records:
        bad = out.records[out.records["error"].fillna("") != ""]
        if len(bad):
            return bad.iloc[0].to_dict()
    return None


def run_phase(worker: Callable, replicates_per_condition: Sequence[int], run_dir: Path, options: RunnerOptions,
              *, phase: str, desc: str, reproduce: Callable[[int, dict[str, Any]], str] | None = None) -> RunReport:
    """Run one phase of a study through :func:`simstudy.runner.run_chunks` with shards in
    ``run_dir/shards/<phase>`` (resumable) and the run's failure policy.

    ``reproduce(condition_index, failure_row)`` returns the overrides that select the failing
    condition; they are appended to the "how to reproduce" hint of an abort.
    """
    def describe(out: ChunkOutput) -> str:
        row = first_failure(out) or {}
        selection = reproduce(out.chunk.condition, row) if reproduce else ""
        replicate = int(row.get("replicate", out.chunk.start))
        return (f"First failure in chunk {out.chunk.name}, replicate {replicate}: {row.get('error', '')}. "
                f"Reproduce it alone with: {options.command} {selection} runner.only_replicate={replicate} "
                "runner.on_error=raise hydra.run.dir=runs/debug").replace("  ", " ")

    replicate_range = None
    if options.only_replicate is not None:
        replicate_range = (int(options.only_replicate), int(options.only_replicate) + 1)
    return run_chunks(worker, replicates_per_condition, chunk_size=options.chunk_size, n_jobs=options.n_jobs,
                      backend=options.backend, progress=options.progress, desc=desc,
                      store=ShardStore(Path(run_dir) / "shards"), phase=phase, on_error=options.on_error,
                      max_failure_rate=options.max_failure_rate, replicate_range=replicate_range,
                      scheduler_address=options.scheduler_address, describe_failure=describe)


def phase_manifest(report: RunReport) -> dict[str, Any]:
    """Manifest entries of a phase: shards with checksums, resume counts, chunk errors, warnings."""
    return {"shards": report.shards, "resumed_chunks": report.resumed_chunks,
            "computed_chunks": report.computed_chunks, "chunk_errors": report.chunk_errors,
            "warnings": report.warnings}


def write_tables(run_dir: Path, summary: pd.DataFrame, tests: pd.DataFrame | None, **leading) -> None:
    """Insert the ``leading`` columns (e.g. population, learner) first, in the order given, and
    write ``summary.csv`` and (when given) ``tests.csv`` into ``run_dir``."""
    for frame in (summary, tests):
        if frame is None:
            continue
        for i, (name, value) in enumerate(leading.items()):
            frame.insert(i, name, value)
    summary.to_csv(Path(run_dir) / "summary.csv", index=False)
    if tests is not None:
        tests.to_csv(Path(run_dir) / "tests.csv", index=False)


def size_conditions_manifest(conditions: Sequence[SizeCondition], replicates: int, records: pd.DataFrame,
                             report: RunReport) -> list[dict[str, Any]]:
    """Manifest entry per condition: n, K, key, replicates, failed replicates, worker wall/CPU."""
    timing = timing_by_condition(report.outputs)
    failed = records[records["error"] != ""]
    return [{"n": c.n, "K": c.K, "condition_key": c.key, "replicates": int(replicates),
             "failed": int(failed.loc[failed["n"] == c.n, "replicate"].nunique()), **timing.get(i, {})}
            for i, c in enumerate(conditions)]


def load_records(run_dir: Path, records: pd.DataFrame | None = None) -> pd.DataFrame:
    """``records`` when given, else the run's ``replicates.parquet``."""
    return records if records is not None else read_records(Path(run_dir) / "replicates.parquet")
