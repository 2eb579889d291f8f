"""Intervals and tests of the inference toolkit: hand values, scipy references, calibration."""
import numpy as np
import pytest
from scipy import stats

from simstudy.inference import (
    binomial_test, cv_clt_sigma, cv_clt_test, five_by_two_f_test, five_by_two_t_test, holdout_test, mcnemar_test,
    repeated_kfold_t_test, resampled_t_test, two_proportion_z_test,
)

Z = stats.norm.ppf(0.975)
FOLDS8 = np.repeat([0, 1], 4)


# ------------------------------------------------------------------ tier 1: hand values
def test_cv_clt_sigma_hand_values_and_binary_shortcuts():
    e = np.array([0, 1, 1, 1, 0, 0, 1, 1])
    est, s_out = cv_clt_sigma(e, FOLDS8, "all-pairs")
    assert est == pytest.approx(5 / 8) and s_out**2 == pytest.approx(5 / 8 * 3 / 8)   # R(1-R)
    _, s_in = cv_clt_sigma(e, FOLDS8, "within-fold")
    # (1/k) sum_j m/(m-1) R_j (1 - R_j) with R_1 = 3/4, R_2 = 1/2
    assert s_in**2 == pytest.approx(0.5 * (4 / 3 * 3 / 16 + 4 / 3 * 1 / 4))
    ci = cv_clt_test(e, FOLDS8, variance="all-pairs").confidence_interval(0.95)
    assert (ci.low, ci.high) == pytest.approx((5 / 8 - Z * s_out / np.sqrt(8), 5 / 8 + Z * s_out / np.sqrt(8)))
    with pytest.raises(ValueError, match="leave-one-out"):
        cv_clt_sigma(e, np.arange(8), "within-fold")


def test_clt_edge_cases():
    flat = np.full(8, 0.25)
    ci = cv_clt_test(flat, FOLDS8).confidence_interval()
    assert ci.low == ci.high == 0.25 and ci.width == 0
    assert cv_clt_test(-flat, FOLDS8, alternative="less").pvalue == 0.0
    assert cv_clt_test(flat, FOLDS8, alternative="less").pvalue == 1.0
    assert cv_clt_test(np.zeros(8), FOLDS8, alternative="less").pvalue == 0.5


def test_clt_test_hand_value():
    d = np.array([-1.0, 0.0, -1.0, 0.0, 1.0, -1.0, 0.0, -1.0])
    z = np.sqrt(8) * d.mean() / d.std()
    res = cv_clt_test(d, FOLDS8, alternative="less")
    assert res.statistic == pytest.approx(z) and res.pvalue == pytest.approx(stats.norm.cdf(z))


def test_holdout_interval_hand_value():
    x = np.array([0, 1, 0, 0, 1.0])
    ci = holdout_test(x).confidence_interval()
    se = x.std(ddof=1) / np.sqrt(5)
    assert (ci.estimate, ci.low, ci.high) == pytest.approx((0.4, 0.4 - Z * se, 0.4 + Z * se))


def test_corrected_resampled_hand_value_and_scipy_reference():
    res = resampled_t_test([1.0, 2.0, 3.0], n_train=9, n_test=1)
    assert res.statistic == pytest.approx(3.0) and res.df == 2   # 2 / sqrt((1/3 + 1/9) * 1)
    rng = np.random.default_rng(0)
    d = rng.normal(0.2, 1, size=(30, 15))
    ours = resampled_t_test(d, 90, 10, correction=None)
    ref = stats.ttest_1samp(d, 0.0, axis=1)
    np.testing.assert_allclose(ours.statistic, ref.statistic)
    np.testing.assert_allclose(ours.pvalue, ref.pvalue)
    rk = repeated_kfold_t_test(d.reshape(30, 3, 5), 90, 10)
    np.testing.assert_allclose(rk.statistic, resampled_t_test(d, 90, 10).statistic)
    assert rk.df == 14


def test_5x2cv_hand_values():
    p = np.array([[0.1, 0.3], [0.0, 0.2], [0.2, 0.2], [-0.1, 0.1], [0.3, 0.1]])
    s2 = np.array([0.02, 0.02, 0.0, 0.02, 0.02])   # (p1 - p2)^2 / 2
    t = five_by_two_t_test(p)
    assert t.statistic == pytest.approx(0.1 / np.sqrt(s2.mean())) and t.df == 5
    assert t.pvalue == pytest.approx(2 * stats.t.sf(t.statistic, 5))
    f = five_by_two_f_test(p)
    assert f.statistic == pytest.approx(np.sum(p**2) / (2 * s2.sum()))
    assert f.pvalue == pytest.approx(stats.f.sf(f.statistic, 10, 5))
    with pytest.raises(ValueError, match="5 replications"):
        five_by_two_t_test(np.zeros((2, 5)))
    assert five_by_two_t_test(np.full((5, 2), 0.1)).statistic == np.inf
    assert five_by_two_f_test(np.zeros((5, 2))).pvalue == 1.0


def test_mcnemar():
    assert mcnemar_test(10, 2, exact=False).statistic == pytest.approx(49 / 12)
    assert mcnemar_test(10, 2, exact=False).pvalue == pytest.approx(stats.chi2.sf(49 / 12, 1))
    assert mcnemar_test(10, 2).pvalue == pytest.approx(stats.binomtest(10, 12, 0.5).pvalue)
    assert mcnemar_test(0, 0).pvalue == 1.0
    assert mcnemar_test(3, 4, exact=False).statistic == 0.0


