"""The benchmark as the engine runs it: data cells x procedures, and the Err_n truth phase.

Conditions are the data cells (:mod:`.cells`), subjects the procedures: a run extended by a
procedure computes that procedure's records only, and one extended by a mechanism, learner,
loss or size computes the new cells only (cells are keyed by their names, never their
position). The truth phase runs the same cells under their truth keys.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from simstudy.errors import ConfigError, DataUnavailableError
from simstudy.studies.base import Phase, Study, StudyTables
from simstudy.studies.benchmark.aggregate import aggregate_cells
from simstudy.studies.benchmark.cells import DataCell, cell_seed
from simstudy.studies.benchmark.config import BenchmarkConfig
from simstudy.studies.benchmark.scales import RESIDUAL_LEARNER, RESIDUAL_LOSS, RESIDUAL_PAIR, TASK_LOSSES

__all__ = ["BenchmarkStudy", "build_cells"]


def _learner_for(name: str, population: Any, loss: Any) -> tuple[Any, str]:
    """The learner object for a mechanism and loss, or None and why it cannot run there."""
    from simstudy.learners.base import check_learner_loss
    from simstudy.learners.dispatch import build_learner
    from simstudy.populations.truth import missing_truth

    try:
        learner = build_learner(name, population, loss, f"learners.{name}")
        check_learner_loss(learner, loss)
    except ConfigError as exc:
        return None, " ".join(str(exc).split())
    task = getattr(learner, "task", None)
    if task and task != population.task:
        return None, ""
    why = missing_truth(population, learner)
    return (None, why) if why else (learner, "")


def build_cells(config: BenchmarkConfig, populations: dict[str, Any], losses: dict[str, Any]):
    """The data cells of the grid, the learner objects by (mechanism, learner, loss), and the
    (mechanism, learner, loss) combinations left out with the reason. The blocks of the config's
    scale (:class:`~.scales.Block`) restrict the cells and their procedures."""
    from simstudy.studies.benchmark.cells import split_pair
    from simstudy.studies.benchmark.scales import SCALES, cell_procedures

    blocks = SCALES[config.scale].blocks if config.scale in SCALES else ()

    cells, learners, left_out = [], {}, []
    for mechanism, population in populations.items():
        if population.task == "residuals":
            names = [RESIDUAL_LEARNER] + ([RESIDUAL_PAIR] if any(split_pair(x) for x in config.learners) else [])
            cells += [DataCell.make(mechanism, name, RESIDUAL_LOSS, n, "regression") for name in names
                      for n in config.sizes]
            continue
        for learner in config.learners:
            parts = split_pair(learner) or (learner,)
            for loss in (x for x in config.losses if x in TASK_LOSSES[population.task]):
                wanted = {n: cell_procedures(blocks, mechanism, learner, loss, n, config.procedures)
                          for n in config.sizes}
                if not any(wanted.values()):             # outside the scale's blocks: no learner built
                    continue
                why = ""
                for part in parts:
                    if (mechanism, part, loss) not in learners:
                        obj, why = _learner_for(part, population, losses[loss])
                        if obj is None:
                            why = why or "mismatched task"
                            break
                        learners[mechanism, part, loss] = obj
                if why == "mismatched task":
                    continue
                if why:
                    left_out.append({"mechanism": mechanism, "learner": learner, "loss": loss, "why": why})
                    continue
                cells += [DataCell.make(mechanism, learner, loss, n, population.task,
                                        () if len(procs) == len(config.procedures) else procs)
                          for n, procs in wanted.items() if procs]
    return cells, learners, left_out


class BenchmarkStudy(Study):
    """The CV inference benchmark: coverage and width of intervals, size and power of tests, per cell."""

    name = "benchmark"
    description = "the CV inference benchmark: every procedure on every mechanism, learner, loss and n"
    Config = BenchmarkConfig
    uses = ()

    def __init__(self, config: BenchmarkConfig, population: Any = None, learner: Any = None, loss: Any = None):
        super().__init__(config, None, None, None)
        self.populations: dict[str, Any] = {}
        self.procedures: dict[str, Any] = {}
        self.cells: list[DataCell] = []
        self.learners: dict = {}
        self.left_out: list[dict] = []
        self.losses: dict[str, Any] = {}

    def check(self) -> None:
        """Build the procedures, populations, learners and cells; refuse a grid with no cell."""
        from simstudy.cv.losses import resolve_loss
        from simstudy.populations import build_population
        from simstudy.populations.truth import check_evaluation_set
        from simstudy.studies.benchmark.procedures import resolve_procedure

        c = self.config
        self.procedures = {name: resolve_procedure(name) for name in c.procedures}
        for name in c.mechanisms:
            try:
                path = dict(c.data).get(name)
                self.populations[name] = build_population({"name": name, "path": path} if path else name)
            except ValueError as exc:
                raise ConfigError(f"mechanisms: {name!r} cannot be built: {exc}") from None
            except DataUnavailableError as exc:
                if not path:
                    raise
                # the population's messages name its own field; here the path came from study.data
                raise DataUnavailableError(str(exc).replace("population.path", f"study.data[{name!r}]")
                                           + f" (on the command line: --data {name}=PATH)") from None
            if self.populations[name].task != "residuals":
                check_evaluation_set(self.populations[name])
        self.losses = {name: resolve_loss(name) for name in c.losses}
        self.cells, self.learners, self.left_out = build_cells(c, self.populations, self.losses)
        if not self.cells:
            raise ConfigError(f"the grid has no data cell: every (mechanism, learner, loss) was left out "
                              f"({self.left_out[:3]}); match learners and losses to the mechanisms' tasks.")
        for learner in self.learners.values():
            build_index = getattr(learner, "build_index", None)
            if callable(build_index):
                build_index()

    def subjects(self) -> dict[str, Any]:
        return {name: {"procedure": name, "design": repr(p.design), "estimand": p.estimand, "kind": p.kind}
                for name, p in self.procedures.items()}

    def data_fingerprints(self) -> dict[str, str]:
        """The data-backed mechanisms' fingerprints (a file given by ``data``, a download, a data set
        shipped in a package): a run directory refuses to add cells on changed data."""
        return {f"mechanism {name}": pop.fingerprint for name, pop in self.populations.items()
                if getattr(pop, "fingerprint", None)}

    def phases(self, on_error: str = "record") -> list[Phase]:
        from simstudy.studies.benchmark.truth_worker import TruthCondition, TruthWorker
        from simstudy.studies.benchmark.worker import BenchmarkWorker

        c = self.config
        worker = BenchmarkWorker(self.cells, self.populations, self.learners, self.losses, self.procedures,
                                 int(c.seed), float(c.alpha), on_error, str(c.streams))
        truth_conditions = [TruthCondition(cell) for cell in self.cells]
        truth = TruthWorker(truth_conditions, self.populations, self.learners, self.losses, int(c.seed), on_error)
        return [Phase("truth", truth_conditions, [int(c.truth_replicates)] * len(self.cells), truth,
                      description="benchmark Err_n truths"),
                Phase("replicates", self.cells, [int(c.replicates)] * len(self.cells), worker, worker.subjects,
                      description="benchmark")]

    def cell_info(self) -> dict[str, dict[str, Any]]:
        return {cell.key: {"task": cell.task, "cell_seed": cell_seed(cell.key, int(self.config.seed))}
                for cell in self.cells}

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        if not self.cells:  # a study rebuilt from a run's config (load_run): its grid is built first
            self.check()
        cells = aggregate_cells(records["replicates"], records.get("truth", pd.DataFrame()), float(self.config.alpha),
                                {name: p.estimand for name, p in self.procedures.items()}, self.cell_info())
        return StudyTables(cells)

    def headline(self, tables: StudyTables) -> str:
        cells = tables.summary
        if not len(cells):
            return "benchmark: no cell"
        own = cells[cells["kind"] == "interval"]
        lines = [f"benchmark ({self.config.scale}): {len(cells)} cells, {cells['procedure'].nunique()} procedures, "
                 f"{cells['mechanism'].nunique()} mechanisms"]
        if len(own):
            lines.append("median coverage by procedure and estimand (%):")
            table = (100 * own.pivot_table(index="procedure", columns="estimand", values="coverage",
                                           aggfunc="median")).round(1)
            lines.append(table.to_string())
        return "\n".join(lines)

    def write_tables(self, tables: StudyTables, directory) -> list:
        """``cells.parquet``, ``cells.csv`` (the contract's table) and ``config.json`` (the grid)."""
        import json
        from pathlib import Path

        from simstudy.files import atomic_path, write_csv_atomic, write_text_atomic

        directory = Path(directory)
        with atomic_path(directory / "cells.parquet") as tmp:
            tables.summary.to_parquet(tmp, index=False)
        config = {**run_config(self.config), "left_out": self.left_out}
        return [directory / "cells.parquet", write_csv_atomic(tables.summary, directory / "cells.csv"),
                write_text_atomic(directory / "config.json", json.dumps(config, indent=1, default=str) + "\n")]

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        return {"cells": len(self.cells), "left_out": self.left_out,
                "procedures": {name: {"design": repr(p.design), "estimand": p.estimand, "kind": p.kind}
                               for name, p in self.procedures.items()}}


def run_config(config: BenchmarkConfig) -> dict[str, Any]:
    """The resolved grid for ``config.json``, with the Monte Carlo error the replicates give.

    At nominal coverage c the standard error of a cell's coverage over R replicates is
    sqrt(c (1 - c) / R) (0.0154 at c = 0.95, R = 200; 0.0097 at R = 500); a cell's Err_n truth
    has its own Monte Carlo error (``truth_mcse``).
    """
    import math

    grid = {k: v for k, v in config.as_dict().items() if k != "name"}
    nominal = 1 - float(config.alpha)
    R = int(config.replicates)
    grid["mcse_target"] = {
        "replicates": R, "nominal": nominal, "coverage_mcse_at_nominal": math.sqrt(nominal * (1 - nominal) / R),
        "size_mcse_at_alpha": math.sqrt(config.alpha * (1 - config.alpha) / R),
        "justification": (f"{R} replicates per cell give a coverage Monte Carlo SE of "
                          f"{math.sqrt(nominal * (1 - nominal) / R):.4f} at nominal {nominal:g} (sqrt(c(1-c)/R)): "
                          f"a coverage of {nominal - 3 * math.sqrt(nominal * (1 - nominal) / R):.3f} or less is "
                          "3 SE below nominal.")}
    return grid
