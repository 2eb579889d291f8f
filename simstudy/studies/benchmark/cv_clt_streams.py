"""The cv_clt study's streams, for a benchmark that reproduces its intervals (``streams="cv_clt"``).

The cv_clt study (:mod:`simstudy.studies.cv_clt.worker`) draws, for replicate r of the condition
(n, K, population), from ``replicate_rng(seed, key, r)`` with key = hash of {"study": "cv_clt",
"n", "K", "population": population.seed_params()}: the sample, then the K-fold labels (then the
5x2 halvings and the train/validation splits, which it keeps to itself); each learner fits its K
fold models in fold order from ``replicate_rng(seed, hash of {"condition": key, "learner": name,
"copy": copy}, r)``. In this mode the benchmark draws its sample and its K = 10 fold plan the same
way and fits the K-fold design from that stream (the learner named as in the benchmark), so with
the cv_clt run's seed its K-fold procedures (``cv_clt_all_pairs``, ``cv_clt_within_fold``,
``kfold_t``, ``kfold_t_rho0.7``) give the cv_clt records' intervals and R_n. The other designs
keep their own streams (cv_clt's 5x2 and train/validation fits follow the K-fold fits on one
learner stream and its hold-out is fold 1 of the K-fold CV: not the benchmark's designs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.cv.splits import KFold
from simstudy.inference.procedures import KFoldDesign, SplitPlan
from simstudy.populations.checks import draw_sample
from simstudy.rng import condition_key, replicate_rng

__all__ = ["CV_CLT_K", "SharedPlan", "cv_clt_start"]

CV_CLT_K = 10


@dataclass
class SharedPlan:
    """The K-fold plan drawn on cv_clt's stream and the learner streams of its fits."""

    plan: SplitPlan
    key: str
    seed: int
    replicate: int

    def fit_rng(self, learner: str, copy: int) -> np.random.Generator:
        return replicate_rng(self.seed, condition_key({"condition": self.key, "learner": learner, "copy": copy}),
                             self.replicate)


def cv_clt_start(population: Any, n: int, seed: int, r: int) -> tuple[Any, SharedPlan]:
    """The sample and the K-fold plan of replicate r as the cv_clt study draws them."""
    from simstudy.studies.cv_clt.study import make_conditions

    key = make_conditions([n], CV_CLT_K, population)[0].key
    rng = replicate_rng(seed, key, r)
    sample = draw_sample(population, n, rng)
    labels = KFold(CV_CLT_K).labels(n, rng)
    test = labels[None, :] == np.arange(CV_CLT_K)[:, None]
    plan = SplitPlan(KFoldDesign(CV_CLT_K), n, (~test).astype(np.int64), test)
    return sample, SharedPlan(plan, key, int(seed), int(r))
