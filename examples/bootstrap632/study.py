"""The .632+ bootstrap (Efron & Tibshirani 1997) against 10-fold CV and LOO, as a simstudy study."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

import numpy as np
import pandas as pd

from simstudy.cv.loop import cross_validate, score
from simstudy.cv.splits import KFold
from simstudy.populations.truth import missing_truth, model_risks
from simstudy.rng import replicate_rng
from simstudy.studies.base import (Phase, Study, StudyConfig, StudyTables, extent, fail, replicate_records,
                                   size_conditions, validate_sizes)


@dataclass
class Bootstrap632Config(StudyConfig):
    name: str = "bootstrap632"
    sizes: List[int] = extent(default_factory=lambda: [20, 40])
    replicates: int = extent(200)
    K: int = 10
    bootstrap: int = 20
    seed: int = 632
    loss: Any = "zero_one"

    def validate(self) -> None:
        validate_sizes(self.sizes, self.K, 1)
        if self.bootstrap < 2:
            fail("study.bootstrap", self.bootstrap, "use at least 2 bootstrap resamples.")


def boot632plus(learner, state, y, loss, full, B, rng) -> float:
    """Efron & Tibshirani's .632+ estimate from B bootstrap resamples; ``full`` fits all n rows."""
    n, everyone = len(y), np.arange(len(y))
    pred, err = learner.predict(state, full, everyone), score(learner, state, full, everyone, y, loss).mean()
    sums, counts = np.zeros(n), np.zeros(n)
    for _ in range(B):
        rows = rng.integers(0, n, n)
        out = np.setdiff1d(everyone, rows)
        if out.size:
            sums[out] += score(learner, state, learner.fit(state, rows, rng), out, y, loss)
            counts[out] += 1
    gamma = loss(np.repeat(y, n), np.tile(pred, n)).mean()                  # no-information error
    err1 = min(np.mean(sums[counts > 0] / counts[counts > 0]), gamma)
    rel = (err1 - err) / (gamma - err) if err1 > err and gamma > err else 0.0   # relative overfitting
    w = 0.632 / (1 - 0.368 * rel)
    return (1 - w) * err + w * err1


class Bootstrap632Study(Study):
    name = "bootstrap632"
    description = "the .632+ bootstrap against 10-fold CV and leave-one-out"
    Config = Bootstrap632Config
    uses = ("population", "learner")

    def check(self) -> None:
        why = missing_truth(self.population, self.learner)
        if why:
            fail("population", self.population.name, why)

    def phases(self, on_error: str = "record") -> list[Phase]:
        self.conditions = size_conditions(self.name, self.config.sizes, self.config.K, self.population)
        self.on_error = on_error
        return [Phase("replicates", self.conditions, [self.config.replicates] * len(self.conditions), self.chunk)]

    def replicate(self, cond, r: int) -> dict:
        rng = replicate_rng(self.config.seed, cond.key, r)
        sample = self.population.sample(cond.n, rng)
        learner, state, y, everyone = self.learner, self.learner.start(sample), sample.y, np.arange(cond.n)
        full = learner.fit(state, everyone, rng)
        loo = self.loss(y, cross_validate(learner, state, everyone, cond.n, rng).predictions).mean()
        labels = KFold(cond.K).labels(cond.n, rng)
        kfold = self.loss(y, cross_validate(learner, state, labels, cond.K, rng).predictions).mean()
        boot = boot632plus(learner, state, y, self.loss, full, self.config.bootstrap, rng)
        truth = model_risks(learner, [full], self.population, self.loss)[0]
        return {"true_risk": truth, "loo": loo, "kfold": kfold, "boot632plus": boot}

    def chunk(self, chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        return replicate_records(lambda r: self.replicate(cond, r), chunk, cond, self.on_error, self.name,
                                 ["true_risk", "loo", "kfold", "boot632plus"])

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        ok = records["replicates"].query("error == ''")
        rows = [{"n": n, "estimate": e, "bias": (g[e] - g.true_risk).mean(), "rmse": np.sqrt(((g[e] - g.true_risk)
                 ** 2).mean()), "bias_se": (g[e] - g.true_risk).std(ddof=1) / np.sqrt(len(g)), "replicates": len(g)}
                for n, g in ok.groupby("n") for e in ("loo", "kfold", "boot632plus")]
        return StudyTables(pd.DataFrame(rows))

    def headline(self, tables: StudyTables) -> str:
        return "bootstrap632: bias and RMSE of each estimate\n" + tables.summary.round(4).to_string(index=False)