def test_two_proportion_z_against_chi_square():
    res = two_proportion_z_test(30, 200, 45, 210)
    table = np.array([[30, 170], [45, 165]])
    chi2 = stats.chi2_contingency(table, correction=False).statistic
    assert res.statistic**2 == pytest.approx(chi2)
    assert res.pvalue == pytest.approx(stats.chi2.sf(chi2, 1))
    assert two_proportion_z_test(0, 10, 0, 10).statistic == 0.0


@pytest.mark.parametrize("k,n", [(0, 20), (3, 20), (20, 20), (164, 1000)])
def test_binomial_intervals_against_scipy(k, n):
    bt = stats.binomtest(k, n)
    for method, ref in (("wilson", "wilson"), ("clopper-pearson", "exact")):
        ci = binomial_test(k, n, method=method).confidence_interval(0.95)
        r = bt.proportion_ci(0.95, method=ref)
        assert (ci.low, ci.high) == pytest.approx((r.low, r.high), abs=1e-10)
    ci = binomial_test(k, n, method="normal").confidence_interval(0.95)
    p = k / n
    half = Z * np.sqrt(p * (1 - p) / n)
    assert (ci.low, ci.high) == pytest.approx((max(p - half, 0), min(p + half, 1)))


# ------------------------------------------------------------------ tier 3: Monte Carlo calibration
R = 4000


@pytest.mark.parametrize("variance", ["all-pairs", "within-fold"])
def test_clt_interval_covers_for_independent_residuals(variance):
    rng = np.random.default_rng(1 if variance == "all-pairs" else 2)
    e = (rng.random((R, 500)) < 0.3).astype(float)          # i.i.d. losses, R_n = 0.3
    ci = cv_clt_test(e, np.repeat(np.arange(10), 50), variance=variance).confidence_interval(0.95)
    covered = int(np.sum((ci.low <= 0.3) & (0.3 <= ci.high)))
    assert stats.binomtest(covered, R, 0.95).pvalue > 1e-3


def test_clt_test_size_and_holdout_coverage():
    rng = np.random.default_rng(3)
    d = rng.normal(size=(R, 400))
    rejected = int(np.sum(cv_clt_test(d, np.repeat(np.arange(10), 40), alternative="less").pvalue < 0.05))
    assert stats.binomtest(rejected, R, 0.05).pvalue > 1e-3
    x = (rng.random((R, 400)) < 0.2).astype(float)
    ci = holdout_test(x).confidence_interval()
    assert stats.binomtest(int(np.sum((ci.low <= 0.2) & (0.2 <= ci.high))), R, 0.95).pvalue > 1e-3


def test_uncorrected_t_is_exact_and_corrected_conservative_for_independent_differences():
    rng = np.random.default_rng(4)
    d = rng.normal(size=(R, 15))
    k_unc = int(np.sum(resampled_t_test(d, 90, 10, correction=None).pvalue < 0.05))
    assert stats.binomtest(k_unc, R, 0.05).pvalue > 1e-3
    k_cor = int(np.sum(resampled_t_test(d, 90, 10).pvalue < 0.05))
    assert stats.binomtest(k_cor, R, 0.05, alternative="less").pvalue < 1e-3   # conservative


def test_binomial_interval_coverage_and_two_proportion_size():
    rng = np.random.default_rng(5)
    k = rng.binomial(200, 0.1, size=R)
    cp = binomial_test(k, 200, method="clopper-pearson").confidence_interval(0.95)
    covered = int(np.sum((cp.low <= 0.1) & (0.1 <= cp.high)))
    assert stats.binomtest(covered, R, 0.95, alternative="less").pvalue > 1e-3   # exact: at least 95%
    wil = binomial_test(k, 200, method="wilson").confidence_interval(0.95)
    assert stats.binomtest(int(np.sum((wil.low <= 0.1) & (0.1 <= wil.high))), R, 0.95).pvalue > 1e-3
    e1, e2 = rng.binomial(500, 0.2, size=R), rng.binomial(500, 0.2, size=R)
    rej = sum(two_proportion_z_test(a, 500, b, 500).pvalue < 0.05 for a, b in zip(e1, e2))
    assert stats.binomtest(int(rej), R, 0.05).pvalue > 1e-3
    b = rng.binomial(30, 0.5, size=R)
    rej = sum(mcnemar_test(x, 30 - x).pvalue < 0.05 for x in b)
    assert stats.binomtest(int(rej), R, 0.05, alternative="greater").pvalue > 1e-3  # exact: at most 5%


@pytest.mark.parametrize("x1,n1,x2,n2", [(30, 200, 45, 210), (0, 15, 4, 12), (9, 9, 3, 11), (7, 40, 7, 40)])
def test_farrington_manning_restricted_mle_against_numerical_maximisation(x1, n1, x2, n2):
    """The closed-form cubic root equals a bounded numerical maximisation of the likelihood."""
    from scipy.optimize import minimize_scalar
    from simstudy.inference.proportions import _restricted_mle

    def negloglik(p2, delta):
        p1 = p2 + delta
        return -(stats.binom.logpmf(x1, n1, p1) + stats.binom.logpmf(x2, n2, p2))

    for delta in (-0.6, -0.2, 0.05, 0.3, 0.7):
        lo, hi = max(0.0, -delta), min(1.0, 1.0 - delta)
        ref = minimize_scalar(negloglik, bounds=(lo, hi), args=(delta,), method="bounded",
                              options={"xatol": 1e-12}).x
        r1, r2 = _restricted_mle(x1, n1, x2, n2, delta)
        assert r1 - r2 == pytest.approx(delta)
        assert negloglik(r2, delta) <= negloglik(ref, delta) + 1e-9
        assert r2 == pytest.approx(ref, abs=1e-5)
