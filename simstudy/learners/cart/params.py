"""Which scikit-learn tree settings the numba CART reproduces, and its tie rules."""
from __future__ import annotations

import numpy as np

__all__ = ["TIE_RULES", "TREE_CLASS_PATHS", "supported_tree_params", "supported_tree_settings"]

_DEFAULTS = {"splitter": "best", "max_features": None, "max_leaf_nodes": None, "min_impurity_decrease": 0.0,
             "class_weight": None, "ccp_alpha": 0.0, "min_weight_fraction_leaf": 0.0, "monotonic_cst": None}


#: The class paths of scikit-learn's DecisionTreeClassifier (the public one and where it is defined).
TREE_CLASS_PATHS = ("sklearn.tree.DecisionTreeClassifier", "sklearn.tree._classes.DecisionTreeClassifier")


def supported_tree_params(estimator) -> tuple[bool, str]:
    """Whether :class:`CartLearner` reproduces this scikit-learn estimator, and why not."""
    from sklearn.tree import DecisionTreeClassifier

    if type(estimator) is not DecisionTreeClassifier:
        return False, f"{type(estimator).__name__} is not sklearn.tree.DecisionTreeClassifier"
    return supported_tree_settings(estimator.get_params(deep=False))


def supported_tree_settings(params: dict) -> tuple[bool, str]:
    """Whether :class:`CartLearner` reproduces a DecisionTreeClassifier with these parameters
    (its ``get_params(deep=False)``), and why not; needs no scikit-learn."""
    if params["criterion"] not in ("gini", "entropy", "log_loss"):
        return False, f"criterion={params['criterion']!r}"
    for key, default in _DEFAULTS.items():
        if key in params and params[key] != default:
            return False, f"{key}={params[key]!r} (only {default!r} is reproduced)"
    for key in ("min_samples_split", "min_samples_leaf"):
        if not isinstance(params[key], (int, np.integer)):
            return False, f"{key}={params[key]!r} (fractions are not reproduced)"
    return True, ""


#: How the numba CART chooses among features whose best splits tie (the same proxy, exactly):
#: "draw" scans the features in a fixed order and draws one of the tied features uniformly (a
#: random number only where there is a tie); "shuffle" scans them in a uniformly random order
#: drawn at every node and keeps the first (scikit-learn's scheme). Both choose uniformly among
#: the tied features, so the distribution of trees is the same; the random streams differ.
TIE_RULES = ("draw", "shuffle")
