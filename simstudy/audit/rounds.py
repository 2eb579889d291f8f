"""The sequential audit's rounds: each setting's rho_hat run is extended look by look while the recommendation
is open.

Each setting (the user's n with replacement, n/2 without) has its own run directory. At look j
the rho_hat study is run there with ``replicates = n_j``: the engine computes only the replicates
the directory lacks, and the records equal those of a fixed run of n_j replicates with the same
seed (:mod:`simstudy.engine.rundir`). After each setting's look every open procedure advances through
the rule (:class:`~simstudy.audit.sequential.SequentialState`; nested CV, which runs on the first
``nested_cv_replicates`` replicates only, through its own design with that cap), and the two
settings are coupled: a procedure liberal in one setting is liberal overall, so the other
setting no longer needs it; one that can no longer be trusted in one setting cannot be trusted
overall, so its trust question closes in the other.

When to stop. The audit's answer is the most powerful procedure trusted in both settings, so a
setting is extended while a procedure that could still become that answer is unsettled there:
its trust question is open and its power at n (the latest estimate) exceeds that of every
procedure already trusted in both settings (:func:`still_needed`). Liberal verdicts are given at
the looks the audit makes anyway; a procedure left open when the audit stops is undecided ("not
needed"). Every setting runs the first look; within a look the settings run in the order given
(the cheaper first, so that what it settles can spare the other's replicates).

Nested CV, by far the dearest procedure per replicate, stops early too: once it no longer holds a
setting's run (settled, its trust question closed, or less powerful than a procedure trusted in
both settings) after that setting has run k replicates, its question there is closed ("not
needed") and the setting's later replicates skip it. ``nested_cv_replicates`` is lowered to k,
which changes no record already written (:func:`simstudy.studies.settings.prefix`): each
setting's records stay those of a fixed run with nested CV on its first k replicates.

Every way a question closes early (curtailment, coupling, stopping) only removes verdicts: the
procedure is declared trusted (liberal) only where the design alone would have declared it, so
each setting's errors stay within the design's exact bounds (:mod:`simstudy.audit.sequential`).
"""
from __future__ import annotations

import logging
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from simstudy.audit.recommend import REFERENCE
from simstudy.audit.sequential import SequentialDesign, SequentialState
from simstudy.studies.base import StudyTables
from simstudy.studies.rho_hat.config import RhoHatConfig
from simstudy.studies.rho_hat.study import RhoHatStudy
from simstudy.studies.settings import prefix

__all__ = ["AuditRhoHatStudy", "SequentialRun", "couple", "look_chunk_size", "observe", "run_rounds",
           "still_needed"]

log = logging.getLogger("simstudy")

#: The procedure that runs on the first ``nested_cv_replicates`` replicates only.
NESTED = "nested_cv"


@dataclass
class AuditRhoHatConfig(RhoHatConfig):
    """The rho_hat settings of an audit's look: ``nested_cv_replicates`` is a prefix (not part of the run's
    identity), so that the rounds can stop nested CV in a setting once it is no longer needed."""

    nested_cv_replicates: int = prefix(100)


class AuditRhoHatStudy(RhoHatStudy):
    """The rho_hat study as the audit runs it at each look: the same records, summary and tests; none of the
    study's own figures, goal table, Markdown tables or headline (the audit reads the summary and tests of a
    scratch run directory and writes its own report, and each look would otherwise write them again)."""

    Config = AuditRhoHatConfig

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        return self.summary_and_tests(records)

    def figures(self, tables) -> dict[str, Any]:
        return {}

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        return []

    def headline(self, tables: StudyTables) -> str:
        return f"rho_hat ({self._label(tables)}): an audit's look"


@dataclass
class SequentialRun:
    """What the rounds produced.

    Attributes
    ----------
    results : dict of StudyResult
        Each setting's run at its last look.
    states : dict of dict of SequentialState
        Per setting, per procedure (the reference excluded).
    designs : dict of SequentialDesign
        "main" and, when nested CV runs, "nested_cv".
    nested_cv_replicates : dict of int
        Per setting, the leading replicates that ran nested CV (the module docstring: at most the
        ``nested_cv_replicates`` asked for).
    """

    results: dict[str, Any]
    states: dict[str, dict[str, SequentialState]]
    designs: dict[str, SequentialDesign]
    nested_cv_replicates: dict[str, int] = field(default_factory=dict)


def _design(procedure: str, designs: dict[str, SequentialDesign]) -> SequentialDesign:
    return designs[NESTED] if procedure == NESTED and NESTED in designs else designs["main"]


def observe(states: dict[str, SequentialState], tests: pd.DataFrame, replicates: int,
            designs: dict[str, SequentialDesign]) -> dict[str, SequentialState]:
    """Advance every open procedure whose next look is reached with ``replicates`` replicates run.

    A procedure's count at its look n is the tests table's ``size_count``; replicates without a
    result (failed, or a procedure missing from the table) are passed as ``failed``.
    """
    rows = tests.set_index("procedure")
    out = dict(states)
    names = [p for p in rows.index if p != REFERENCE] if not states else list(states)
    for name in names:
        state = out.get(name, SequentialState())
        d = _design(name, designs)
        if state.settled or state.look >= len(d.looks) or replicates < d.looks[state.look]:
            out[name] = state
            continue
        look = d.looks[state.look]
        count = int(rows.loc[name, "size_count"]) if name in rows.index else 0
        valid = int(rows.loc[name, "replicates"]) if name in rows.index else 0
        out[name] = state.advance(d, count, failed=max(look - valid, 0))
    return out


