"""Learners: turn a training sample into fitted models and residuals."""
from simstudy.learners.sklearn import ConstantClassifier, SklearnLearner

__all__ = ["ConstantClassifier", "SklearnLearner", "build_learner"]


def build_learner(cfg) -> SklearnLearner:
    """Instantiate the learner described by a ``learner`` config node."""
    return SklearnLearner.from_config(cfg)
