"""What a study is: the parts it gives the engine, and the helpers studies share.

A study (SimDesign's generate / analyse / summarise, simChef's DGP / Method / Evaluator) is a
subclass of :class:`Study` that supplies

- ``Config``: a dataclass of its settings (a subclass of :class:`StudyConfig`) whose
  :meth:`~StudyConfig.validate` names the bad field, its value and the fix;
- :meth:`Study.check`: checks that need the built parts (the population, the learner);
- :meth:`Study.phases`: the conditions of its design and a picklable worker that turns a chunk
  of replicates of one condition into records (one row per replicate, or per replicate and
  subject);
- :meth:`Study.aggregate`: records -> tables; :meth:`Study.figures`,
  :meth:`Study.write_tables` and :meth:`Study.headline`: what a reader sees.

The engine (:mod:`simstudy.engine.execution`) owns everything else: validation order, seeds, chunks,
parallelism, failures, shards and resume, files and the manifest.

Every config field has a role, which decides whether a changed value may reuse a run
directory's shards: ``record`` fields change the numbers of a replicate (seed, K, the learner):
a changed one is a different study and is refused; ``extent`` fields only say how many
conditions / replicates there are (sizes, replicates): a larger value extends the run;
``report`` fields only change the aggregation (alpha): the records are reused as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Protocol, Sequence

import numpy as np
import pandas as pd

from simstudy.errors import ConfigError, ReplicateFailed
from simstudy.rng import condition_key
from simstudy.studies.settings import (StudyConfig, as_list, extent, fail, location, report, validate_level,
                                      validate_sizes)

__all__ = ["StudyConfig", "Study", "Phase", "describe_part", "Condition", "SizeCondition", "StudyTables", "extent", "report",
           "location",
           "record_labels", "with_labels",
           "size_conditions", "map_replicates", "replicate_records", "check_learner_task", "fail", "validate_sizes", "validate_level", "as_list"]


class Condition(Protocol):
    """One cell of a study's design."""

    #: Hash of the condition's parameters; it seeds the condition's random streams.
    key: str

    def label(self) -> str:
        """Short text for messages, e.g. ``n=20, K=10``."""

    def selection(self) -> str:
        """Command-line overrides that select this condition alone (failure hints)."""


@dataclass(frozen=True)
class SizeCondition:
    """One cell of a K-fold study design: training-set size n, K folds, and the hash that seeds it."""

    n: int
    K: int
    key: str

    @property
    def m(self) -> int:
        """Examples per fold when n is a multiple of K (the size of the smaller folds otherwise)."""
        return self.n // self.K

    def label(self) -> str:
        return f"n={self.n}, K={self.K}"

    def columns(self) -> dict[str, int]:
        """The condition's columns in the records."""
        return {"n": self.n, "K": self.K}

    def selection(self) -> str:
        return f"study.sizes=[{self.n}]"


def size_conditions(study: str, sizes: Sequence[int], K: int, population) -> list[SizeCondition]:
    """Conditions in the order of ``sizes``; each key hashes (study, n, K, population).

    The learner is deliberately not part of the key: learners run on the same condition see
    the same training sets and fold assignments (common random numbers), and a condition's
    seed does not depend on its position in a sweep. A population may seed its streams with
    ``stream_params()`` instead of ``seed_params()`` (label noise: runs at every eta share the
    base samples; the run's identity still holds eta).
    """
    params = population.stream_params() if callable(getattr(population, "stream_params", None)) \
        else population.seed_params()
    return [SizeCondition(int(n), int(K), condition_key({"study": study, "n": int(n), "K": int(K),
                                                         "population": params}))
            for n in sizes]


@dataclass
class Phase:
    """One pass of the engine over a design: conditions x replicates, a worker, shards.

    Attributes
    ----------
    name : str
        Shard sub-directory and key of the phase's records.
    conditions : sequence of Condition
    replicates : sequence of int
        Replicates per condition.
    worker : callable
        ``worker(chunk) -> DataFrame``; picklable (sent to worker processes). With
        ``subjects``, ``chunk.subjects`` lists the subjects to compute.
    subjects : tuple of str
        Separately stored parts of a replicate's records (e.g. the learners and comparisons of
        cv_clt): a run extended by a subject computes only that subject. Empty: one part.
    description : str
        Progress-bar label.
    """

    name: str
    conditions: Sequence[Any]
    replicates: Sequence[int]
    worker: Callable[[Any], pd.DataFrame]
    subjects: tuple[str, ...] = ()
    description: str = ""


