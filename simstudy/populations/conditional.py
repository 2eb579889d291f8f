"""The truth of synthetic populations whose conditional law of y given x is known.

For a model g and a loss L the true risk is E L(y, g(x)) = E_x m(x) with the conditional risk
m(x) = E[L(y, g(x)) | x]. When the population knows the law of y given x, m(x) is computed
exactly at each point of a large fixed sample x_1..x_N of the features, and the truth is the mean
of m(x_i), with standard error sd(m) / sqrt(N) (:class:`simstudy.populations.truth.RiskValues`). Averaging
m(x) rather than L(y_i, g(x_i)) removes the label noise from the Monte Carlo error (a
Rao-Blackwellisation): for the 0-1 loss, m(x) = P(y != g(x) | x).

- classification: m(x) = sum_c P(y = c | x) L(c, g(x), q(x)) for any per-point loss, the
  user's included (the population's :meth:`ConditionalClassTruth.class_probabilities`); the
  built-in losses are written out over the classes and binary linear models are scored from
  their coefficients (:mod:`simstudy.populations.class_risks`, the same values);
- regression: the population's :meth:`ConditionalRegressionTruth.conditional_loss` for the squared
  and absolute losses; other losses fall back to the mean loss over the sample with its labels.

Closed forms take precedence: a population's ``closed_form_risks(learner, models, loss)``
returns exact values (e.g. the 0-1 risk of linear rules) or None.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simstudy.populations.class_risks import (
    PROBABILITY_LOSSES, builtin_class_risks, linear_probability_risks, probability_rules,
)
from simstudy.populations.regression import _SampledTruth

__all__ = ["ConditionalClassTruth", "ConditionalRegressionTruth", "builtin_loss_name"]


def _mean_and_se(per_point: np.ndarray) -> tuple[float, float]:
    return float(per_point.mean()), float(per_point.std(ddof=1) / np.sqrt(per_point.size))


def builtin_loss_name(loss: Any) -> str | None:
    """The name of a built-in loss (zero_one, squared, absolute, log_loss, brier), None for a user's
    loss (which may carry the same name: a formula is only used for the built-in one)."""
    from simstudy.registry import LOSSES

    name = getattr(loss, "name", None)
    if name not in LOSSES:
        return None
    return name if LOSSES[name].load() == loss else None


class _ConditionalTruth(_SampledTruth):
    """Closed form first, then the conditional risks averaged over the fixed evaluation sample."""

    def closed_form_risks(self, learner: Any, models: Sequence[Any], loss: Any) -> np.ndarray | None:
        """Exact risks, or None where no closed form applies (subclasses override)."""
        return None

    def conditional_risks(self, learner: Any, X: np.ndarray, model: Any, loss: Any) -> np.ndarray | None:
        """m(x_i) for each evaluation point, or None (subclasses implement)."""
        raise NotImplementedError

    def exact_risks(self, learner: Any, models: Sequence[Any], loss: Any):
        """The closed form (an array), else the mean conditional risk with its Monte Carlo error
        (a RiskValues), else None (the mean loss over the evaluation sample and its labels)."""
        from simstudy.populations.truth import RiskValues

        exact = self.closed_form_risks(learner, models, loss)
        if exact is not None:
            return np.asarray(exact, dtype=float)
        if not callable(getattr(learner, "predict_features", None)):
            return None
        X, _ = self.evaluation_set(getattr(learner, "dtype", np.float64))
        risks = self.sampled_risks(learner, X, models, loss)
        return None if risks is None else RiskValues(*risks)

    def sampled_risks(self, learner: Any, X: np.ndarray, models: Sequence[Any],
                      loss: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """Mean of :meth:`conditional_risks` over the evaluation points ``X`` and its standard
        error, per model; None when a model has no conditional risk."""
        values, se = np.empty(len(models)), np.empty(len(models))
        for i, model in enumerate(models):
            per_point = self.conditional_risks(learner, X, model, loss)
            if per_point is None:
                return None
            values[i], se[i] = _mean_and_se(per_point)
        return values, se

    def _evaluation_features(self) -> np.ndarray:
        """The evaluation sample's features in float64 (whatever dtype a learner predicts from)."""
        return self.evaluation_set(np.float64)[0]


