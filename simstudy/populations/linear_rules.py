"""Fitted binary classifiers that are linear rules "predict 1 iff x.w + b > 0", found and read.

The closed-form 0-1 risks of :mod:`simstudy.populations.gaussian_classes`,
:mod:`simstudy.populations.hastie` and the logistic model need a fold model's (w, b).
:func:`linear_rules` reads them from the models simstudy's learners produce:

- scikit-learn's binary linear classifiers (``coef_`` of shape (1, p), ``intercept_``,
  ``classes_ == [0, 1]``): LogisticRegression, RidgeClassifier, LinearDiscriminantAnalysis,
  LinearSVC, SGDClassifier...;
- the kernels' rules: :class:`simstudy.learners.logistic.learner.LogisticModel` (``w``, ``b``)
  and a :class:`simstudy.learners.linear.LinearRuleBatch` of one rule;
- :class:`simstudy.learners.sklearn.ConstantClassifier` (w = 0, b = +1 for class 1, -1 for 0).

A rule read is then checked against the learner's own predictions on probe points (away from
its boundary), so a model that only looks linear (an estimator whose ``predict`` is not the sign
of x.w + b) is not taken for one.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["linear_rule", "linear_rules"]

#: Probe points per feature used to check a rule against the learner's predictions.
_PROBES_PER_FEATURE = 4


def _read_rule(model: Any, p: int) -> tuple[np.ndarray, float] | None:
    """(w, b) as the model stores them, or None (not a linear rule of p features)."""
    # A model predicting one class everywhere is known by its ``label`` (learners.sklearn.ConstantClassifier;
    # populations sit beside learners and import none of them). The probe check confirms the read.
    label = getattr(model, "label", None)
    if label is not None and not hasattr(model, "coef_") and np.ndim(label) == 0:
        return (np.zeros(p), 1.0 if label == 1 else -1.0) if label in (0, 1) else None
    if hasattr(model, "coef_") and hasattr(model, "classes_"):
        classes = np.asarray(model.classes_)
        if classes.shape != (2,) or not np.array_equal(classes.astype(np.int64), [0, 1]):
            return None
        w, b = np.asarray(model.coef_, dtype=float), np.asarray(getattr(model, "intercept_", 0.0), dtype=float)
        return (w.reshape(-1), float(b.reshape(-1)[0])) if w.shape == (1, p) and b.size == 1 else None
    w, b = getattr(model, "w", None), getattr(model, "b", None)
    if w is None or b is None:
        return None
    w, b = np.asarray(w, dtype=float), np.asarray(b, dtype=float)
    if w.size != p or b.size != 1:          # a LinearRuleBatch of one rule has w (1, 1, p), b (1, 1)
        return None
    return w.reshape(-1), float(b.reshape(-1)[0])


def _agrees(learner: Any, model: Any, w: np.ndarray, b: float, p: int) -> bool:
    """The learner predicts 1{x.w + b > 0} on probe points not within rounding of the boundary."""
    probe = np.random.default_rng(0).standard_normal((_PROBES_PER_FEATURE * p + 8, p)) * 3.0
    score = probe @ w + b
    clear = np.abs(score) > 1e-9 * (1.0 + np.abs(probe) @ np.abs(w) + abs(b))
    predicted = np.asarray(learner.predict_features(model, probe))
    return bool(np.array_equal(predicted[clear].astype(np.int64), (score[clear] > 0).astype(np.int64)))


def linear_rule(learner: Any, model: Any, p: int) -> tuple[np.ndarray, float] | None:
    """(w, b) of a fitted model that predicts 1 iff x.w + b > 0 (checked on probes), else None."""
    if not callable(getattr(learner, "predict_features", None)):
        return None
    rule = _read_rule(model, p)
    if rule is None or not _agrees(learner, model, rule[0], rule[1], p):
        return None
    return rule


def linear_rules(learner: Any, models: Sequence[Any], p: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(W (M, p), b (M,)) when every model is a linear rule, else None."""
    rules = [linear_rule(learner, model, p) for model in models]
    if any(r is None for r in rules):
        return None
    return (np.array([r[0] for r in rules]).reshape(len(rules), p), np.array([r[1] for r in rules], dtype=float))
