"""Settings of the benchmark study (:class:`BenchmarkConfig`), checked before any work."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List

from simstudy.studies.benchmark.cells import nearest, split_pair
from simstudy.studies.benchmark.scales import RESIDUAL_LEARNER, SCALES
from simstudy.studies.settings import StudyConfig, extent, fail, location, report, validate_level

__all__ = ["BenchmarkConfig", "check_names"]


def _quick(field: str) -> object:
    return extent(default_factory=lambda: list(getattr(SCALES["quick"], field)))


@dataclass
class BenchmarkConfig(StudyConfig):
    """The benchmark's grid (procedures x mechanisms x learners x losses x sizes) and its replicates.

    ``learners`` holds single learners and comparisons "A-vs-B" (the tests); ``procedures``
    registry names of :data:`simstudy.inference.procedures.PROCEDURES` or import paths
    ``package.module:attribute`` of a user's procedure. Every grid field is an extent: a larger
    grid extends a run, computing only the new cells.
    """

    name: str = "benchmark"
    scale: str = report("quick")
    procedures: List[str] = _quick("procedures")
    mechanisms: List[str] = _quick("mechanisms")
    learners: List[str] = extent(default_factory=lambda: list(SCALES["quick"].learners + SCALES["quick"].comparisons))
    losses: List[str] = _quick("losses")
    sizes: List[int] = _quick("sizes")
    #: Replicates per data cell.
    replicates: int = extent(200)
    #: Independent samples behind each Err_n truth.
    truth_replicates: int = extent(200)
    seed: int = 0
    #: Level of the intervals (1 - alpha) and tests; part of the records.
    alpha: float = 0.05
    #: The random streams: "cells" (each data cell its own, see :mod:`.worker`) or "cv_clt" (the
    #: sample and K-fold plan of the cv_clt study, :mod:`.cv_clt_streams`).
    streams: str = "cells"
    #: Local files of data-backed mechanisms, by mechanism name (e.g. {"letter": "letter-recognition.data"}):
    #: the population's ``path``, read instead of its download. A run is tied to the files' contents,
    #: not to their paths: the same rows elsewhere extend it.
    data: Dict[str, str] = location(default_factory=dict)

    def validate(self) -> None:
        check_names(self)
        for field, value in (("replicates", self.replicates), ("truth_replicates", self.truth_replicates)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                fail(f"study.{field}", value, "use at least 2.")
        for n in self.sizes:
            if isinstance(n, bool) or not isinstance(n, int) or n < 10:
                fail("study.sizes", list(self.sizes), "use whole sizes of at least 10 points.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            fail("study.seed", self.seed, "use a non-negative integer seed.")
        validate_level(self.alpha)
        if not hasattr(self.data, "items") or not all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in self.data.items()):
            fail("study.data", self.data, "map mechanism names to data file paths, e.g. "
                 "{'letter': 'letter-recognition.data'} (--data letter=PATH on the command line).")
        for name in self.data:
            if name not in self.mechanisms:
                fail("study.data", dict(self.data), f"name a mechanism of the run ({name!r} is not one).")
        if self.streams not in ("cells", "cv_clt"):
            fail("study.streams", self.streams, "use 'cells' (the default) or 'cv_clt'.")


def check_names(config: BenchmarkConfig) -> None:
    """Every name is registered (or, for procedures, an import path); the nearest valid name otherwise."""
    from simstudy.inference.procedures import PROCEDURES
    from simstudy.registry import LEARNERS, LOSSES, POPULATIONS
    from simstudy.studies.benchmark.procedures import in_process

    for field, values, registry in (("procedures", config.procedures, PROCEDURES),
                                    ("mechanisms", config.mechanisms, POPULATIONS), ("losses", config.losses, LOSSES)):
        if not values:
            fail(f"study.{field}", list(values), "name at least one.")
        for name in values:
            if name not in registry and not (field == "procedures" and (":" in str(name) or in_process(name))):
                raise nearest(field, name, [n for n in registry if n not in ("custom", "tabular", "packaged",
                                                                             "openml_task")])
    if not config.learners or not config.sizes:
        fail("study.learners" if not config.learners else "study.sizes", [], "name at least one.")
    valid = [n for n in LEARNERS if n != "custom"] + [RESIDUAL_LEARNER]
    for name in config.learners:
        for part in split_pair(name) or (name,):
            if part not in valid:
                raise nearest("learners", part, valid)
    for field in ("procedures", "mechanisms", "learners", "losses", "sizes"):
        values = list(getattr(config, field))
        if len(set(map(str, values))) != len(values):
            fail(f"study.{field}", values, "each name once.")
