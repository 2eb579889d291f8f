"""What one replicate of the cv_variance study records.

Per replicate (one training set of size n drawn from the population): K-fold CV of the learner
gives residuals e_i = loss(y_i, prediction of the model trained without i's fold); we record
mu_hat, the K fold means, theta1..theta5 (Grandvalet & Bengio, Table 1) and, when
``study.truth`` is on, each fold model's true risk on the population.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simstudy.crossval import cross_validate, cross_validate_batch
from simstudy.inference import variance_estimates_from_blocks
from simstudy.learners.base import learners_context
from simstudy.populations.base import ResidualPopulation
from simstudy.rng import replicate_rng
from simstudy.runner import Chunk
from simstudy.schemes import KFold
from simstudy.studies.base import SizeCondition, map_replicates
from simstudy.truth import model_risks

__all__ = ["CVVarianceWorker", "THETAS"]

THETAS = ("theta1", "theta2", "theta3", "theta4", "theta5")


@dataclass
class CVVarianceWorker:
    """Runs the replicates of one chunk (picklable: sent to the worker processes).

    Random numbers of replicate r of a condition: the training sample, then the fold
    assignment, then the learner's fits, all from ``replicate_rng(seed, condition key, r)``.
    """

    population: Any
    learner: Any
    loss: Any
    conditions: list[SizeCondition]
    seed: int
    truth: bool
    on_error: str = "record"

    def replicate(self, cond: SizeCondition, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Residuals in fold blocks (K, m), fold labels, and fold models' true risks (K,)."""
        rng = replicate_rng(self.seed, cond.key, r)
        if isinstance(self.population, ResidualPopulation):  # residuals drawn directly, exact mean
            blocks = self.population.residual_blocks(cond.K, cond.m, rng)
            return blocks, np.repeat(np.arange(cond.K), cond.m), np.full(cond.K, self.population.mean)
        sample = self.population.sample(cond.n, rng)
        labels = KFold(cond.K).labels(cond.n, rng)
        folds = cross_validate(self.learner, self.learner.start(sample), labels, cond.K, rng,
                               keep_models=self.truth, proba=self.loss.needs_proba)
        losses = self.loss(sample.y, folds.predictions, folds.proba)
        order = np.argsort(labels, kind="stable")  # rows of fold 0, then fold 1, ...
        blocks = losses[order].reshape(cond.K, cond.m)
        fold_truth = np.full(cond.K, np.nan)
        if self.truth:
            fold_truth[:] = model_risks(self.learner, folds.models, self.population, self.loss)
        return blocks, labels, fold_truth

    def batched_chunk(self, cond: SizeCondition, chunk: Chunk, blocks: np.ndarray, truth: np.ndarray) -> None:
        """All folds of all replicates of the chunk at once (chunk-level kernels).

        Draws exactly the samples and fold assignments of :meth:`replicate` (same streams).
        """
        R, n, K = chunk.size, cond.n, cond.K
        X, y, labels = [], [], []
        for r in range(chunk.start, chunk.stop):
            rng = replicate_rng(self.seed, cond.key, r)
            sample = self.population.sample(n, rng)
            X.append(sample.X)
            y.append(sample.y)
            labels.append(KFold(K).labels(n, rng))
        X, y, labels = np.asarray(X, dtype=float), np.asarray(y), np.asarray(labels)
        folds = cross_validate_batch(self.learner, X, y, labels, K)
        loss = np.stack([self.loss(y[j], folds.predictions[j]) for j in range(R)])
        order = np.argsort(labels, axis=1, kind="stable")
        blocks[:] = np.take_along_axis(loss, order, axis=1).reshape(R, K, cond.m)
        if self.truth:
            Xp, yp = self.population.evaluation_set(np.float64)
            predictions = self.learner.batch_predict_features(folds.models, Xp)
            truth[:] = np.array([np.mean(self.loss(yp, p)) for p in predictions]).reshape(R, K)

    def _compute(self, cond: SizeCondition, chunk: Chunk, blocks: np.ndarray, truth: np.ndarray) -> list[str]:
        """Fill ``blocks`` and ``truth``; returns the error text of each replicate."""
        if callable(getattr(self.learner, "cross_validate_batch", None)):
            try:
                self.batched_chunk(cond, chunk, blocks, truth)
                return [""] * chunk.size
            except Exception:  # find the failing replicates one by one; the others still count
                if self.on_error == "raise":
                    raise
                blocks[:], truth[:] = np.nan, np.nan
        with learners_context([self.learner] if self.learner is not None else []):
            results, errors = map_replicates(lambda r: self.replicate(cond, r), range(chunk.start, chunk.stop),
                                             self.on_error, cond, "cv_variance")
        for j, res in enumerate(results):
            if res is not None:
                blocks[j], _, truth[j] = res
        return errors

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        R = chunk.size
        blocks = np.full((R, cond.K, cond.m), np.nan)
        truth = np.full((R, cond.K), np.nan)  # stays NaN unless the truth is computed
        errors = self._compute(cond, chunk, blocks, truth)
        est = variance_estimates_from_blocks(blocks)
        fold_means = blocks.mean(axis=-1)
        frame = pd.DataFrame({
            "n": cond.n, "K": cond.K, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop),
            "mu_hat": fold_means.mean(axis=-1),
            **{name: getattr(est, name) for name in THETAS},
            "fold_means": list(fold_means),
        })
        if self.truth or isinstance(self.population, ResidualPopulation):
            frame["true_error"] = truth.mean(axis=-1)
            frame["fold_true_errors"] = list(truth)
        frame["error"] = errors
        return frame
