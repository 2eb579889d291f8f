"""Interval forms of the t procedures, the hold-out test and nested CV (Bates, Hastie &
Tibshirani 2023): hand values, duality with the tests / scipy, and Monte Carlo calibration."""
import numpy as np
import pytest
from scipy import stats

from simstudy.cv.loop import nested_cv_losses
from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits
from simstudy.inference import (
    cv_t_test, five_by_two_t_test, holdout_test, nested_cv_interval, resampled_t_test, z_test,
)


# ------------------------------------------------------------------ tier 1: hand values
def test_cv_t_interval_hand_value():
    fm = np.array([0.1, 0.2, 0.3, 0.2])           # mean 0.2, s = sqrt(0.02/3)
    s = np.sqrt(0.02 / 3)
    t = stats.t.ppf(0.975, 3)
    ci = cv_t_test(fm).confidence_interval()
    assert (ci.low, ci.high) == pytest.approx((0.2 - t * s / 2, 0.2 + t * s / 2))
    ci7 = cv_t_test(fm, rho=0.7).confidence_interval()
    assert ci7.width == pytest.approx(ci.width / np.sqrt(0.3))
    flat = cv_t_test([0.3, 0.3, 0.3]).confidence_interval()
    # zero spread: the point 0.3, widened by the rounding tolerance of the test's "mu_hat == mu0"
    assert flat.low == pytest.approx(0.3, rel=1e-13) and flat.high == pytest.approx(0.3, rel=1e-13)
    assert flat.width < 1e-14
    with pytest.raises(ValueError, match="rho"):
        cv_t_test(fm, rho=1.0)


def test_five_by_two_and_resampled_hand_values():
    p = np.array([[0.1, 0.3], [0.2, 0.2], [0.0, 0.2], [0.3, 0.1], [0.2, 0.4]])
    s2 = np.array([0.02, 0.0, 0.02, 0.02, 0.02])   # (p1 - pbar)^2 + (p2 - pbar)^2
    ci = five_by_two_t_test(p).confidence_interval()
    half = stats.t.ppf(0.975, 5) * np.sqrt(s2.mean())
    assert (ci.estimate, ci.low, ci.high) == pytest.approx((0.1, 0.1 - half, 0.1 + half))
    ci = resampled_t_test([1.0, 2.0, 3.0], n_train=9, n_test=1).confidence_interval()
    half = stats.t.ppf(0.975, 2) * np.sqrt(1 / 3 + 1 / 9)
    assert (ci.low, ci.high) == pytest.approx((2 - half, 2 + half))


def test_holdout_and_z_test_hand_values_and_edges():
    d = np.array([-1.0, 0.0, -1.0, 0.0, 1.0])
    se = d.std(ddof=1) / np.sqrt(5)
    res = holdout_test(d, alternative="less")
    assert res.statistic == pytest.approx(-0.2 / se) and res.pvalue == pytest.approx(stats.norm.cdf(-0.2 / se))
    less = "less"
    assert z_test(-0.1, 0.0, alternative=less).pvalue == 0.0 and z_test(0.1, 0.0, alternative=less).pvalue == 1.0 \
        and z_test(0.0, 0.0, alternative=less).pvalue == 0.5
    assert z_test(1.0, 1.0, alternative="two-sided").pvalue == pytest.approx(2 * stats.norm.sf(1.0))
    with pytest.raises(ValueError, match="at least 2"):
        holdout_test([0.5])


