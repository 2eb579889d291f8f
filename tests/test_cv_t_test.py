"""The rho-parametrised CV t-test (eq. 9) and rho_alpha of Grandvalet & Bengio (2006)."""
import numpy as np
import pytest
from scipy import stats

from simstudy.inference import cv_t_test, rho_alpha


def test_rho_zero_is_scipy_one_sample_t_test():
    rng = np.random.default_rng(1)
    fm = rng.normal(0.1, 0.2, size=(20, 10))
    ours = cv_t_test(fm, mu0=0.05)
    ref = stats.ttest_1samp(fm, 0.05, axis=1)
    np.testing.assert_allclose(ours.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(ours.pvalue, ref.pvalue, rtol=1e-10)
    for alt in ("less", "greater"):
        np.testing.assert_allclose(cv_t_test(fm, 0.05, alternative=alt).pvalue,
                                   stats.ttest_1samp(fm, 0.05, axis=1, alternative=alt).pvalue, rtol=1e-10)


def test_hand_computed_statistic_with_rho():
    # fold means 1, 2, 3: mu_hat = 2, sum of squares = 2; K = 3
    res = cv_t_test([1.0, 2.0, 3.0], mu0=0.0, rho=0.5)
    assert res.statistic == pytest.approx(np.sqrt(3 * 2 * 0.5) * 2 / np.sqrt(2))
    assert res.df == 2
    assert res.pvalue == pytest.approx(2 * stats.t.sf(res.statistic, 2))


def test_zero_spread_conventions():
    assert cv_t_test([0.2, 0.2, 0.2], mu0=0.1).statistic == np.inf
    assert cv_t_test([0.2, 0.2, 0.2], mu0=0.1).pvalue == 0.0
    assert cv_t_test([0.2, 0.2, 0.2], mu0=0.2).statistic == 0.0
    assert cv_t_test([0.2, 0.2, 0.2], mu0=0.2).pvalue == 1.0


@pytest.mark.parametrize("rho", [-0.1, 1.0, float("nan")])
def test_invalid_rho(rho):
    with pytest.raises(ValueError, match="rho must lie in"):
        cv_t_test([1.0, 2.0, 3.0], rho=rho)


def test_rho_alpha_is_the_boundary_of_rejection():
    rng = np.random.default_rng(2)
    fm = rng.normal(0.3, 0.2, size=(500, 10))
    ra = rho_alpha(fm, alpha=0.05)
    p0 = cv_t_test(fm).pvalue
    assert np.array_equal(ra > 0, p0 < 0.05)
    sig = ra > 0
    # at rho = rho_alpha the p-value is exactly alpha; slightly below it rejects
    np.testing.assert_allclose(cv_t_test(fm[sig], rho=ra[sig]).pvalue, 0.05, rtol=1e-8)
    assert np.all(cv_t_test(fm[sig], rho=np.maximum(ra[sig] - 1e-6, 0)).pvalue < 0.05)
    # monotone decreasing in the p-value
    order = np.argsort(p0)
    assert np.all(np.diff(ra[order]) <= 1e-12)


def test_rho_alpha_conventions():
    assert rho_alpha([0.2, 0.2, 0.2], mu0=0.1) == 1.0
    assert rho_alpha([0.25, 0.5, 0.75], mu0=0.5) == -np.inf
    assert rho_alpha([0.1, 0.2, 0.3], mu0=0.3, alternative="greater") == -np.inf
    t_crit = stats.t.ppf(0.975, 2)
    t0 = np.sqrt(6) * 0.2 / np.sqrt(0.02)
    assert rho_alpha([0.1, 0.2, 0.3]) == pytest.approx(1 - (t_crit / t0) ** 2)


def _exchangeable_fold_means(rng, R, K, rho, mu=0.0):
    """Gaussian fold means with unit variance and between-block correlation rho = gamma/theta.

    Note rho is not the correlation c = gamma / Var(mu_k) of two fold means: with
    theta = Var(mu_hat) = (1 + (K-1) c) / K, rho = K c / (1 + (K-1) c), so c = rho / (K - (K-1) rho).
    """
    c = rho / (K - (K - 1) * rho)
    common = rng.standard_normal((R, 1)) * np.sqrt(c)
    return mu + common + rng.standard_normal((R, K)) * np.sqrt(1 - c)


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7])
def test_proposition2_calibration(rho):
    """Prop. 2 by simulation: rho_hat = rho gives level alpha; rho_hat = 0 the analytic rate."""
    K, R, alpha = 10, 20_000, 0.05
    rng = np.random.default_rng(int(rho * 100) + 7)
    fm = _exchangeable_fold_means(rng, R, K, rho)
    k_true = int(np.sum(cv_t_test(fm, rho=rho).pvalue < alpha))
    assert stats.binomtest(k_true, R, alpha).pvalue > 1e-3
    t_crit = stats.t.ppf(1 - alpha / 2, K - 1)
    analytic = 2 * stats.t.sf(t_crit * np.sqrt(1 - rho), K - 1)
    k_naive = int(np.sum(cv_t_test(fm, rho=0.0).pvalue < alpha))
    assert stats.binomtest(k_naive, R, analytic).pvalue > 1e-3