@dataclass
class StudyTables:
    """What a study's aggregation produces: the summary, the tests (if any), other tables, and
    the labels (population, learner names...) taken from the records."""

    summary: pd.DataFrame
    tests: pd.DataFrame | None = None
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    labels: dict[str, Any] = field(default_factory=dict)


def record_labels(records: pd.DataFrame, names: Sequence[str]) -> dict[str, Any]:
    """The constant label columns ``names`` of a records frame (those present), as a dict."""
    return {name: records[name].iloc[0] for name in names if name in records and len(records)}


def with_labels(frame: pd.DataFrame | None, labels: dict[str, Any]) -> pd.DataFrame | None:
    """``frame`` with the label columns inserted first (in the order given)."""
    if frame is None:
        return None
    for i, (name, value) in enumerate(labels.items()):
        frame.insert(i, name, value)
    return frame


class Study:
    """Base class of studies (see the module docstring). Subclasses set the class attributes
    and override the methods they need."""

    #: Registry name (``study=...``).
    name: ClassVar[str] = ""
    #: One line for ``simstudy --help``.
    description: ClassVar[str] = ""
    #: The config dataclass.
    Config: ClassVar[type[StudyConfig]] = StudyConfig
    #: Which top-level parts the study uses: "population", "learner" (others are not recorded).
    uses: ClassVar[tuple[str, ...]] = ()
    #: Name of the main phase's records (``replicates.parquet``).
    main_phase: ClassVar[str] = "replicates"
    #: Modules the aggregation imports: the command loads them in the background while the workers
    #: compute (:mod:`simstudy.engine.backends.prewarm`). scipy.stats by default; a study whose aggregation
    #: needs only the t and normal distributions (:mod:`simstudy.inference.distributions`) names
    #: scipy.special instead, a much smaller import. A module missing here is imported when used.
    aggregation_imports: ClassVar[tuple[str, ...]] = ("scipy.stats",)
    #: The study's :meth:`aggregate` also takes the main phase's records as a
    #: :class:`~simstudy.engine.stored.StoredRecords` (read a condition and a few columns at a time from
    #: the shards). A run into a directory then never holds every record at once: its memory does not
    #: grow with the replicates. Off by default: ``aggregate`` is given DataFrames.
    streams_records: ClassVar[bool] = False

    def __init__(self, config: StudyConfig, population: Any = None, learner: Any = None, loss: Any = None):
        self.config = config
        self.population = population
        self.learner = learner
        self.loss = loss

    # -- before any work
    @classmethod
    def parts_needed(cls, config: StudyConfig, population: Any) -> tuple[str, ...]:
        """The parts this configuration needs (default :attr:`uses`; e.g. a residual population
        needs no learner)."""
        return cls.uses

    def check(self) -> None:
        """Checks that need the built parts; raise :class:`ConfigError` (or ValueError)."""

    @classmethod
    def target_measures(cls) -> dict[str, Any]:
        """The measures whose Monte Carlo error ``study.targets`` may bound, by name
        (:class:`simstudy.studies.targets.TargetMeasure`); none by default. A study that declares
        some has ``targets`` and ``min_replicates`` config fields."""
        return {}

    def subjects(self) -> dict[str, Any]:
        """Subjects by name with the specification that determines their records (cv_clt:
        learners and comparisons); a run directory refuses a subject whose specification changed."""
        return {}

    def data_fingerprints(self) -> dict[str, str]:
        """Fingerprints of the data sets the study reads beyond its one ``population`` (the benchmark's
        mechanisms), by name; a run directory refuses a name whose data changed (call after
        :meth:`check`). The study's own ``population`` is fingerprinted in the run's identity."""
        return {}

    # -- the work
    def phases(self, on_error: str = "record") -> list[Phase]:
        raise NotImplementedError(f"study {self.name!r} defines no phases")

    def record_labels(self) -> dict[str, Any]:
        """Constant columns put first in the main records (e.g. population and learner names)."""
        return {}

    # -- results
    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        raise NotImplementedError(f"study {self.name!r} defines no aggregation")

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        """The figures by file stem (written to ``figures/<stem>.png``): matplotlib Figures or,
        better, figure makers (functions of no argument returning a Figure, e.g.
        ``functools.partial(plot, tables.summary)``). A run draws makers in the processes that save
        the figures, several at once; :meth:`simstudy.results.StudyResult.figures` draws them all."""
        return {}

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        """Markdown (and other) tables beyond the CSV files the engine writes."""
        return []

    def headline(self, tables: StudyTables) -> str:
        """The key result in a few lines, for the terminal."""
        return ""

    def fits_per_replicate(self) -> float | None:
        """The work of one replicate of one condition in fits of one learner
        (:func:`simstudy.engine.budget.estimate_budget`); None: K + 1 (a K-fold CV and its truth)."""
        return None

    def report_tables(self, tables: StudyTables) -> dict[str, pd.DataFrame]:
        """The tables a reader sees (HTML report, LaTeX export), title -> frame, every number
        with its Monte Carlo error (``±`` 1.96 SE, Wilson intervals with counts). Default: the
        summary as it is."""
        return {"Summary": tables.summary}

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        """Study-specific manifest entries (descriptions of the parts, per-condition details)."""
        return {}

    @classmethod
    def collect_figures(cls, summary: pd.DataFrame, tests: pd.DataFrame | None,
                        parameters: list[str]) -> dict[str, Any]:
        """Figures of a sweep (``simstudy-collect``): the runs' merged tables, one column per
        swept parameter; Figures or figure makers, as :meth:`figures`."""
        return {}


