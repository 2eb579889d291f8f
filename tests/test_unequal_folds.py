"""Unequal folds (n not a multiple of K): Grandvalet & Bengio's theta1..theta5 generalised (exact
expectations by brute-force enumeration), the within-fold CV CLT variance, the CV t on fold
means, nested CV's calibration, and the resampling designs on odd n; hand values and Monte Carlo
calibration judged with binomial tests."""
import itertools

import numpy as np
import pytest
from scipy import stats

from simstudy.cv.loop import nested_cv_losses
from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits
from simstudy.inference import (
    cv_clt_sigma, cv_clt_test, cv_t_test, fold_summary, nested_cv_interval, variance_estimates,
    variance_estimates_from_blocks, block_residuals,
)
from simstudy.inference.variance import unequal_fold_estimates
from test_variance import _quadratic_matrix     # polarisation: the matrix of a quadratic form

THETAS = ("theta1", "theta2", "theta3", "theta4", "theta5")
E_HAND = np.array([0.0, 1, 1, 1, 0])
F_HAND = np.array([0, 0, 0, 1, 1])          # fold sizes 3 and 2


def test_hand_computed_unequal_case():
    """e = (0, 1, 1 | 1, 0): n = 5, m = (3, 2), Q = 13, fold means 2/3 and 1/2, mu_hat = 3/5.

    s^2 = 1/3 and 1/2, a_hat = (3/5)(1/3) + (2/5)(1/2) = 2/5; SSB = 3 (1/15)^2 + 2 (1/10)^2 = 1/30
    = MSB (K - 1 = 1); n0 = 5 - 13/5 = 12/5; b_hat = (1/30 - 2/5) / (12/5) = -11/72.
    """
    est = variance_estimates(E_HAND, F_HAND)
    b_hat = -11 / 72
    assert est.theta1 == pytest.approx(0.36)
    assert est.theta4 == pytest.approx(2 / 25)
    assert est.theta3 == pytest.approx(2 / 25 + 13 / 25 * b_hat) == pytest.approx(1 / 1800)
    assert est.theta2 == pytest.approx(2 / 25 + (13 / 25 - 1) * b_hat) == pytest.approx(23 / 150)
    assert est.theta5 == pytest.approx(1.2 / 20)
    # the within-fold CV CLT variance is the same a_hat; all-pairs is the plain variance
    assert cv_clt_sigma(E_HAND, F_HAND, "within-fold").sigma ** 2 == pytest.approx(2 / 5)
    assert cv_clt_sigma(E_HAND, F_HAND, "all-pairs").sigma ** 2 == pytest.approx(0.24)
    summary = fold_summary(E_HAND, F_HAND)
    assert summary.sizes.tolist() == [3, 2] and not summary.equal
    np.testing.assert_allclose(summary.means, [2 / 3, 1 / 2])


def _expectations(sizes, mu, sigma2, omega, gamma):
    """The expectations derived in :func:`variance_estimates` (third column of its table)."""
    m = np.asarray(sizes, float)
    n, Q = m.sum(), np.sum(m**2)
    theta = (n * sigma2 + (Q - n) * omega + (n**2 - Q) * gamma) / n**2
    return theta, {
        "theta1": theta + mu**2,
        "theta2": theta - omega,
        "theta3": theta - gamma,
        "theta4": theta - Q / n**2 * (omega - gamma) - gamma,
        "theta5": theta - (Q - n) / (n * (n - 1)) * omega - (n**2 - Q) / (n * (n - 1)) * gamma,
    }


