"""An exact CART classification tree in numba, a drop-in for scikit-learn's default tree.

It grows the same tree as ``sklearn.tree.DecisionTreeClassifier`` (splitter "best",
criterion "gini", "entropy" or "log_loss", any ``max_depth``, ``min_samples_split``,
``min_samples_leaf``, ``max_features=None``, no weights) much faster on the small training sets
of simulation studies:

- Each feature is ranked once per sample (its distinct values, sorted; training folds reuse the
  sample's ranks, where absent values are empty ranks); a node then
  finds its best split on that feature from class counts per rank, gathered in one pass
  (O(node size + number of distinct values)), or by sorting the node's ranks when the node is
  small compared with the number of distinct values. Both are exact.
- With at most 64 distinct values per feature (Letter has 16), a node's class counts per
  (class, rank, feature) live in a pool slot: a split builds the smaller child's counts from its
  samples and gets the larger child's by subtraction; for two-class Gini all features are
  scanned at once by a branch-free loop with the feature innermost (SIMD), other criteria
  feature by feature. Nodes of at most 4 samples sort their samples instead. In the one-call
  kernels a tree's root histogram is the sample's minus the rows the tree is not grown on.
- :func:`cross_validate_cart` grows the K fold trees of a sample and predicts the held-out
  folds in one compiled call (the trees of ``fit_cart`` on each training fold).
- Candidate thresholds, the split criterion and the stopping rules are scikit-learn's:
  threshold = midpoint of two consecutive distinct values (the lower value if the midpoint
  rounds up to the upper one), splits between values closer than 1e-7 are skipped, the Gini
  proxy sum_c n_{c,L}^2 / n_L + sum_c n_{c,R}^2 / n_R (entropy: -n_L H_L - n_R H_R, log base 2)
  is maximised, a node is a leaf when it has fewer than ``min_samples_split`` samples, fewer than
  ``2 min_samples_leaf``, impurity <= machine epsilon, reaches ``max_depth``, or has no valid
  split.
- Ties: features are visited in a uniformly random order drawn for every node (scikit-learn
  also visits them in a random order), thresholds of a feature in increasing order, and the
  first split with a strictly larger criterion wins. With continuous features (no exact ties)
  the tree is identical to scikit-learn's; with tied candidates (common on integer features
  such as Letter's) both pick uniformly random feature orders but from different random
  streams, so individual trees can differ while their distribution is the same (tested).
- Prediction: the majority class of the leaf, the lowest class index on ties (as ``argmax``).

Modules: ``criteria`` (what a node's class counts decide), ``ranking`` (features ranked once per
sample), ``splits`` (per-feature split scans), ``pool`` (histogram pool), ``grow`` (the grow
kernel, :func:`fit_cart`), ``crossval`` (:func:`cross_validate_cart`), ``tree`` (the fitted tree,
prediction), ``bitsets`` (exact errors on a population), ``params`` (which scikit-learn settings
are reproduced), ``adapter`` (:class:`CartLearner`).

numba's on-disk cache of a kernel is invalidated only by changes to the kernel's own file, not
to helpers it inlines from other modules: after editing one of these modules, delete
``simstudy/learners/cart/__pycache__`` before measuring or testing.
"""
from __future__ import annotations

import importlib

#: Names re-exported from the modules that define them, imported on first use: the ``simstudy``
#: command builds a :class:`CartLearner` before it forks its workers and never runs a kernel
#: itself, so its main process need not import numba.
_LAZY = {
    "CartLearner": "adapter", "PopulationBitsets": "bitsets", "population_errors": "bitsets",
    "CartFolds": "crossval", "cross_validate_cart": "crossval", "fit_cart": "grow",
    "supported_tree_params": "params", "RankedFeatures": "ranking", "CartTree": "tree", "predict_cart": "tree",
    # kernels the tests call directly
    "_GINI": "criteria", "_best_split_in_bins": "splits", "_gini2_scan_all_features": "splits",
}

__all__ = ["CartFolds", "CartTree", "CartLearner", "PopulationBitsets", "RankedFeatures", "cross_validate_cart",
           "fit_cart", "population_errors", "predict_cart", "supported_tree_params"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