class ConditionalClassTruth(_ConditionalTruth):
    """Classification: the population gives P(y = c | x) (:meth:`class_probabilities`)."""

    _probabilities: np.ndarray | None = None

    def class_probabilities(self, X: np.ndarray) -> np.ndarray:
        """P(y = c | x) for each row of X, shape (N, C)."""
        raise NotImplementedError

    def evaluation_probabilities(self) -> np.ndarray:
        """:meth:`class_probabilities` of the evaluation sample (computed once)."""
        if self._probabilities is None:
            self._probabilities = self.class_probabilities(self._evaluation_features())
        return self._probabilities

    def conditional_risks(self, learner: Any, X: np.ndarray, model: Any, loss: Any) -> np.ndarray:
        """m(x) = sum_c P(c | x) L(c, g(x), q(x)) (any per-point loss; the built-in ones written out
        over the classes, :func:`~simstudy.populations.class_risks.builtin_class_risks`)."""
        P = self.evaluation_probabilities()
        name = builtin_loss_name(loss)
        predicted = learner.predict_features(model, X) if name is None or not loss.needs_proba else None
        proba = None
        if loss.needs_proba:
            proba = learner.predict_features_proba(model, X, n_classes=P.shape[1])
        if name in ("zero_one", *PROBABILITY_LOSSES):
            return builtin_class_risks(name, P, predicted, proba)
        out = np.zeros(X.shape[0])
        for c in range(P.shape[1]):
            out += P[:, c] * loss(np.full(X.shape[0], c, dtype=np.int64), predicted, proba)
        return out

    def sampled_risks(self, learner: Any, X: np.ndarray, models: Sequence[Any],
                      loss: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """As the generic mean over the points, with the binary models whose probabilities are
        expit(x.w + b) scored from their rules for a built-in probability loss
        (:func:`~simstudy.populations.class_risks.linear_probability_risks`)."""
        name = builtin_loss_name(loss)
        P = self.evaluation_probabilities()
        rules = probability_rules(learner, models) if name in PROBABILITY_LOSSES and P.shape[1] == 2 \
            else [None] * len(models)
        linear = [i for i, rule in enumerate(rules) if rule is not None]
        others = [i for i, rule in enumerate(rules) if rule is None]
        values, se = np.empty(len(models)), np.empty(len(models))
        if others:
            rest = super().sampled_risks(learner, X, [models[i] for i in others], loss)
            if rest is None:
                return None
            values[others], se[others] = rest
        if linear:
            W = np.array([rules[i][0] for i in linear], dtype=float).reshape(len(linear), -1)
            b = np.array([rules[i][1] for i in linear], dtype=float)
            values[linear], se[linear] = linear_probability_risks(name, P, self._evaluation_features(), W, b)
        return values, se

    def __getstate__(self):  # workers recompute the probabilities with the evaluation set
        state = super().__getstate__()
        state["_probabilities"] = None
        return state


class ConditionalRegressionTruth(_ConditionalTruth):
    """Regression: the population gives E[L(y, g) | x] for the squared and absolute losses."""

    def conditional_loss(self, X: np.ndarray, prediction: np.ndarray, loss_name: str) -> np.ndarray | None:
        """E[L(y, prediction_i) | x_i] for each row, or None for a loss without a formula."""
        raise NotImplementedError

    def conditional_risks(self, learner: Any, X: np.ndarray, model: Any, loss: Any) -> np.ndarray | None:
        name = builtin_loss_name(loss)
        if name not in ("squared", "absolute"):
            return None
        prediction = np.asarray(learner.predict_features(model, X), dtype=float)
        return self.conditional_loss(self._evaluation_features(), prediction, name)
