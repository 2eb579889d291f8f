"""The truth phase: T independent samples of n points per data cell, each fitted on all n
points, give the Err_n truth (:func:`~.truth.err_n_truth`).

Its conditions are the data cells under another key (:class:`TruthCondition`), so its samples
are independent of the replicates the procedures are scored on. Streams: the sample from
``replicate_rng(seed, truth key, t)``, each learner's fit from (truth key, learner, copy).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simstudy.learners.base import learners_context
from simstudy.populations.checks import draw_sample
from simstudy.rng import condition_key, replicate_rng
from simstudy.studies.base import Chunk, replicate_records
from simstudy.studies.benchmark.cells import DataCell
from simstudy.studies.benchmark.fitting import fit_full

__all__ = ["TruthCondition", "TruthWorker"]


@dataclass(frozen=True)
class TruthCondition:
    """A data cell as a condition of the truth phase."""

    cell: DataCell

    @property
    def key(self) -> str:
        return condition_key({"truth": self.cell.key})

    @property
    def n(self) -> int:
        return self.cell.n

    def label(self) -> str:
        return f"Err_n truth of {self.cell.label()}"

    def selection(self) -> str:
        return self.cell.selection()

    def columns(self) -> dict:
        return {**self.cell.columns(), "cell_key": self.cell.key}


@dataclass
class TruthWorker:
    """Runs the truth replicates of one chunk (picklable)."""

    conditions: list[TruthCondition]
    populations: dict[str, Any]
    learners: dict[tuple[str, str, str], Any]
    losses: dict[str, Any]
    seed: int
    on_error: str = "record"

    def truth(self, cond: TruthCondition, t: int) -> dict[str, float]:
        cell = cond.cell
        population = self.populations[cell.mechanism]
        if cell.mechanism_is_residual:
            return {"truth": float(population.mean), "truth_se": 0.0}
        sample = draw_sample(population, cell.n, replicate_rng(self.seed, cond.key, t))
        pair = cell.pair or (cell.learner,)
        values = []
        for copy, name in enumerate(pair):
            learner = self.learners[cell.mechanism, name, cell.loss]
            copy = copy if len(pair) == 2 and pair[0] == pair[1] else 0
            rng = replicate_rng(self.seed, condition_key({"truth": cell.key, "learner": name, "copy": copy}), t)
            values.append(fit_full(learner, learner.start(sample), cell.n, self.losses[cell.loss], population, rng))
        if len(values) == 1:
            return {"truth": values[0][0], "truth_se": values[0][1]}
        return {"truth": values[0][0] - values[1][0], "truth_se": values[0][1] + values[1][1]}

    def __call__(self, chunk: Chunk):
        cond = self.conditions[chunk.condition]
        cell = cond.cell
        names = cell.pair or (cell.learner,)
        with learners_context([self.learners[k] for k in ((cell.mechanism, m, cell.loss) for m in names)
                               if k in self.learners]):
            return replicate_records(lambda t: self.truth(cond, t), chunk, cond, self.on_error, "benchmark",
                                     columns=("truth", "truth_se"))
