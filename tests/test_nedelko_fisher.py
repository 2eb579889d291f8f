"""Nedelko's Fisher study: batched kernel vs a plain reference, exact risk, estimator identities."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simstudy.inference.risk_bounds import apply_rhat
from simstudy.learners.linear.fisher import fisher_fit, predict_rules
from simstudy.learners.linear.fisher_reference import reference_estimates, reference_fit
from simstudy.learners.linear.threshold import erm_threshold
from simstudy.populations.synthetic import (
    LogisticPopulation, linear_rule_risk, linear_rule_risk_quad, logistic_alpha_for_bayes_error,
)
from simstudy.studies.base import Chunk
from simstudy.studies.nedelko_fisher.aggregate import optimism_table
from simstudy.studies.nedelko_fisher.worker import (
    FisherRiskWorker, OptimismWorker, bootstrap_632, draw as _draw, make_conditions,
)


def test_batched_kernel_equals_reference_implementation():
    conds = make_conditions([20], [0.1], purpose="test")
    worker = FisherRiskWorker(conds, seed=5, K=5, bootstrap=8)
    out = worker(Chunk(0, 0, 40))
    pop = LogisticPopulation(0.1)
    d = _draw(20, conds[0].key, pop, 5, range(40), 5, 8)
    X, y, folds, boot = d.X, d.y, d.folds, d.boot
    for j in range(40):
        ref = reference_estimates(X[j], y[j], folds[j], boot[j])
        assert out.loc[j, "empirical"] == pytest.approx(ref.empirical)
        assert out.loc[j, "loo"] == pytest.approx(ref.loo)
        assert out.loc[j, "kfold"] == pytest.approx(ref.kfold)
        assert out.loc[j, "boot632"] == pytest.approx(0.368 * ref.empirical + 0.632 * ref.err1)
        assert out.loc[j, "true_risk"] == pytest.approx(linear_rule_risk(ref.w, ref.c, alpha=pop.alpha), abs=1e-12)


def test_degenerate_training_sets():
    X = np.array([[[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]]])
    # one class only -> constant rules
    r = fisher_fit(X, np.array([[1, 1, 1]]), np.ones((1, 1, 3)))
    assert r.c[0, 0] == -np.inf and np.all(r.w == 0)
    assert predict_rules(r, X).tolist() == [[[1, 1, 1]]]
    r = fisher_fit(X, np.array([[0, 0, 0]]), np.ones((1, 1, 3)))
    assert r.c[0, 0] == np.inf
    # one point per class: S = 0, the mean difference is the direction
    r = fisher_fit(X[:, :2], np.array([[0, 1]]), np.ones((1, 1, 2)))
    np.testing.assert_allclose(r.w[0, 0] / np.linalg.norm(r.w[0, 0]), [1 / np.sqrt(2)] * 2)
    assert predict_rules(r, X[:, :2]).tolist() == [[[0, 1]]]
    # singular S (class 1 has one point): agrees with the reference's adjugate limit
    Xs = np.array([[[0.0, 0.0], [1.0, 0.0], [0.5, 2.0]]])
    r = fisher_fit(Xs, np.array([[0, 0, 1]]), np.ones((1, 1, 3)))
    w, c = reference_fit(Xs[0], np.array([0, 0, 1]))
    np.testing.assert_allclose(r.w[0, 0], w)
    assert r.c[0, 0] == pytest.approx(c)


def test_erm_threshold_tie_rule():
    # projections 0,1,2,3 with labels 0,1,0,1: errors 1 at thresholds 0.5 and 2.5 (and 1.5 -> 2)
    c, err = erm_threshold(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 1, 0, 1]), np.ones(4), np.array(2.4))
    assert (float(c), float(err)) == (2.5, 1.0)
    c, _ = erm_threshold(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 1, 0, 1]), np.ones(4), np.array(0.0))
    assert float(c) == 0.5
    # a zero-weight point is not a training point: it does not create a split
    c, err = erm_threshold(np.array([0.0, 1.0, 2.0]), np.array([0, 1, 1]), np.array([1.0, 0.0, 1.0]), np.array(0.4))
    assert float(c) == 1.0 and float(err) == 0.0


# ------------------------------------------------------------------ exact risk
def test_exact_risk_against_adaptive_quadrature():
    rng = np.random.default_rng(1)
    for r0 in (0.01, 0.2, 0.45):
        alpha = logistic_alpha_for_bayes_error(r0)
        W, C = rng.normal(size=(30, 2)) * 3, rng.normal(size=30)
        W[0], C[0] = [1.0, 1.0 + 1e-10], 0.1   # nearly the Bayes direction: sharp integrand
        W[1], C[1] = [1e-8, 1.0], -0.2
        fast = linear_rule_risk(W, C, alpha=alpha)
        ref = [linear_rule_risk_quad(W[i], C[i], alpha) for i in range(30)]
        np.testing.assert_allclose(fast, ref, atol=1e-10)
        assert linear_rule_risk([2.0, 2.0], 0.0, alpha=alpha) == pytest.approx(r0, abs=1e-10)  # Bayes rule
        assert linear_rule_risk([0.0, 0.0], -1.0, alpha=alpha) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("w,c", [([1.0, -0.5], 0.3), ([0.2, 1.0], -0.4)])
def test_exact_risk_against_a_million_points(w, c):
    pop = LogisticPopulation(0.15)
    s = pop.sample(1_000_000, np.random.default_rng(12))
    errors = int(np.sum((s.X @ np.array(w) > c).astype(int) != s.y))
    assert stats.binomtest(errors, 1_000_000, linear_rule_risk(w, c, alpha=pop.alpha)).pvalue > 1e-3


# ------------------------------------------------------------------ estimators
def test_bootstrap_632_hand_case():
    # one sample, N = 2, B = 2: point 0 out of resample 0 (loss 1), point 1 out of both (losses 0, 1)
    errors = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    oob = np.array([[[True, True], [False, True]]])
    err1, e632, e632p = bootstrap_632(errors, oob, np.array([0.0]), np.array([[0, 1]]), np.array([[0, 1]]))
    assert err1[0] == pytest.approx((1.0 + 0.5) / 2)
    assert e632[0] == pytest.approx(0.632 * 0.75)
    # gamma = 0.5*0.5 + 0.5*0.5 = 0.5; Err1' = 0.5; R' = 1; w = 0.632 / 0.632 = 1
    assert e632p[0] == pytest.approx(0.5)


def test_optimism_tables():
    cal = pd.DataFrame({"sample_size": 4, "bayes_error": [0.1] * 4 + [0.3] * 4,
                        "empirical": [0.0, 0.0, 0.25, 0.25, 0.25, 0.25, 0.5, 0.5],
                        "true_risk": [0.1, 0.2, 0.3, 0.3, 0.5, 0.5, 0.6, 0.6]})
    curve = optimism_table(cal, "oracle_mean_curve").set_index("errors")
    # family: R0=0.1 -> (E[emp] 0.125, optimism 0.1); R0=0.3 -> (0.375, 0.175)
    assert curve.loc[0, "bias"] == pytest.approx(0.1)
    assert curve.loc[1, "bias"] == pytest.approx(0.1 + 0.075 * 0.5)
    assert curve.loc[4, "bias"] == pytest.approx(0.175)
    worst = optimism_table(cal, "oracle_conditional_max", min_count=1).set_index("errors")
    assert worst.loc[1, "bias"] == pytest.approx(0.25)   # max(0.05, 0.25)
    assert worst.loc[2, "bias"] == pytest.approx(0.1)
    rec = pd.DataFrame({"sample_size": [4, 4], "empirical": [0.25, 1.0]})
    np.testing.assert_allclose(apply_rhat(rec["empirical"], rec["sample_size"], "oracle_mean_curve",
                                          table=curve.reset_index()), [0.25 + 0.1375, 1.0])


def test_loo_and_kfold_are_unbiased_for_smaller_training_sets():
    """E[LOO at N] = E[R at N-1] and E[K-fold at N] = E[R at N - N/K] exactly: z-tests."""
    R = 6000
    main = FisherRiskWorker(make_conditions([20], [0.2], "unbias"), seed=3, K=5, bootstrap=1)(Chunk(0, 0, R))
    risk19 = OptimismWorker(make_conditions([19], [0.2], "unbias"), seed=3)(Chunk(0, 0, R))["true_risk"]
    risk16 = OptimismWorker(make_conditions([16], [0.2], "unbias"), seed=3)(Chunk(0, 0, R))["true_risk"]
    for est, truth in ((main["loo"], risk19), (main["kfold"], risk16)):
        z = (est.mean() - truth.mean()) / np.sqrt(est.var() / R + truth.var() / R)
        assert 2 * stats.norm.sf(abs(z)) > 1e-3
    # and the empirical risk is optimistic: E[R_emp] < E[R at N]
    assert main["empirical"].mean() < main["true_risk"].mean() - 0.03


def test_seed_invariance_across_chunks():
    conds = make_conditions([20], [0.1, 0.3], "inv")
    w = FisherRiskWorker(conds, seed=9, K=5, bootstrap=5)
    whole = w(Chunk(1, 0, 30))
    parts = pd.concat([w(Chunk(1, 0, 7)), w(Chunk(1, 7, 30))], ignore_index=True)
    pd.testing.assert_frame_equal(whole, parts)
