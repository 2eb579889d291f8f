"""What one replicate of the cv_clt study records, for every learner and comparison.

Per replicate (a training set of size n drawn from a finite population) and per learner:

- K-fold CV: per-point losses e_i, the CV estimate R_hat, the all-pairs and within-fold
  standard deviations, the K fold means, the hold-out statistics of fold 1 (the model trained on
  the other K-1 folds, tested on fold 1) with that model's true risk Err(f_{-1})
  (``target_holdout``: the hold-out interval's own target), and the true risk of each fold
  model: the target R_n = (1/n) sum_k m_k Err(f_{-k}) (Bayle et al.'s k-fold test error;
  (1/K) sum_k Err(f_{-k}) with equal folds; folds of floor(n/K) or ceil(n/K) examples m_k
  otherwise);
- the true risk of the model trained on all n points, Err_XY (the target of nested CV);
- Dietterich's 5x2 design (5 random halvings, 10 fits), J repeated train/validation splits
  with n_test = n/K (the design of the repeated and Nadeau-Bengio corrected t);
- nested CV (Bates, Hastie & Tibshirani 2023) on the first ``nested_cv_replicates`` replicates.

For a comparison "A vs B", the same statistics are computed on the loss differences
e_i(A) - e_i(B) of the two learners on the same splits, with target R_n(A) - R_n(B). When A and
B are the same learner, B is fitted with an independent random stream (e.g. the tree's random
tie-breaking), so the pair has equal expected error by construction: the tests' size.

Learners and comparisons are the phase's *subjects*: a chunk computes the subjects it is
asked for (all of them in a fresh run; only new ones when a run is extended), fitting each
learner variant they need once per replicate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simstudy.cv.checks import scored_losses
from simstudy.cv.loop import cross_validate, nested_cv_losses, split_losses
from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits
from simstudy.inference import cv_clt_sigma, nested_cv_interval
from simstudy.learners.base import learners_context
from simstudy.populations.truth import true_risks
from simstudy.rng import condition_key, replicate_rng
from simstudy.studies.base import Chunk, SizeCondition, map_replicates
from simstudy.populations.checks import draw_sample

__all__ = ["CVCLTWorker", "comparison_label", "self_pair"]


def self_pair(a: str, b: str) -> bool:
    """A comparison of a learner with itself (under an independent fitting seed)."""
    return a == b


def comparison_label(a: str, b: str) -> str:
    """The subject name of the comparison "A vs B"."""
    return f"{a} vs {b} (independent seed)" if self_pair(a, b) else f"{a} vs {b}"


@dataclass
class _Fits:
    """Everything one learner variant produced on one replicate."""

    cv_losses: np.ndarray        # (n,) losses in sample order
    fold_truth: np.ndarray       # (K,)
    fold_truth_se: np.ndarray    # (K,) Monte Carlo error of fold_truth (0: exact)
    full_truth: float
    five_by_two: np.ndarray      # (5, 2) mean losses
    tv_rates: np.ndarray         # (J,)
    nested: tuple[float, float]  # (estimate, se) or NaNs


@dataclass
class CVCLTWorker:
    """Runs the replicates of one chunk for the chunk's subjects (picklable)."""

    population: Any
    learners: dict[str, Any]
    loss: Any
    conditions: list[SizeCondition]
    comparisons: list[tuple[str, str]]
    seed: int
    repeated_splits: int
    nested_cv_replicates: int
    nested_cv_repetitions: int
    on_error: str = "record"
    nested_cv_method: str = "paper"

    @property
    def subjects(self) -> tuple[str, ...]:
        """Learners, then comparisons: the order of a replicate's rows."""
        return tuple(self.learners) + tuple(comparison_label(a, b) for a, b in self.comparisons)

    def _variants(self, subjects: tuple[str, ...]) -> list[tuple[str, int]]:
        """(learner, copy) fits the subjects need; copy 1 is the independent-seed twin of a self-comparison."""
        out = [(name, 0) for name in self.learners if name in subjects]
        for a, b in self.comparisons:
            if comparison_label(a, b) in subjects:
                for variant in ((a, 0), (b, 1 if self_pair(a, b) else 0)):
                    if variant not in out:
                        out.append(variant)
        order = {name: i for i, name in enumerate(self.learners)}
        return sorted(out, key=lambda v: (v[1], order[v[0]]))

    def _nested(self, learner, state, y, labels, losses, cond: SizeCondition, r: int, fit_rng) -> tuple[float, float]:
        n, K = cond.n, cond.K

        def fit_splits(trains, tests):
            return split_losses(learner, state, y, self.loss, tests, fit_rng, trains)

        nested_rng = replicate_rng(self.seed, condition_key({"condition": cond.key, "nested_cv": True}), r)
        res = nested_cv_losses(None, n, K, self.nested_cv_repetitions, nested_rng, first_labels=labels,
                               first_outer_losses=losses, many_losses=fit_splits)
        out = nested_cv_interval(res.pair_losses, res.outer_losses, method=self.nested_cv_method)
        return out.estimate, out.se

    def _fit_all(self, learner, sample, labels, halves, tv_test, cond: SizeCondition, r: int, fit_rng,
                 nested: bool) -> _Fits:
        """All fits of one learner variant on one replicate (the order of the random draws is part
        of the records: K-fold, full sample, 5x2, train/validation, nested CV)."""
        K = cond.K
        state = learner.start(sample)
        y = sample.y
        folds = cross_validate(learner, state, labels, K, fit_rng, keep_models=True, proba=self.loss.needs_proba)
        losses = scored_losses(self.loss, y, folds.predictions, folds.proba, getattr(self.population, "task", None))
        full = learner.fit(state, np.arange(cond.n), fit_rng)
        risks = true_risks(learner, list(folds.models) + [full], self.population, self.loss)
        truth = risks.values
        tests = [t for i in range(5) for t in (~halves[i], halves[i])]
        trains = [t for i in range(5) for t in (halves[i], ~halves[i])]
        fbt = np.array([e.mean() for e in split_losses(learner, state, y, self.loss, tests, fit_rng, trains)])
        tv = np.array([e.mean() for e in split_losses(learner, state, y, self.loss, list(tv_test), fit_rng)])
        stats = self._nested(learner, state, y, labels, losses, cond, r, fit_rng) if nested else (np.nan, np.nan)
        return _Fits(losses, truth[:K], risks.mc_se[:K], float(truth[K]), fbt.reshape(5, 2), tv, stats)

    def replicate(self, cond: SizeCondition, r: int, subjects: tuple[str, ...]) -> list[dict[str, Any]]:
        """One row per requested subject (learners first, then comparisons)."""
        n, K, m = cond.n, cond.K, cond.m
        rng = replicate_rng(self.seed, cond.key, r)            # sample and splits: shared by learners
        sample = draw_sample(self.population, n, rng)
        labels = KFold(K).labels(n, rng)
        halves = FiveByTwo().halves(n, rng)
        tv_test = RepeatedSplits(m, self.repeated_splits).test_masks(n, rng)
        fits = {}
        for name, copy in self._variants(subjects):
            fit_rng = replicate_rng(self.seed, condition_key({"condition": cond.key, "learner": name,
                                                             "copy": copy}), r)
            nested = copy == 0 and r < self.nested_cv_replicates
            fits[name, copy] = self._fit_all(self.learners[name], sample, labels, halves, tv_test, cond, r,
                                            fit_rng, nested)
        rows = []
        weights = KFold(K).sizes(n) / n                        # R_n = sum_k (m_k / n) Err(f_{-k})
        for name in self.learners:
            if name in subjects:
                f = fits[name, 0]
                rows.append(_row(name, "learner", f.cv_losses, labels, K, _target(f.fold_truth, weights),
                                 f.full_truth, f.five_by_two, f.tv_rates, f.nested, f.fold_truth[0],
                                 f.fold_truth_se @ weights))
        for a, b in self.comparisons:
            label = comparison_label(a, b)
            if label in subjects:
                fa, fb = fits[a, 0], fits[b, 1 if self_pair(a, b) else 0]
                rows.append(_row(label, "comparison", fa.cv_losses - fb.cv_losses, labels, K,
                                 _target(fa.fold_truth, weights) - _target(fb.fold_truth, weights),
                                 fa.full_truth - fb.full_truth, fa.five_by_two - fb.five_by_two,
                                 fa.tv_rates - fb.tv_rates, (np.nan, np.nan), fa.fold_truth[0] - fb.fold_truth[0],
                                 (fa.fold_truth_se + fb.fold_truth_se) @ weights))
        return rows

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        subjects = chunk.subjects or self.subjects
        wanted = [s for s in self.subjects if s in subjects]
        with learners_context(self.learners.values()):
            results, errors = map_replicates(lambda r: self.replicate(cond, r, subjects),
                                             range(chunk.start, chunk.stop), self.on_error, cond, "cv_clt")
        frames = []
        for r, rows, error in zip(range(chunk.start, chunk.stop), results, errors):
            if rows is None:
                rows = [{"subject": s, "kind": "learner" if s in self.learners else "comparison", "error": error}
                        for s in wanted]
            else:
                for row in rows:
                    row["error"] = ""
            for row in rows:
                row.update({"n": cond.n, "K": cond.K, "condition_key": cond.key, "replicate": r})
            frames.extend(rows)
        frame = pd.DataFrame(frames)
        front = ["n", "K", "condition_key", "replicate", "subject", "kind"]
        return frame[front + [c for c in frame.columns if c not in front]]