def test_nested_cv_hand_computed():
    """K = 3, m = 2, one repetition, worked by hand."""
    pair = np.full((1, 3, 3, 2), np.nan)
    # inner losses of outer fold 0: folds 1 and 2; of outer fold 1: folds 0, 2; of fold 2: folds 0, 1
    pair[0, 0, 1], pair[0, 0, 2] = [1, 0], [0, 0]
    pair[0, 1, 0], pair[0, 1, 2] = [1, 1], [0, 0]
    pair[0, 2, 0], pair[0, 2, 1] = [1, 1], [1, 0]
    outer = np.array([[[1, 0], [0, 0], [1, 1]]], dtype=float)
    res = nested_cv_interval(pair, outer, clip=False)
    inner_mean = np.array([0.25, 0.5, 0.75])
    outer_mean = np.array([0.5, 0.0, 1.0])
    a = (inner_mean - outer_mean) ** 2                     # 1/16, 1/4, 1/16
    b = np.array([0.5, 0.0, 0.0]) / 2                       # var(ddof=1) / m
    mse = a.mean() - b.mean()                               # 0.125 - 1/12
    assert res.mse_hat == pytest.approx(mse)
    assert res.err_ncv == pytest.approx(0.5) and res.err_cv == pytest.approx(0.5) and res.bias == 0.0
    assert res.se == pytest.approx(np.sqrt(mse * 2 / 3))
    se_naive = np.std([1, 0, 0, 0, 1, 1], ddof=1) / np.sqrt(6)
    assert res.se_naive == pytest.approx(se_naive)
    clipped = nested_cv_interval(pair, outer)
    assert clipped.se == pytest.approx(np.clip(np.sqrt(mse * 2 / 3), se_naive, np.sqrt(3) * se_naive))
    # bias: Err_NCV - Err_CV = 0.1 gives bias (1 + 1/3) * 0.1
    shifted = nested_cv_interval(pair + 0.1, outer)
    assert shifted.bias == pytest.approx(0.4 / 3) and shifted.estimate == pytest.approx(0.6 - 0.4 / 3)
    with pytest.raises(ValueError, match="K >= 3"):
        nested_cv_interval(pair[:, :2, :2], outer[:, :2])


# ------------------------------------------------------------------ tier 2: references
def test_interval_test_duality_and_scipy():
    rng = np.random.default_rng(3)
    fm = rng.normal(0.2, 0.05, size=(50, 10))
    for rho in (0.0, 0.7):
        ci = cv_t_test(fm, rho=rho).confidence_interval(0.9)
        np.testing.assert_allclose(cv_t_test(fm, mu0=ci.high, rho=rho).pvalue, 0.1, rtol=1e-9)
        np.testing.assert_allclose(cv_t_test(fm, mu0=ci.low, rho=rho).pvalue, 0.1, rtol=1e-9)
    d = rng.normal(0.1, 0.05, size=(50, 15))
    ci = resampled_t_test(d, 90, 10, correction=None).confidence_interval()
    ref = stats.ttest_1samp(d, 0.0, axis=1).confidence_interval(0.95)
    np.testing.assert_allclose(ci.low, ref.low) and np.testing.assert_allclose(ci.high, ref.high)
    ci = resampled_t_test(d, 90, 10).confidence_interval(0.8)
    np.testing.assert_allclose(resampled_t_test(d - ci.high[:, None], 90, 10).pvalue, 0.2, rtol=1e-9)
    p = rng.normal(0.2, 0.05, size=(50, 5, 2))
    ci = five_by_two_t_test(p).confidence_interval()
    np.testing.assert_allclose(five_by_two_t_test(p - ci.low[:, None, None]).pvalue, 0.05, rtol=1e-9)
    x = rng.normal(0, 1, size=(50, 20))
    ci = holdout_test(x).confidence_interval(0.9)
    np.testing.assert_allclose(holdout_test(x - ci.high[:, None], alternative="less").pvalue, 0.05, rtol=1e-9)


def _nearest_mean_losses(X, y):
    """A deterministic learner (nearest class mean in 1-D) as a losses(train, test) callable."""
    def losses(train, test):
        m0, m1 = X[train][y[train] == 0].mean(), X[train][y[train] == 1].mean()
        pred = (np.abs(X[test] - m1) < np.abs(X[test] - m0)).astype(int)
        return (pred != y[test]).astype(float)
    return losses


