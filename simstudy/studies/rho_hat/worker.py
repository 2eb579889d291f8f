"""What one replicate of the rho_hat study records.

Per replicate (one training set D of size n drawn from the population, random streams from
the condition and the replicate number):

- K-fold CV of the learner on D: the fold means, mu_hat and the CV CLT all-pairs sigma;
- K-fold CV re-run on both halves of B random splits of D into disjoint halves
  (:func:`simstudy.inference.subsample_cv`): each half's mu_hat and theta3 (flattened, split
  by split), from which every subsample estimator is rebuilt at aggregation;
- nested CV (Bates, Hastie & Tibshirani) on the first ``nested_cv_replicates`` replicates.

The residual population gaussian_folds is run through its example-level model
(:meth:`~simstudy.populations.synthetic.GaussianFoldsPopulation.draw_examples`: rho known
exactly at every size, no learner); nested CV is not defined there (recorded as NaN).

Streams: D and its fold assignment come from ``replicate_rng(seed, condition, r)`` (the
learner's fits follow on it, as in cv_variance); the subsamples and their fold assignments
from a stream keyed by (condition, "subsamples"); nested CV from (condition, "nested_cv").
Changing B or adding nested CV therefore leaves the other records unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simstudy.cv.checks import scored_losses
from simstudy.cv.loop import cross_validate, nested_cv_losses, split_losses
from simstudy.cv.splits import KFold
from simstudy.inference import cv_clt_sigma, nested_cv_interval, subsample_cv
from simstudy.learners.base import learners_context
from simstudy.populations.base import ResidualPopulation, Sample
from simstudy.rng import condition_key, replicate_rng
from simstudy.studies.base import Chunk, SizeCondition, replicate_records
from simstudy.populations.checks import draw_sample

__all__ = ["RhoHatWorker", "fold_means_of"]


def fold_means_of(losses: np.ndarray, labels: np.ndarray, K: int) -> np.ndarray:
    """Mean loss of each fold 0..K-1."""
    return np.bincount(labels, losses, K) / np.bincount(labels, minlength=K)


def _subset(sample: Sample, rows: np.ndarray) -> Sample:
    return Sample(sample.X[rows], sample.y[rows], None if sample.index is None else sample.index[rows])


@dataclass
class RhoHatWorker:
    """Runs the replicates of one chunk (picklable)."""

    population: Any
    learner: Any
    loss: Any
    conditions: list[SizeCondition]
    seed: int
    splits: int
    nested_cv_replicates: int
    nested_cv_repetitions: int
    on_error: str = "record"

    def _stream(self, cond: SizeCondition, what: str, r: int) -> np.random.Generator:
        return replicate_rng(self.seed, condition_key({"condition": cond.key, "stream": what}), r)

    def _residual_replicate(self, cond: SizeCondition, r: int) -> dict[str, Any]:
        pop, K = self.population, cond.K
        rng = replicate_rng(self.seed, cond.key, r)
        examples = pop.draw_examples(cond.n, rng)

        def cv(rows, g):
            return fold_means_of(pop.subset_residuals(examples, rows), KFold(K).labels(len(rows), g), K)

        labels = KFold(K).labels(cond.n, rng)
        losses = pop.subset_residuals(examples, np.arange(cond.n))
        sub = subsample_cv(cv, cond.n, K, self.splits, self._stream(cond, "subsamples", r))
        return self._row(losses, labels, K, sub, (np.nan, np.nan))

    def _learner_cv(self, sample: Sample, labels: np.ndarray, K: int, rng, state: Any = None
                    ) -> tuple[Any, np.ndarray]:
        """K-fold CV of the learner on ``sample`` (prepared by ``learner.start`` unless ``state`` is given)."""
        state = self.learner.start(sample) if state is None else state
        folds = cross_validate(self.learner, state, labels, K, rng, proba=self.loss.needs_proba)
        task = getattr(self.population, "task", None)
        return state, scored_losses(self.loss, sample.y, folds.predictions, folds.proba, task)

    def _nested(self, state, y, labels, losses, n: int, K: int, rng) -> tuple[float, float]:
        def fit_splits(trains, tests):
            return split_losses(self.learner, state, y, self.loss, tests, rng, trains)

        res = nested_cv_losses(None, n, K, self.nested_cv_repetitions, rng, first_labels=labels,
                               first_outer_losses=losses, many_losses=fit_splits)
        out = nested_cv_interval(res.pair_losses, res.outer_losses)
        return float(out.estimate), float(out.se)

    def analyse(self, sample: Sample, labels: np.ndarray, K: int, rng: np.random.Generator,
                sub_rng: np.random.Generator, nested_rng: np.random.Generator | None) -> dict[str, Any]:
        """The records of one training sample: K-fold CV with ``labels`` (fits from ``rng``), the
        subsample CVs (``sub_rng``) and, when ``nested_rng`` is given, nested CV. Also used by
        :func:`simstudy.audit.audit` on the user's own data (any n, folds of unequal sizes)."""
        state, losses = self._learner_cv(sample, labels, K, rng)
        start_subset = getattr(self.learner, "start_subset", None)   # the halves reuse the sample's preparation

        def cv(rows, g):
            sub_labels = KFold(K).labels(len(rows), g)
            half = None if start_subset is None else start_subset(state, rows)
            return fold_means_of(self._learner_cv(_subset(sample, rows), sub_labels, K, g, half)[1], sub_labels, K)

        n = len(labels)
        sub = subsample_cv(cv, n, K, self.splits, sub_rng)
        nested = (np.nan, np.nan) if nested_rng is None else self._nested(state, sample.y, labels, losses, n, K,
                                                                           nested_rng)
        return self._row(losses, labels, K, sub, nested)

    def replicate(self, cond: SizeCondition, r: int) -> dict[str, Any]:
        """The records of replicate r of condition ``cond``."""
        if isinstance(self.population, ResidualPopulation):
            return self._residual_replicate(cond, r)
        rng = replicate_rng(self.seed, cond.key, r)
        sample = draw_sample(self.population, cond.n, rng)
        labels = KFold(cond.K).labels(cond.n, rng)
        nested_rng = self._stream(cond, "nested_cv", r) if r < self.nested_cv_replicates else None
        return self.analyse(sample, labels, cond.K, rng, self._stream(cond, "subsamples", r), nested_rng)

    @staticmethod
    def _row(losses, labels, K, sub, nested) -> dict[str, Any]:
        fm = fold_means_of(losses, labels, K)
        mu_hat, sigma_out = cv_clt_sigma(losses, labels, "all-pairs")
        return {"mu_hat": float(mu_hat), "fold_means": fm, "sigma_out": float(sigma_out),
                "n_sub": int(sub.n_sub), "sub_mu_hats": np.asarray(sub.mu_hats, dtype=float).ravel(),
                "sub_theta3s": np.asarray(sub.theta3s, dtype=float).ravel(),
                "nested_estimate": nested[0], "nested_se": nested[1]}

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        with learners_context([self.learner] if self.learner is not None else []):
            return replicate_records(lambda r: self.replicate(cond, r), chunk, cond, self.on_error, "rho_hat",
                                     columns=["mu_hat", "fold_means", "sigma_out", "n_sub", "sub_mu_hats",
                                              "sub_theta3s", "nested_estimate", "nested_se"])