def _rademacher_enumeration(sizes, mu, sigma2, omega, gamma):
    """Every equally likely outcome of e_i = mu + sqrt(gamma) z_0 + sqrt(omega - gamma) z_k(i)
    + sqrt(sigma2 - omega) z_i, z = +-1: mean mu, variance sigma2, covariance omega within a block
    and gamma between blocks (2^(1 + K + n) outcomes)."""
    K, n = len(sizes), int(sum(sizes))
    labels = np.repeat(np.arange(K), sizes)
    z = np.array(list(itertools.product((-1.0, 1.0), repeat=1 + K + n)))
    e = (mu + np.sqrt(gamma) * z[:, :1] + np.sqrt(omega - gamma) * z[:, 1:1 + K][:, labels]
         + np.sqrt(sigma2 - omega) * z[:, 1 + K:])
    return e, labels


@pytest.mark.parametrize("sizes", [(3, 2, 2), (2, 3), (3, 3, 2, 2), (4, 3)])
def test_expectations_by_brute_force_enumeration(sizes):
    mu, sigma2, omega, gamma = 0.3, 1.0, 0.4, 0.15
    e, labels = _rademacher_enumeration(sizes, mu, sigma2, omega, gamma)
    theta, expected = _expectations(sizes, mu, sigma2, omega, gamma)
    assert e.mean(axis=1).var() == pytest.approx(theta)          # Lemma 1 for unequal blocks
    est = variance_estimates(e, labels)
    for name in THETAS:
        assert getattr(est, name).mean() == pytest.approx(expected[name], rel=1e-12, abs=1e-15), name
    # theta3 is unbiased when gamma = 0, theta2 when omega = 0 (= gamma = 0)
    for (o, g), name in (((0.4, 0.0), "theta3"), ((0.0, 0.0), "theta2")):
        e0, _ = _rademacher_enumeration(sizes, mu, sigma2, o, g)
        assert getattr(variance_estimates(e0, labels), name).mean() == pytest.approx(e0.mean(axis=1).var())
    # the CV t's s^2(fold means)/K: unbiased for Var(mean of fold means) - gamma, any sizes
    fm = fold_summary(e, labels).means
    assert (fm.var(axis=1, ddof=1) / len(sizes)).mean() == pytest.approx(fm.mean(axis=1).var() - gamma)


@pytest.mark.parametrize("sizes", [(4, 3, 3, 3), (6, 5, 5), (2, 2, 3)])
def test_expectations_exactly_by_trace(sizes):
    """A second route: E[e'Ae] = tr(A C) + mu' A mu with A recovered by polarisation."""
    mu, sigma2, omega, gamma = -0.2, 1.3, 0.5, -0.1
    labels = np.repeat(np.arange(len(sizes)), sizes)
    n = labels.size
    C = np.where(labels[:, None] == labels[None, :], omega, gamma)
    C[np.diag_indices(n)] = sigma2
    _, expected = _expectations(sizes, mu, sigma2, omega, gamma)
    for name in THETAS:
        A = _quadratic_matrix(lambda e: float(getattr(variance_estimates(e, labels), name)), n)
        assert np.trace(A @ C) + mu**2 * A.sum() == pytest.approx(expected[name], rel=1e-9), name


def test_general_forms_reduce_to_the_paper_and_are_translation_invariant():
    rng = np.random.default_rng(4)
    e = rng.normal(size=(20, 12))
    labels = np.repeat(np.arange(4), 3)
    general, paper = unequal_fold_estimates(e, labels), variance_estimates_from_blocks(block_residuals(e, labels))
    for name in THETAS:
        np.testing.assert_allclose(getattr(general, name), getattr(paper, name), rtol=1e-10, atol=1e-14)
    unequal = rng.permutation(np.arange(13) % 4)
    x = rng.normal(size=(20, 13))
    a, b = variance_estimates(x, unequal), variance_estimates(x + 3.7, unequal)
    for name in THETAS[1:]:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-9)


