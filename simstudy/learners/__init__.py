"""Learners: turn a training sample into fitted models and residuals."""
from __future__ import annotations

import logging

from simstudy.learners.cart import CartLearner, supported_tree_params
from simstudy.learners.linear import BatchedLDA, BatchedRidge, batched_linear_learner
from simstudy.learners.sklearn import ConstantClassifier, SklearnLearner

__all__ = ["BatchedLDA", "BatchedRidge", "CartLearner", "ConstantClassifier", "SklearnLearner", "build_learner",
           "fast_kernel"]

log = logging.getLogger("simstudy")
ENGINES = ("auto", "numba", "sklearn")


def fast_kernel(estimator, name: str = "learner"):
    """The fast kernel reproducing a scikit-learn estimator: ``(learner, "")``, or
    ``(None, reason)`` when none does (the numba CART for trees, batched linear kernels for
    RidgeClassifier and LDA with the lsqr solver)."""
    ok, why_tree = supported_tree_params(estimator)
    if ok:
        return CartLearner(estimator, name=name), ""
    batched, why_linear = batched_linear_learner(estimator, name)
    if batched is not None:
        return batched, ""
    return None, why_tree if "Tree" in type(estimator).__name__ else why_linear


def build_learner(cfg):
    """Instantiate the learner described by a ``learner`` config node.

    ``learner.engine``: ``"auto"`` (default) uses a fast kernel when one reproduces the
    estimator (simstudy's numba CART for ``DecisionTreeClassifier``, the batched linear kernels
    for ``RidgeClassifier`` and ``LinearDiscriminantAnalysis(solver="lsqr"|"eigen")``) and
    scikit-learn otherwise (saying so once in the log); ``"numba"`` requires a fast kernel;
    ``"sklearn"`` always uses scikit-learn.
    """
    sk = SklearnLearner.from_config(cfg)
    engine = cfg.get("engine", "auto")
    if engine == "sklearn":
        return sk
    kernel, why = fast_kernel(sk.template, sk.name)
    if kernel is not None:
        return kernel
    if engine == "numba":
        raise ValueError(f"learner.engine=numba: no fast kernel reproduces this estimator ({why}); "
                         "use learner.engine=auto or sklearn.")
    if type(sk.template).__name__ in ("DecisionTreeClassifier", "RidgeClassifier", "LinearDiscriminantAnalysis"):
        log.info("learner %s: no fast kernel reproduces these settings (%s); using scikit-learn", sk.name, why)
    return sk