def couple(states: dict[str, dict[str, SequentialState]]) -> dict[str, dict[str, SequentialState]]:
    """Close the questions that the other setting has made moot (module docstring)."""
    out = {k: dict(v) for k, v in states.items()}
    first, second = list(out)
    for name in sorted(set(out[first]) & set(out[second])):
        for here, there in ((first, second), (second, first)):
            other = out[there][name]
            if other.verdict == "liberal":
                out[here][name] = out[here][name].close(f"liberal at {there}")
            elif not other.trust_open and other.verdict != "trusted":
                out[here][name] = out[here][name].close_trust(f"not trusted at {there}")
    return out


def still_needed(states: dict[str, dict[str, SequentialState]], power: pd.Series) -> dict[str, list[str]]:
    """Per setting, the procedures that hold its run: unsettled, trust question open, and more powerful at n
    (``power``, the latest estimate) than every procedure already trusted in both settings."""
    trusted = [p for p in power.index if all(p in v and v[p].verdict == "trusted" for v in states.values())]
    best = max((float(power[p]) for p in trusted), default=-math.inf)
    return {setting: sorted(p for p, s in v.items()
                            if not s.settled and s.trust_open and not float(power.get(p, math.inf)) <= best)
            for setting, v in states.items()}


class _RunChatter(logging.Filter):
    """Drops each look's own lines about its run directory (a temporary folder), keeps everything else."""

    PREFIXES = ("done in ", "%s: resuming", "%s: %d chunk(s) to compute")

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno <= logging.INFO and str(record.msg).startswith(self.PREFIXES))


@contextmanager
def _quiet_runs() -> Iterator[None]:
    """The rounds log one line per look instead of each run's own lines."""
    logger, chatter = logging.getLogger("simstudy"), _RunChatter()  # every run's line is logged here
    logger.addFilter(chatter)   # a logger's filters see only its own records, not its children's
    try:
        yield
    finally:
        logger.removeFilter(chatter)


def look_chunk_size(replicates: int, n_jobs: int) -> int:
    """Chunk size of a look's ``replicates`` new replicates: two chunks per worker (at least 5 replicates each).

    Every look reads back every shard of its setting's run directory, so the shards are kept few; two per worker
    still let a worker that drew the slower replicates be helped at the end of the look."""
    from simstudy.engine.backends import worker_count

    return max(5, -(-replicates // (2 * worker_count(n_jobs, replicates))))


def run_rounds(settings: dict[str, tuple[Any, int]], params: dict[str, Any], designs: dict[str, SequentialDesign],
               folder: Path, power_setting: str = "n") -> SequentialRun:
    """Run the settings look by look until the recommendation is settled (module docstring).

    Parameters
    ----------
    settings : dict
        Setting name -> (population, training-set size n); exactly two settings, run in this order
        within each look.
    params : dict
        Everything else :func:`simstudy.run_study` takes for the rho_hat study (learner, K, seed, splits,
        nested_cv_replicates, loss, alpha, n_jobs, progress); ``replicates`` and ``chunk_size`` are set per look.
    designs : dict of SequentialDesign
    folder : Path
        Where the settings' run directories go (one sub-folder each).
    power_setting : str
        The setting whose power ranks the procedures (the recommendation's).
    """
    from simstudy.engine.run import run_study

    results: dict[str, Any] = {}
    states: dict[str, dict[str, SequentialState]] = {name: {} for name in settings}
    needed = {name: ["(first look)"] for name in settings}
    nested = {name: int(params.get("nested_cv_replicates", 0)) for name in settings}
    ran = {name: 0 for name in settings}
    previous = 0
    for j, n in enumerate(designs["main"].looks):
        for number, (name, (population, size)) in enumerate(settings.items()):
            if not needed[name]:
                continue
            with _quiet_runs():
                results[name] = run_study(AuditRhoHatStudy, population=population, sizes=[size], replicates=n,
                                          chunk_size=look_chunk_size(n - previous, params.get("n_jobs", -1)),
                                          out=folder / f"setting_{number}",
                                          **{**params, "nested_cv_replicates": nested[name]})
            ran[name] = n
            states[name] = observe(states[name], results[name].tests, n, designs)
            states = couple(states)
            if power_setting in results:
                power = results[power_setting].tests.set_index("procedure")["power"]
                needed = {**needed, **still_needed(states, power)}
        states, nested = _stop_nested(states, needed, nested, ran)
        previous = n
        log.info("audit look %d (%d replicates): still needed %s", j + 1, n,
                 "; ".join(f"{k}: {', '.join(v) or 'none'}" for k, v in needed.items()))
        if not any(needed.values()):
            break
    states = {name: {p: s.close("not needed") for p, s in v.items()} for name, v in states.items()}
    return SequentialRun(results, states, designs, {name: min(nested[name], ran[name]) for name in settings})


def _stop_nested(states: dict[str, dict[str, SequentialState]], needed: dict[str, list[str]],
                 nested: dict[str, int], ran: dict[str, int]):
    """Close nested CV's question in each setting whose run it no longer holds, and lower that setting's
    ``nested_cv_replicates`` to the replicates it has run (module docstring). Returns (states, nested)."""
    states, nested = {k: dict(v) for k, v in states.items()}, dict(nested)
    for name, mine in states.items():
        if NESTED in mine and NESTED not in needed[name] and ran[name] < nested[name]:
            mine[NESTED] = mine[NESTED].close("not needed")
            nested[name] = ran[name]
    return states, nested
