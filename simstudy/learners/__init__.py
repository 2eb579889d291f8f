"""Learners: turn training samples into fitted models.

The protocol is :mod:`.base`; :func:`build_learner` (:mod:`.dispatch`) picks the fastest
implementation of a learner given by name, estimator or config: :mod:`.sklearn` (any
scikit-learn estimator) or a compiled kernel, :mod:`.cart`, :mod:`.knn`, :mod:`.logistic`,
:mod:`.linear`. Names are imported on first use: the kernels load compiled code.
"""
from __future__ import annotations

import importlib
from typing import Any

from simstudy._deprecated import moved_attribute

_EXPORTS = {name: "simstudy.learners.dispatch" for name in (
    "ENGINES", "build_learner", "estimator_from_spec", "fast_kernel", "validate_learner_config")}
_EXPORTS.update({name: "simstudy.learners.base" for name in (
    "BatchFolds", "Folds", "Learner", "SampleArrays", "capabilities", "check_learner", "learners_context")})
_EXPORTS.update({name: "simstudy.learners.sklearn" for name in ("ConstantClassifier", "SklearnLearner")})
_EXPORTS["TIE_RULES"] = "simstudy.learners.cart.params"
_EXPORTS.update({"CartLearner": "simstudy.learners.cart", "BatchedRidge": "simstudy.learners.linear.batched",
                 "BatchedLDA": "simstudy.learners.linear.batched", "PopulationKNN": "simstudy.learners.knn.population",
                 "SampleKNNRegressor": "simstudy.learners.knn.regression",
                 "LogisticLearner": "simstudy.learners.logistic.learner"})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    return moved_attribute(__name__, name)
