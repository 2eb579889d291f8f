"""Config schema of the ``learner`` group and its presets (:data:`simstudy.registry.LEARNERS`).

A learner is a scikit-learn estimator given by ``estimator._target_`` and its parameters, run
by the fastest engine that reproduces it (``engine``), or a user's own learner object
(``learner=custom learner._target_=package.module.Class``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict

from omegaconf import MISSING

__all__ = ["LearnerConfig", "TREE", "RIDGE", "LDA", "LOGISTIC_REGRESSION", "KNN", "RANDOM_FOREST", "CUSTOM",
           "OLS", "RIDGE_REGRESSOR", "TREE_REGRESSOR", "KNN_REGRESSOR", "GRADIENT_BOOSTING",
           "GRADIENT_BOOSTING_REGRESSOR", "RANDOM_FOREST_REGRESSOR"]


@dataclass
class LearnerConfig:
    """A scikit-learn estimator given by ``estimator._target_`` and its parameters."""

    name: str = MISSING
    estimator: Dict[str, Any] = field(default_factory=dict)
    #: Use ``check_input=False`` fits/predictions where the estimator supports them.
    fast_path: bool = True
    #: "auto": a simstudy kernel when one reproduces the estimator (numba CART, batched linear
    #: models, logistic regression, population k-NN), else scikit-learn; "numba": require a
    #: kernel; "sklearn": never.
    engine: str = "auto"
    #: The numba CART's tie rule between equally good features: "draw" (one uniform draw among
    #: the tied features) or "shuffle" (a random feature order at every node, scikit-learn's
    #: scheme). The same tree distribution, other random streams.
    ties: str = "draw"


def _preset(name: str, target: str, **params: Any) -> LearnerConfig:
    return LearnerConfig(name=name, estimator={"_target_": target, **params})


TREE = _preset("tree", "sklearn.tree.DecisionTreeClassifier")
RIDGE = _preset("ridge", "sklearn.linear_model.RidgeClassifier", alpha=1.0)
LDA = _preset("lda", "sklearn.discriminant_analysis.LinearDiscriminantAnalysis", solver="lsqr")
#: newton-cholesky: the compiled Newton kernel reproduces scikit-learn's fits with this solver
#: (:mod:`simstudy.learners.logistic`); with lbfgs (scikit-learn's default) every fit is scikit-learn's.
LOGISTIC_REGRESSION = _preset("logreg", "sklearn.linear_model.LogisticRegression", max_iter=1000,
                              solver="newton-cholesky")
KNN = _preset("knn", "sklearn.neighbors.KNeighborsClassifier", n_neighbors=5)
RANDOM_FOREST = _preset("random_forest", "sklearn.ensemble.RandomForestClassifier", n_estimators=100, n_jobs=1)
# regressors: ols and ridge_regressor by scikit-learn's own least squares (sklearn_linear.py; exact truth
# on gaussian_linear), knn_regressor by the sample k-NN (knn_regression.py), tree_regressor by scikit-learn
OLS = _preset("ols", "sklearn.linear_model.LinearRegression")
RIDGE_REGRESSOR = _preset("ridge_regressor", "sklearn.linear_model.Ridge", alpha=1.0)
TREE_REGRESSOR = _preset("tree_regressor", "sklearn.tree.DecisionTreeRegressor")
KNN_REGRESSOR = _preset("knn_regressor", "sklearn.neighbors.KNeighborsRegressor", n_neighbors=5)
# the benchmark's ensembles, by scikit-learn: gradient boosting small enough for thousands of replicates (50
# rounds of trees with at most 15 leaves, no early stopping: no internal validation split) and a random forest
# regressor of 50 trees
GRADIENT_BOOSTING = _preset("gradient_boosting", "sklearn.ensemble.HistGradientBoostingClassifier", max_iter=50,
                            max_leaf_nodes=15, early_stopping=False)
GRADIENT_BOOSTING_REGRESSOR = _preset("gradient_boosting_regressor", "sklearn.ensemble.HistGradientBoostingRegressor",
                                      max_iter=50, max_leaf_nodes=15, early_stopping=False)
RANDOM_FOREST_REGRESSOR = _preset("random_forest_regressor", "sklearn.ensemble.RandomForestRegressor", n_estimators=50,
                                  n_jobs=1)
#: A user's learner object: ``learner=custom learner._target_=package.module.Class``.
CUSTOM: dict[str, Any] = {"name": "custom", "_target_": MISSING}
