"""What one replicate of a data cell records: one row per procedure (the engine's subjects).

Streams (each from the run's seed, the cell's key and the replicate number, so that a record
depends on nothing but its own cell, procedure and replicate):

- the sample: ``replicate_rng(seed, cell.key, r)``;
- the plan of a design: keyed by (cell, design); procedures sharing a design share its plan
  and its fits;
- the fits of a learner on a plan: keyed by (cell, design, learner, copy); copy 1 is the
  independent twin of a learner compared with itself;
- the model trained on all n points (Err_XY): keyed by (cell, "full", learner, copy).

With ``streams="cv_clt"`` the sample, the K-fold plan (K = 10) and its fits follow the cv_clt
study's streams instead (:mod:`.cv_clt_streams`), so that the procedures the two studies share
give the same intervals on the same samples.

A procedure that does not apply to the cell (:func:`~.procedures.applicability`) gets a row of
kind ``"skipped"`` saying why; a replicate whose fits or formula fail is recorded with the error,
never dropped.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simstudy.inference.procedures import IntervalOutcome, SplitLosses
from simstudy.learners.base import learners_context
from simstudy.populations.checks import draw_sample
from simstudy.rng import condition_key, replicate_rng
from simstudy.studies.base import Chunk, map_replicates
from simstudy.studies.benchmark.cells import DataCell
from simstudy.studies.benchmark.cv_clt_streams import cv_clt_start
from simstudy.studies.benchmark.fitting import fit_full, fit_plan, residual_losses
from simstudy.studies.benchmark.procedures import applicability
from simstudy.studies.benchmark.truth import estimate_weights

__all__ = ["BenchmarkWorker", "outcome_columns"]

_VALUES = ("estimate", "lower", "upper", "pvalue", "reject", "truth_R_n", "truth_Err_XY", "fits", "cpu_seconds")


def outcome_columns(outcome: Any) -> dict[str, float]:
    """estimate, lower, upper, pvalue and reject (1.0 / 0.0) of any outcome; NaN where it has none."""
    interval = outcome if isinstance(outcome, IntervalOutcome) else getattr(outcome, "interval", None)
    out = {k: np.nan for k in ("estimate", "lower", "upper", "pvalue", "reject")}
    if interval is not None:
        out.update(estimate=float(interval.estimate), lower=float(interval.lower), upper=float(interval.upper))
    if not isinstance(outcome, IntervalOutcome):
        out["pvalue"] = float(getattr(outcome, "pvalue", np.nan))
        out["reject"] = float(bool(outcome.reject))
    return out


def _stream(seed: int, r: int, **parts: Any) -> np.random.Generator:
    return replicate_rng(seed, condition_key(parts), r)


def _outside_block(cell: DataCell, procedure: str) -> str:
    """Why a cell restricted by its scale's blocks does not run ``procedure`` ("" when it does)."""
    if cell.procedures and procedure not in cell.procedures:
        return "not in this cell's block of the scale (see the scale's blocks)"
    return ""


