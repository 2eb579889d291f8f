"""What one replicate of the cv_variance study records.

Per replicate (one training set of size n drawn from the population): K-fold CV of the learner
gives residuals e_i = loss(y_i, prediction of the model trained without i's fold); we record
mu_hat, the K fold means, theta1..theta5 (Grandvalet & Bengio, Table 1) and, when
``study.truth`` is on, each fold model's true risk on the population (with its Monte Carlo
standard error when the population's truth is a large fixed sample).

Any n >= 2K: folds have sizes floor(n/K) or ceil(n/K) (:class:`simstudy.cv.splits.KFold`, the
first n mod K folds one point larger). Each replicate's losses are stored fold by fold
(fold 0's rows, then fold 1's, ...), so the fold layout is the same for every replicate and
theta1..theta5 come from :func:`simstudy.inference.variance_estimates` (the paper's Table 1
for equal folds, its generalisation otherwise). With unequal folds mu_hat is the mean of the
n losses, i.e. the size-weighted mean of the fold means, and ``true_error`` the size-weighted
mean of the fold models' risks (so that E[mu_hat] = E[true_error] still holds exactly).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simstudy.contracts import guarantees_outputs
from simstudy.cv.checks import scored_losses
from simstudy.cv.loop import cross_validate, cross_validate_batch
from simstudy.cv.splits import KFold
from simstudy.inference import variance_estimates, variance_estimates_from_blocks
from simstudy.learners.base import learners_context
from simstudy.populations.base import ResidualPopulation
from simstudy.populations.checks import checked_evaluation_set, draw_sample
from simstudy.populations.truth import true_risks
from simstudy.rng import replicate_rng
from simstudy.studies.base import Chunk, SizeCondition, map_replicates

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
        """Losses fold by fold (n,), fold models' true risks (K,) and their Monte Carlo errors (K,)."""
        rng = replicate_rng(self.seed, cond.key, r)
        if isinstance(self.population, ResidualPopulation):  # residuals drawn directly, exact mean
            blocks = self.population.residual_blocks(cond.K, cond.m, rng)
            return blocks.ravel(), np.full(cond.K, self.population.mean), np.zeros(cond.K)
        sample = draw_sample(self.population, cond.n, rng)
        labels = KFold(cond.K).labels(cond.n, rng)
        folds = cross_validate(self.learner, self.learner.start(sample), labels, cond.K, rng,
                               keep_models=self.truth, proba=self.loss.needs_proba)
        task = getattr(self.population, "task", None)
        losses = scored_losses(self.loss, sample.y, folds.predictions, folds.proba, task,
                               guaranteed=guarantees_outputs(self.learner))
        order = np.argsort(labels, kind="stable")  # rows of fold 0, then fold 1, ...
        fold_truth, fold_se = np.full(cond.K, np.nan), np.full(cond.K, np.nan)
        if self.truth:
            risks = true_risks(self.learner, folds.models, self.population, self.loss)
            fold_truth[:], fold_se[:] = risks.values, risks.mc_se
        return losses[order], fold_truth, fold_se

    def batched_chunk(self, cond: SizeCondition, chunk: Chunk, ordered: np.ndarray, truth: np.ndarray,
                      truth_se: np.ndarray) -> None:
        """All folds of all replicates of the chunk at once (chunk-level kernels).

        Draws exactly the samples and fold assignments of :meth:`replicate` (same streams).
        """
        R, n, K = chunk.size, cond.n, cond.K
        X, y, labels = [], [], []
        for r in range(chunk.start, chunk.stop):
            rng = replicate_rng(self.seed, cond.key, r)
            sample = draw_sample(self.population, n, rng)
            X.append(sample.X)
            y.append(sample.y)
            labels.append(KFold(K).labels(n, rng))
        X, y, labels = np.asarray(X, dtype=float), np.asarray(y), np.asarray(labels)
        folds = cross_validate_batch(self.learner, X, y, labels, K)
        task = getattr(self.population, "task", None)
        guaranteed = guarantees_outputs(self.learner)
        loss = np.stack([scored_losses(self.loss, y[j], folds.predictions[j], None, task, guaranteed)
                         for j in range(R)])
        order = np.argsort(labels, axis=1, kind="stable")
        ordered[:] = np.take_along_axis(loss, order, axis=1)
        if self.truth and self._rule_truth(folds.models, truth, truth_se):
            return
        if self.truth:
            Xp, yp = checked_evaluation_set(self.population, np.float64)
            weights = getattr(self.population, "evaluation_weights", None)
            predictions = self.learner.batch_predict_features(folds.models, Xp)
            truth[:] = np.array([np.average(self.loss(yp, p), weights=weights) for p in predictions]).reshape(R, K)
            truth_se[:] = 0.0 if not getattr(self.population, "evaluation_is_sample", False) else np.array(
                [np.std(self.loss(yp, p), ddof=1) / np.sqrt(len(yp)) for p in predictions]).reshape(R, K)

    def _rule_truth(self, rules, truth: np.ndarray, truth_se: np.ndarray) -> bool:
        """Fill ``truth`` with the exact 0-1 risks of a batch of linear rules when the population
        has them in closed form (``linear_rule_risks(w, b)``); False otherwise."""
        from simstudy.populations.conditional import builtin_loss_name

        rule_risks = getattr(self.population, "linear_rule_risks", None)
        if not callable(rule_risks) or builtin_loss_name(self.loss) != "zero_one":
            return False
        p = rules.w.shape[-1]
        truth[:] = np.asarray(rule_risks(rules.w.reshape(-1, p), rules.b.reshape(-1))).reshape(truth.shape)
        truth_se[:] = 0.0
        return True

    def _compute(self, cond: SizeCondition, chunk: Chunk, ordered: np.ndarray, truth: np.ndarray,
                 truth_se: np.ndarray) -> list[str]:
        """Fill ``ordered`` (losses fold by fold), ``truth`` and ``truth_se``; returns the error text of each replicate."""
        if callable(getattr(self.learner, "cross_validate_batch", None)):
            try:
                self.batched_chunk(cond, chunk, ordered, truth, truth_se)
                return [""] * chunk.size
            except Exception:  # find the failing replicates one by one; the others still count
                if self.on_error == "raise":
                    raise
                ordered[:], truth[:], truth_se[:] = np.nan, np.nan, np.nan
        with learners_context([self.learner] if self.learner is not None else []):
            results, errors = map_replicates(lambda r: self.replicate(cond, r), range(chunk.start, chunk.stop),
                                             self.on_error, cond, "cv_variance")
        for j, res in enumerate(results):
            if res is not None:
                ordered[j], truth[j], truth_se[j] = res
        return errors

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        R = chunk.size
        sizes = KFold(cond.K).sizes(cond.n)
        fold_of = np.repeat(np.arange(cond.K), sizes)       # the layout of ``ordered``'s columns
        ordered = np.full((R, cond.n), np.nan)
        truth = np.full((R, cond.K), np.nan)  # stays NaN unless the truth is computed
        truth_se = np.full((R, cond.K), np.nan)
        errors = self._compute(cond, chunk, ordered, truth, truth_se)
        equal = bool(np.all(sizes == sizes[0]))
        if equal:   # the (K, m) blocks of the paper: mu_hat is the mean of the fold means
            blocks = ordered.reshape(R, cond.K, cond.m)
            est = variance_estimates_from_blocks(blocks)
            fold_means = blocks.mean(axis=-1)
            mu_hat, true_error = fold_means.mean(axis=-1), truth.mean(axis=-1)
        else:       # size-weighted: the mean of the n losses, and the matching target
            est = variance_estimates(ordered, fold_of)
            fold_means = np.stack([ordered[:, fold_of == k].mean(axis=-1) for k in range(cond.K)], axis=-1)
            mu_hat, true_error = ordered.mean(axis=-1), truth @ sizes / cond.n
        frame = pd.DataFrame({
            "n": cond.n, "K": cond.K, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop),
            "mu_hat": mu_hat,
            **{name: getattr(est, name) for name in THETAS},
            "fold_means": list(fold_means),
        })
        if self.truth or isinstance(self.population, ResidualPopulation):
            frame["true_error"] = true_error
            frame["fold_true_errors"] = list(truth)
            if self.truth and np.any(truth_se > 0):
                # Monte Carlo error of the truth (a large fixed sample of an infinite population): the
                # size-weighted mean of the fold models' errors, an upper bound for that of
                # true_error since the K risks are computed on the same evaluation sample
                frame["true_error_mc_se"] = truth_se @ sizes / cond.n
        frame["error"] = errors
        return frame
