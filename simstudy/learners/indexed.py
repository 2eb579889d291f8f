"""One interface for studies that fit many models on subsets of one sample and need each
model's exact error on a finite population: ``start(sample)``, ``fit(state, positions, rng)``,
``losses(state, model, positions)`` and ``population_errors(models)``.

Positions index the rows of the sample (0..n-1). The adapters keep each learner's fast
path: the numba CART ranks a sample's features once and fits folds on row subsets; the
population k-NN works on population row indices; scikit-learn learners fit clones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.learners import build_learner
from simstudy.learners.knn import PopulationKNN, supported_knn_params

__all__ = ["SampleFitter", "KnnSampleFitter", "build_sample_fitter"]


@dataclass
class SampleFitter:
    """Adapter for :class:`~simstudy.learners.SklearnLearner` and :class:`~simstudy.learners.CartLearner`."""

    learner: Any
    population: Any

    @property
    def name(self) -> str:
        return self.learner.name

    def describe(self) -> dict[str, Any]:
        return self.learner.describe()

    def start(self, sample):
        return self.learner.prepare(sample.X), sample.y

    def fit(self, state, positions: np.ndarray, rng: np.random.Generator):
        X, y = state
        return self.learner.fit(X[positions], y[positions], rng)

    def losses(self, state, model, positions: np.ndarray) -> np.ndarray:
        X, y = state
        return (self.learner.predict(model, X[positions]) != y[positions]).astype(float)

    def population_errors(self, models: list) -> np.ndarray:
        pop = self.population
        X = pop.features(self.learner.dtype)
        if hasattr(self.learner, "errors_on"):
            return np.asarray(self.learner.errors_on(models, X, pop.y), dtype=float)
        return np.array([np.mean(self.learner.predict(m, X) != pop.y) for m in models])


@dataclass
class KnnSampleFitter:
    """Adapter for :class:`~simstudy.learners.knn.PopulationKNN` (samples must carry row indices)."""

    knn: PopulationKNN

    @property
    def name(self) -> str:
        return self.knn.name

    def describe(self) -> dict[str, Any]:
        return self.knn.describe()

    def start(self, sample):
        if sample.index is None:
            raise ValueError("the population k-NN needs samples drawn from a finite population (row indices).")
        return sample.index

    def fit(self, rows, positions: np.ndarray, rng: np.random.Generator):
        return self.knn.fit_rows(rows[positions])

    def losses(self, rows, model, positions: np.ndarray) -> np.ndarray:
        query = rows[positions]
        return (self.knn.predict_rows(model, query) != self.knn.y[query]).astype(float)

    def population_errors(self, models: list) -> np.ndarray:
        return self.knn.population_errors(models)


def build_sample_fitter(name: str, estimator_spec: dict, population, engine: str = "auto"):
    """The fastest exact adapter for a learner given as ``{_target_: ..., params}``.

    k-NN with uniform weights and Euclidean distance on a finite population uses
    :class:`~simstudy.learners.knn.PopulationKNN`; everything else goes through
    :func:`~simstudy.learners.build_learner` (numba CART for trees, scikit-learn otherwise).
    """
    learner = build_learner({"name": name, "estimator": dict(estimator_spec), "engine": engine})
    template = getattr(learner, "template", None)
    if engine != "sklearn" and template is not None and supported_knn_params(template)[0] \
            and hasattr(population, "y") and hasattr(population, "X"):
        return KnnSampleFitter(PopulationKNN(template, population.X, population.y, name=name))
    return SampleFitter(learner, population)
