"""The written-out conditional risks of the built-in classification losses and the batched
linear path (:mod:`simstudy.populations.class_risks`): hand values, and agreement with the
generic route (one Loss call per class and one ``predict_proba`` per model) on every synthetic
classification population, for linear learners and a tree."""
from __future__ import annotations

import numpy as np
import pytest

from simstudy.cv.losses import brier, log_loss, zero_one
from simstudy.learners import build_learner, learners_context
from simstudy.populations import build_population
from simstudy.populations.class_risks import builtin_class_risks, linear_probability_risks
from simstudy.populations.truth import true_risks

POPULATIONS = ("logistic", "gaussian_classes", "imbalanced_classes", "sparse_classes", "hastie_10_2")
LOSSES = {"zero_one": zero_one, "log_loss": log_loss, "brier": brier}


def test_the_clipping_is_the_built_in_log_loss_s():
    from simstudy.cv.losses import _LOG_EPS
    from simstudy.populations.class_risks import LOG_EPS

    assert LOG_EPS == _LOG_EPS


def test_hand_values_of_the_written_out_risks():
    P = np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]])
    proba = np.array([[0.6, 0.4], [0.1, 0.9], [1.0, 0.0]])
    predicted = np.array([0, 1, 0])
    assert np.allclose(builtin_class_risks("zero_one", P, predicted, None), [0.3, 0.2, 0.5], rtol=0, atol=1e-15)
    # E_y of (1/2) sum_c (q_c - 1{y = c})^2: 0.7 * 0.16 + 0.3 * 0.36, 0.2 * 0.81 + 0.8 * 0.01, 0.5 * 1 + 0.5 * 0
    assert np.allclose(builtin_class_risks("brier", P, None, proba), [0.22, 0.17, 0.5], rtol=0, atol=1e-15)
    expected = [-(0.7 * np.log(0.6) + 0.3 * np.log(0.4)), -(0.2 * np.log(0.1) + 0.8 * np.log(0.9)),
                -0.5 * np.log(1e-15)]                                   # q = 0 clipped to 1e-15
    assert np.allclose(builtin_class_risks("log_loss", P, None, proba), expected, rtol=1e-15, atol=0)


def test_hand_values_of_the_batched_linear_risks():
    X = np.array([[0.0, 5.0], [np.log(3.0), 5.0]])                    # q_1 = expit(x_1) = 1/2, 3/4
    P = np.array([[0.5, 0.5], [0.25, 0.75]])
    m = np.array([np.log(2.0), -(0.25 * np.log(0.25) + 0.75 * np.log(0.75))])
    values, se = linear_probability_risks("log_loss", P, X, np.array([[1.0, 0.0]]), np.array([0.0]))
    assert values[0] == pytest.approx(m.mean(), rel=1e-15) and se[0] == pytest.approx(abs(m[0] - m[1]) / 2, rel=1e-14)
    # half Brier given y = 0, 1: (1 - q_0)^2, (1 - q_1)^2 = 1/4, 1/4 and 9/16, 1/16
    b_m = np.array([0.5 * 0.25 + 0.5 * 0.25, 0.25 * 0.5625 + 0.75 * 0.0625])
    values, _ = linear_probability_risks("brier", P, X, np.array([[1.0, 0.0]]), np.array([0.0]))
    assert values[0] == pytest.approx(b_m.mean(), rel=1e-15)


def _generic(learner, models, population, loss):
    """The route without written-out losses: sum_c P_c L(c, g, q), L called per class."""
    X, _ = population.evaluation_set(getattr(learner, "dtype", np.float64))
    P = population.evaluation_probabilities()
    values, se = [], []
    for model in models:
        predicted = learner.predict_features(model, X)
        proba = learner.predict_features_proba(model, X, n_classes=2) if loss.needs_proba else None
        m = sum(P[:, c] * loss(np.full(X.shape[0], c, dtype=np.int64), predicted, proba) for c in range(2))
        values.append(m.mean())
        se.append(m.std(ddof=1) / np.sqrt(m.size))
    return np.array(values), np.array(se)


def _models(learner_name, population, loss, n=40, count=4):
    learner = build_learner(learner_name, population, loss)
    rng = np.random.default_rng(7)
    state = learner.start(population.sample(n, rng))
    rows = [rng.integers(0, n, n) for _ in range(count)] + [np.flatnonzero(state.y == state.y[0])[:5]]
    with learners_context([learner]):                    # the last model is fitted on a single class
        return learner, [learner.fit(state, r, rng) for r in rows]


@pytest.mark.parametrize("name", POPULATIONS)
@pytest.mark.parametrize("learner_name", ("lda", "logistic_regression", "tree"))
def test_the_fast_routes_agree_with_the_generic_one(name, learner_name):
    population = build_population({"name": name, "evaluation_size": 20_000} if name != "logistic" else name)
    for loss in LOSSES.values():
        learner, models = _models(learner_name, population, loss)
        risks = true_risks(learner, models, population, loss)
        if np.all(risks.mc_se == 0):                     # a closed form (0-1 risk of linear rules)
            continue
        values, se = _generic(learner, models, population, loss)
        batched = callable(getattr(learner, "probability_rule", None)) and loss.needs_proba
        rtol = 1e-12 if batched else 0.0                  # the written-out sums alone change no bit
        np.testing.assert_allclose(risks.values, values, rtol=rtol, atol=0)
        np.testing.assert_allclose(risks.mc_se, se, rtol=100 * rtol, atol=0)


@pytest.mark.parametrize("learner_name", ("lda", "logistic_regression"))
def test_probability_rules_give_the_learners_probabilities(learner_name):
    population = build_population({"name": "sparse_classes", "evaluation_size": 20_000})
    learner, models = _models(learner_name, population, log_loss)
    X, _ = population.evaluation_set()
    read = 0
    for model in models:
        rule = learner.probability_rule(model)
        if rule is None:
            continue
        read += 1
        q1 = 1 / (1 + np.exp(-(X @ rule[0] + rule[1])))
        proba = model.predict_proba(X) if hasattr(model, "predict_proba") else learner.predict_features_proba(model, X)
        np.testing.assert_allclose(proba[:, 1], q1, rtol=1e-12, atol=1e-15)      # scikit-learn's own where it is
    assert read == len(models) - 1                     # all but the single-class model