# ------------------------------------------------------------------ Monte Carlo calibration
@pytest.mark.parametrize("variance", ["all-pairs", "within-fold"])
def test_cv_clt_coverage_with_unequal_folds(variance):
    """i.i.d. 0-1 losses, n = 503, K = 10 (folds of 51 and 50): the CLT interval covers 0.3 at 95%."""
    R, n, p = 4000, 503, 0.3
    rng = np.random.default_rng(31 if variance == "all-pairs" else 32)
    e = (rng.random((R, n)) < p).astype(float)
    folds = KFold(10).labels(n, rng)
    assert sorted(np.bincount(folds).tolist()) == [50] * 7 + [51] * 3
    ci = cv_clt_test(e, folds, variance=variance).confidence_interval(0.95)
    covered = int(np.sum((ci.low <= p) & (p <= ci.high)))
    assert stats.binomtest(covered, R, 0.95).pvalue > 1e-3


def test_within_fold_variance_is_conditionally_unbiased_for_heteroscedastic_folds():
    """Given the fold models, losses of fold j are i.i.d. with their own variance sigma_j^2; then
    E[sigma2_in / n] = Var(R_hat) = sum_j m_j sigma_j^2 / n^2 (size weights), for unequal folds."""
    R, sizes, sd = 40_000, np.array([7, 7, 6, 6, 6]), np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    labels = np.repeat(np.arange(5), sizes)
    rng = np.random.default_rng(8)
    e = rng.normal(size=(R, labels.size)) * sd[labels]
    n = labels.size
    sigma2 = cv_clt_sigma(e, labels, "within-fold").sigma ** 2 / n
    truth = np.sum(sizes * sd**2) / n**2
    z = (sigma2.mean() - truth) / (sigma2.std(ddof=1) / np.sqrt(R))
    assert 2 * stats.norm.sf(abs(z)) > 1e-3


def test_cv_t_coverage_with_unequal_folds():
    """i.i.d. Gaussian residuals, n = 25, K = 10 (folds of 3 and 2: fold-mean variances differ by
    1.5x, the worst case of floor/ceil sizes): the CV t interval still covers at about 95%."""
    R, n, K = 6000, 25, 10
    rng = np.random.default_rng(41)
    labels = KFold(K).labels(n, rng)
    e = rng.normal(0.2, 1.0, size=(R, n))
    fm = fold_summary(e, labels).means
    ci = cv_t_test(fm).confidence_interval(0.95)
    covered = int(np.sum((ci.low <= 0.2) & (0.2 <= ci.high)))
    assert stats.binomtest(covered, R, 0.95).pvalue > 1e-3


def test_nested_cv_calibration_with_unequal_folds():
    """Constant learner, i.i.d. Bernoulli(p) losses, n = 53, K = 5 (folds of 11 and 10): inner and
    outer losses of outer fold k are n - m_k and m_k independent points, so
    E[MSE_hat] = p(1-p) mean_k 1/(n - m_k) exactly; the interval covers p at least 95%."""
    p, n, K, R, sims = 0.3, 53, 5, 2, 1500
    rng = np.random.default_rng(51)
    mse, covered = np.empty(sims), 0
    for s in range(sims):
        y = (rng.random(n) < p).astype(float)
        out = nested_cv_losses(lambda train, test: y[test], n, K, R, rng)
        res = nested_cv_interval(out.pair_losses, out.outer_losses)
        mse[s] = res.mse_hat
        covered += res.low <= p <= res.high
    sizes = KFold(K).sizes(n)
    expected = p * (1 - p) * np.mean(1 / (n - sizes))
    z = (mse.mean() - expected) / (mse.std(ddof=1) / np.sqrt(sims))
    assert 2 * stats.norm.sf(abs(z)) > 1e-3
    assert stats.binomtest(int(covered), sims, 0.95, alternative="less").pvalue > 1e-3


def test_resampling_designs_on_odd_n():
    rng = np.random.default_rng(0)
    halves = FiveByTwo().halves(101, rng)
    assert np.all(halves.sum(axis=1) == 50)            # first half 50 points, second 51
    tv = RepeatedSplits(11, 7).test_masks(101, rng)
    assert np.all(tv.sum(axis=1) == 11)
    with pytest.raises(ValueError, match="n >= K"):
        KFold(10).labels(9, rng)
