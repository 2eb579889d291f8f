"""
Your own study
==============

A study is a :class:`simstudy.Study` subclass: a config dataclass (its settings, each with a
role), ``phases()`` (the conditions and a worker that turns a chunk of replicates into records)
and ``aggregate()`` (records to tables); ``figures()`` and ``headline()`` are optional. The
engine does the rest: validation, seeds, chunks, parallelism, failures, shards, files.

This one asks how biased leave-one-out and 10-fold CV are for the true risk of the model
trained on all n points, with a tree on two Gaussian classes (``examples/custom_population.py``,
whose large evaluation sample gives every model's risk).
"""

# %%
from dataclasses import dataclass
from typing import Any, List

import numpy as np
import pandas as pd

import simstudy
from examples.custom_population import TwoGaussians
from simstudy.rng import replicate_rng
from simstudy.populations.truth import model_risks
from simstudy.studies.base import (Phase, Study, StudyConfig, StudyTables, extent, replicate_records,
                                   size_conditions, validate_sizes)


@dataclass
class LooVsKFoldConfig(StudyConfig):
    name: str = "loo_vs_kfold"
    #: Training-set sizes n.
    sizes: List[int] = extent(default_factory=lambda: [20, 40])
    #: Training sets per size.
    replicates: int = extent(100)
    #: Folds of the K-fold estimate.
    K: int = 10
    #: Base seed.
    seed: int = 1
    #: Loss of the estimates (a name or a function of (y, y_hat)).
    loss: Any = "zero_one"

    def validate(self):
        validate_sizes(self.sizes, self.K, 1)


class LooVsKFold(Study):
    name = "loo_vs_kfold"
    description = "bias of leave-one-out and K-fold CV for the risk of the full-sample model"
    Config = LooVsKFoldConfig
    uses = ("population", "learner")

    def phases(self, on_error="record"):
        self.conditions = size_conditions(self.name, self.config.sizes, self.config.K, self.population)
        self.on_error = on_error
        return [Phase("replicates", self.conditions, [self.config.replicates] * len(self.conditions), self.chunk)]

    def replicate(self, cond, r):
        rng = replicate_rng(self.config.seed, cond.key, r)      # the replicate's own random stream
        sample = self.population.sample(cond.n, rng)
        learner, state, y = self.learner, self.learner.start(sample), sample.y
        everyone = np.arange(cond.n)

        def cv(labels, K):                                        # out-of-fold predictions of one split
            predicted = np.empty(cond.n, dtype=y.dtype)
            for k in range(K):
                train, test = everyone[labels != k], everyone[labels == k]
                predicted[test] = learner.predict(state, learner.fit(state, train, rng), test)
            return self.loss(y, predicted).mean()

        full = learner.fit(state, everyone, rng)
        risk = model_risks(learner, [full], self.population, self.loss)[0]
        return {"true_risk": risk, "loo": cv(everyone, cond.n), "kfold": cv(rng.permutation(cond.n) % cond.K, cond.K)}

    def chunk(self, chunk):
        cond = self.conditions[chunk.condition]
        return replicate_records(lambda r: self.replicate(cond, r), chunk, cond, self.on_error, self.name,
                                 ["true_risk", "loo", "kfold"])

    def aggregate(self, records):
        ok = records["replicates"].query("error == ''")
        rows = [{"n": n, "estimate": e, "bias": (g[e] - g.true_risk).mean(),
                 "bias_se": (g[e] - g.true_risk).std(ddof=1) / np.sqrt(len(g)), "replicates": len(g)}
                for n, g in ok.groupby("n") for e in ("loo", "kfold")]
        return StudyTables(pd.DataFrame(rows))

    def headline(self, tables):
        return "bias of each estimate for the full-sample model's risk\n" + tables.summary.round(4).to_string(index=False)


# %%
# Run it like any registered study (or register it: ``simstudy.STUDIES.register(...)``).
res = simstudy.run_study(LooVsKFold, population=TwoGaussians(shift=1.0, evaluation_size=20_000), learner="tree",
                         sizes=[20, 40], replicates=60, n_jobs=1, progress=False)
print(res.headline())

# %%
# The bias of each estimate with its 95% Monte Carlo interval (±1.96 SE).
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 3.5))
for offset, (estimate, rows) in zip((-0.6, 0.6), res.summary.groupby("estimate")):
    ax.errorbar(rows["n"] + offset, rows["bias"], yerr=1.96 * rows["bias_se"], marker="o", capsize=3, label=estimate)
ax.axhline(0, color="k", lw=0.8)
ax.set_xticks(res.summary["n"].unique())
ax.set_xlabel("training-set size n")
ax.set_ylabel("mean estimate - true risk")
ax.legend()
fig.tight_layout()

# %%
# The records are one row per training set; the summary is the study's own table.
res.records.head()