def _target(fold_truth: np.ndarray, weights: np.ndarray) -> float:
    """R_n from the fold models' risks: their mean with equal folds (the former computation,
    bit for bit), else the size-weighted mean."""
    if np.all(weights == weights[0]):
        return float(fold_truth.mean())
    return float(fold_truth @ weights)


def _row(subject, kind, e, labels, K, target, target_full, fbt, tv, nested, target_holdout,
         target_mc_se=0.0) -> dict[str, Any]:
    """Per-replicate statistics from which every interval and test is rebuilt.

    ``target_holdout`` is the exact error of the hold-out model (trained without fold 1, the
    model the hold-out interval is an interval for); ``target`` is R_n, ``target_full`` Err_XY.
    ``target_mc_se`` is the Monte Carlo error of ``target`` (an upper bound: the size-weighted
    mean of the fold risks' errors), 0 when the truth is exact; it is recorded only when > 0."""
    estimate, sigma_out = cv_clt_sigma(e, labels, "all-pairs")
    _, sigma_in = cv_clt_sigma(e, labels, "within-fold")
    fold_means = np.array([e[labels == k].mean() for k in range(K)])
    hold = e[labels == 0]
    return {"subject": subject, "kind": kind, "estimate": float(estimate), "sigma_out": float(sigma_out),
            "sigma_in": float(sigma_in), "fold_means": fold_means, "holdout_mean": float(hold.mean()),
            "holdout_se": float(hold.std(ddof=1) / np.sqrt(hold.size)), "five_by_two": fbt.ravel(),
            "tv_estimates": np.asarray(tv, dtype=float), "target": float(target), "target_full": float(target_full),
            "target_holdout": float(target_holdout),
            "nested_estimate": float(nested[0]), "nested_se": float(nested[1]),
            **({"target_mc_se": float(target_mc_se)} if target_mc_se > 0 else {})}