# ----------------------------------------------------------------------------- the failure policy
def describe_part(part: Any) -> dict[str, Any]:
    """A part's ``describe()`` when it has one (optional in the learner and population
    protocols), else its name and class: what manifests and run identities record of it."""
    describe = getattr(part, "describe", None)
    return describe() if callable(describe) else {"name": getattr(part, "name", type(part).__name__),
                                                  "type": f"{type(part).__module__}.{type(part).__qualname__}"}


def map_replicates(compute: Callable[[int], Any], replicates: range, on_error: str, condition: Any,
                   study: str) -> tuple[list[Any], list[str]]:
    """Run ``compute(r)`` for every replicate; the one failure policy of every study.

    A replicate that raises is recorded (its result is None and its error text is kept), never
    dropped, and the others go on; with ``on_error="raise"`` the first failure stops the run
    with :class:`~simstudy.errors.ReplicateFailed` naming the study, condition and replicate.

    Returns
    -------
    results : list
        ``compute(r)`` per replicate (None where it failed).
    errors : list of str
        ``""`` or ``"ExceptionType: message"`` per replicate.
    """
    results: list[Any] = []
    errors: list[str] = []
    for r in replicates:
        try:
            results.append(compute(r))
            errors.append("")
        except Exception as exc:  # recorded, never dropped; see runner.on_error
            if on_error == "raise":
                raise ReplicateFailed(study, condition.label(), r, exc) from exc
            results.append(None)
            errors.append(f"{type(exc).__name__}: {exc}")
    return results, errors


def replicate_records(compute: Callable[[int], dict[str, Any]], chunk: Any, condition: Any, on_error: str,
                      study: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Records of a chunk from a per-replicate function returning a dict of values.

    One row per replicate: the condition's columns (``condition.columns()``, if it has them),
    ``condition_key``, ``replicate``, the values of ``compute(r)`` and ``error``; a failed
    replicate keeps its row with the values missing (see :func:`map_replicates`).

    Parameters
    ----------
    columns : sequence of str, optional
        The value columns, in order (default: the keys of the first successful replicate).
    """
    replicates = range(chunk.start, chunk.stop)
    results, errors = map_replicates(compute, replicates, on_error, condition, study)
    if columns is None:
        columns = next((list(r) for r in results if r is not None), [])
    frame = pd.DataFrame([r if r is not None else {} for r in results], columns=list(columns))
    leading = {**(condition.columns() if hasattr(condition, "columns") else {}), "condition_key": condition.key,
               "replicate": np.arange(chunk.start, chunk.stop)}
    for i, (name, value) in enumerate(leading.items()):
        frame.insert(i, name, value)
    frame["error"] = errors
    return frame


# ----------------------------------------------------------------------------- shared validation
def check_learner_task(learner: Any, population: Any, field_name: str = "learner") -> None:
    """A classifier needs a classification population, a regressor a regression one."""
    learner_task = getattr(learner, "task", None)
    task = getattr(population, "task", "classification")
    if learner_task and task in ("classification", "regression") and learner_task != task:
        raise ConfigError(f"{field_name}={getattr(learner, 'name', learner)!r} is a {learner_task} learner but "
                          f"population {getattr(population, 'name', population)!r} is a {task} problem: choose a "
                          f"{task} learner (a scikit-learn {'classifier' if task == 'classification' else 'regressor'}).")


@dataclass(frozen=True, order=True)
class Chunk:
    """Replicates ``start <= r < stop`` of condition number ``condition``; with ``subjects``,
    only those parts of each replicate's records (see :class:`simstudy.studies.base.Phase`)."""

    condition: int
    start: int
    stop: int
    subjects: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return self.stop - self.start

    @property
    def name(self) -> str:
        return f"c{self.condition:04d}_r{self.start:07d}-{self.stop:07d}"