@dataclass
class BenchmarkWorker:
    """Runs the replicates of one chunk of a data cell for the chunk's procedures (picklable)."""

    cells: list[DataCell]
    populations: dict[str, Any]
    learners: dict[tuple[str, str, str], Any]
    losses: dict[str, Any]
    procedures: dict[str, Any]
    seed: int
    alpha: float
    on_error: str = "record"
    #: "cells" (the streams above) or "cv_clt" (:func:`~.cv_clt_streams.cv_clt_start`).
    streams: str = "cells"

    @property
    def subjects(self) -> tuple[str, ...]:
        return tuple(self.procedures)

    def _variants(self, cell: DataCell) -> list[tuple[str, int]]:
        pair = cell.pair
        if cell.mechanism_is_residual:
            return []
        if pair is None:
            return [(cell.learner, 0)]
        return [(pair[0], 0), (pair[1], 1 if pair[0] == pair[1] else 0)]

    def _fits(self, cell, states, sample, plan, weights, r, tag, shared=None):
        """Losses (A - B for a comparison), R_n truth, gamma and Err_XY of one design's plan."""
        population, loss = self.populations[cell.mechanism], self.losses.get(cell.loss)
        if not states:                                   # a residual mechanism: the losses are drawn
            losses = residual_losses(population, plan, _stream(self.seed, r, cell=cell.key, design=tag))
            return losses, float(population.mean), None
        parts = []
        for (name, copy), state in states.items():
            learner = self.learners[cell.mechanism, name, cell.loss]
            rng = shared.fit_rng(name, copy) if shared is not None else \
                _stream(self.seed, r, cell=cell.key, design=tag, learner=name, copy=copy)
            parts.append(fit_plan(learner, state, sample, loss, plan, weights, population, rng, cell.task))
        if len(parts) == 1:
            fitted = parts[0]
            return fitted.losses, _weighted(weights, fitted.risks), fitted.no_information
        return parts[0].losses - parts[1].losses, _weighted(weights, parts[0].risks - parts[1].risks), None

    def _full_truth(self, cell, states, sample, r) -> float:
        """Err_XY: the true error of the model(s) trained on all n points (the difference A - B)."""
        if not states:
            return float(self.populations[cell.mechanism].mean)
        values = [fit_full(self.learners[cell.mechanism, name, cell.loss], state, cell.n, self.losses[cell.loss],
                           self.populations[cell.mechanism],
                           _stream(self.seed, r, cell=cell.key, design="full", learner=name, copy=copy))[0]
                  for (name, copy), state in states.items()]
        return values[0] - values[1] if len(values) == 2 else values[0]

    def replicate(self, cell: DataCell, r: int, wanted: list[str]) -> list[dict[str, Any]]:
        """One row per wanted procedure."""
        comparison, residual = cell.pair is not None, cell.mechanism_is_residual
        rows = {name: {"subject": name, "kind": "skipped", "note": why}
                for name in wanted if (why := _outside_block(cell, name) or applicability(
                    self.procedures[name], comparison, residual, cell.loss, cell.n))}
        active = [name for name in wanted if name not in rows]
        if not active:
            return [rows[name] for name in wanted]
        population = self.populations[cell.mechanism]
        sample, states, shared = None, {}, None
        if not residual and self.streams == "cv_clt":
            sample, shared = cv_clt_start(population, cell.n, self.seed, r)
        elif not residual:
            sample = draw_sample(population, cell.n, replicate_rng(self.seed, cell.key, r))
        for name, copy in self._variants(cell):
            learner = self.learners[cell.mechanism, name, cell.loss]
            same = [state for (other, _), state in states.items() if other == name]
            states[name, copy] = same[0] if same else learner.start(sample)
        full = np.nan
        if any(self.procedures[name].estimand == "Err_XY" for name in active):
            full = self._full_truth(cell, states, sample, r)
        groups: dict[str, list[str]] = {}
        for name in active:
            groups.setdefault(repr(self.procedures[name].design), []).append(name)
        for tag, names in groups.items():
            rows.update(self._design_rows(cell, states, sample, r, tag, names, comparison, full, shared))
        return [rows[name] for name in wanted]

    def _design_rows(self, cell, states, sample, r, tag, names, comparison, full, shared=None) -> dict[str, dict]:
        """The rows of the procedures sharing one design: one plan, one fit per split and learner."""
        kind = "test" if comparison else "interval"
        design = self.procedures[names[0]].design
        try:
            start = time.process_time()
            if shared is not None and tag == repr(shared.plan.design):
                plan = shared.plan
            else:
                plan = design.plan(cell.n, _stream(self.seed, r, cell=cell.key, design=tag, plan=True))
                shared = None
            weights = estimate_weights(plan)
            losses, truth, gamma = self._fits(cell, states, sample, plan, weights, r, tag, shared)
            split_losses = SplitLosses(plan, losses, gamma)
            fit_seconds = time.process_time() - start
        except Exception as exc:  # recorded for every procedure of the design, never dropped
            if self.on_error == "raise":
                raise
            return {name: {"subject": name, "kind": kind, "error": f"{type(exc).__name__}: {exc}"} for name in names}
        out = {}
        for name in names:
            row = {"subject": name, "kind": kind, "truth_R_n": truth, "truth_Err_XY": full, "fits": plan.splits}
            try:
                start = time.process_time()
                row.update(outcome_columns(self.procedures[name].apply(split_losses, self.alpha)))
                row["cpu_seconds"] = fit_seconds + time.process_time() - start
            except Exception as exc:  # one procedure's failure is its own record
                if self.on_error == "raise":
                    raise
                row["error"] = f"{type(exc).__name__}: {exc}"
            out[name] = row
        return out

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cell = self.cells[chunk.condition]
        subjects = chunk.subjects or self.subjects
        wanted = [s for s in self.subjects if s in subjects]
        with learners_context([self.learners[cell.mechanism, name, cell.loss] for name, _ in self._variants(cell)
                               if (cell.mechanism, name, cell.loss) in self.learners]):
            results, errors = map_replicates(lambda r: self.replicate(cell, r, wanted),
                                             range(chunk.start, chunk.stop), self.on_error, cell, "benchmark")
        frames = []
        for r, rows, error in zip(range(chunk.start, chunk.stop), results, errors):
            rows = rows or [{"subject": s, "kind": "test" if cell.pair else "interval", "error": error} for s in wanted]
            for row in rows:
                row.setdefault("error", "")
                row.setdefault("note", "")
                frames.append({**cell.columns(), "condition_key": cell.key, "replicate": r, **row})
        frame = pd.DataFrame(frames)
        for column in _VALUES:
            if column not in frame:
                frame[column] = np.nan
        front = ["mechanism", "learner", "loss", "n", "condition_key", "replicate", "subject", "kind", "note"]
        return frame[front + list(_VALUES) + ["error"]].astype({c: float for c in _VALUES})


def _weighted(weights: np.ndarray | None, risks: np.ndarray) -> float:
    if weights is None:
        return np.nan
    used = weights > 0
    if np.all(weights[used] == weights[used][0]):   # equal test sizes: the plain mean, as cv_clt's R_n
        return float(risks[used].mean())
    return float(weights[used] @ risks[used])