def test_nested_driver_matches_literal_algorithm_1():
    """Pair-fit sharing gives the losses of a literal Algorithm 1 that refits every inner CV."""
    rng = np.random.default_rng(5)
    n, K = 60, 5
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(y * 1.0, 1.0)
    losses = _nearest_mean_losses(X, y)
    out = nested_cv_losses(losses, n, K, 2, np.random.default_rng(9))
    for r in range(2):
        labels = out.labels[r]
        for k in range(K):
            outer_train = np.flatnonzero(labels != k)
            np.testing.assert_array_equal(out.outer_losses[r, k], losses(outer_train, np.flatnonzero(labels == k)))
            for j in range(K):
                if j == k:
                    continue
                inner_train = outer_train[labels[outer_train] != j]     # inner CV inside the outer training set
                np.testing.assert_array_equal(out.pair_losses[r, k, j], losses(inner_train, np.flatnonzero(labels == j)))
    # reusing an ordinary CV for repetition 0 gives the same arrays
    first = out.labels[0]
    in_sample_order = np.empty(n)
    for k in range(K):
        in_sample_order[first == k] = out.outer_losses[0, k]
    again = nested_cv_losses(losses, n, K, 1, np.random.default_rng(1), first_labels=first,
                             first_outer_losses=in_sample_order)
    np.testing.assert_array_equal(again.pair_losses[0], out.pair_losses[0])


def test_split_designs():
    rng = np.random.default_rng(0)
    halves = FiveByTwo().halves(11, rng)
    assert halves.shape == (5, 11) and np.all(halves.sum(axis=1) == 5)
    test = RepeatedSplits(2, 15).test_masks(20, rng)
    assert test.shape == (15, 20) and np.all(test.sum(axis=1) == 2)
    with pytest.raises(ValueError, match="n_test"):
        RepeatedSplits(20, 15).test_masks(20, rng)


# ------------------------------------------------------------------ tier 3: Monte Carlo calibration
def test_cv_t_interval_coverage_with_exchangeable_fold_means():
    """Fold means with exchangeable correlation rho: the rho-interval covers with 1 - alpha."""
    R, K, rho = 4000, 10, 0.5
    rng = np.random.default_rng(11)
    c = rho / (K - (K - 1) * rho)
    fm = rng.standard_normal((R, 1)) * np.sqrt(c) + rng.standard_normal((R, K)) * np.sqrt(1 - c)
    ci = cv_t_test(fm, rho=rho).confidence_interval()
    covered = int(np.sum((ci.low <= 0) & (0 <= ci.high)))
    assert stats.binomtest(covered, R, 0.95).pvalue > 1e-3
    naive = cv_t_test(fm).confidence_interval()
    analytic = 1 - 2 * stats.t.sf(stats.t.ppf(0.975, K - 1) * np.sqrt(1 - rho), K - 1)
    covered0 = int(np.sum((naive.low <= 0) & (0 <= naive.high)))
    assert stats.binomtest(covered0, R, analytic).pvalue > 1e-3


def test_nested_cv_calibration_with_a_constant_learner():
    """A learner that always predicts class 0: losses are i.i.d. Bernoulli(p), Err_XY = p.

    Then E[MSE_hat] = p(1-p) K / ((K-1) n) exactly (a: inner and outer folds are disjoint;
    b: unbiased within-fold variance), and the interval covers p at least 1 - alpha.
    """
    p, n, K, R, sims = 0.3, 100, 5, 2, 1500
    rng = np.random.default_rng(21)
    mse, covered = np.empty(sims), 0
    for s in range(sims):
        y = (rng.random(n) < p).astype(int)
        out = nested_cv_losses(lambda train, test: y[test].astype(float), n, K, R, rng)
        res = nested_cv_interval(out.pair_losses, out.outer_losses)
        mse[s] = res.mse_hat
        covered += res.low <= p <= res.high
    expected = p * (1 - p) * K / ((K - 1) * n)
    z = (mse.mean() - expected) / (mse.std(ddof=1) / np.sqrt(sims))
    assert abs(z) < 3.5
    assert stats.binomtest(covered, sims, 0.95, alternative="less").pvalue > 1e-3
