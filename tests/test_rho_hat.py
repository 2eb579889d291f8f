"""Data-driven rho_hat (simstudy.inference.rho_hat): hand-computed values, theory on the
example-level gaussian_folds model (rho and theta known exactly at every size), and Monte Carlo
calibration of the tests judged with binomial tests."""
import numpy as np
import pytest
from scipy import stats

from simstudy.inference import (cv_t_test, nadeau_bengio_rho, subsample_cv, subsample_rho, subsample_variance,
                                SubsampleCV)
from simstudy.inference.rho_hat import RHO_MAX, subsample_size
from simstudy.populations.synthetic import GaussianFoldsPopulation
from simstudy.schemes import KFold


def test_nadeau_bengio_rho_hand_computed():
    assert nadeau_bengio_rho(10).rho == pytest.approx(10 / 19)
    assert nadeau_bengio_rho(2).rho == pytest.approx(2 / 3)
    # K = 5, one fold of 20 test / 80 training points: r = 1/4, rho = 1.25 / 2.25
    assert nadeau_bengio_rho(5, n_train=80, n_test=20).rho == pytest.approx(1.25 / 2.25)
    # its test is the Bouckaert-Frank corrected t: se^2 = (1/K + 1/(K-1)) s^2
    fm = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    res = nadeau_bengio_rho(5).test(fm)
    assert res.se == pytest.approx(np.sqrt((1 / 5 + 1 / 4) * fm.var(ddof=1)))
    with pytest.raises(ValueError, match="K must be"):
        nadeau_bengio_rho(1)


def test_subsample_estimators_hand_computed():
    sub = SubsampleCV(mu_hats=np.array([0.1, 0.2, 0.3]), theta3s=np.array([0.004, 0.006, 0.005]), n=20, n_sub=10, K=5)
    v = subsample_variance(sub)
    # Var_b = 0.01; theta(n') = 0.01 * 20 / 10 = 0.02; theta(n) = 0.02 * 10 / 20 = 0.01
    assert v.theta == pytest.approx(0.01)
    assert v.df == 2
    r = subsample_rho(sub)
    assert r.raw_rho == pytest.approx(1 - 0.005 / 0.02)
    assert r.rho == pytest.approx(0.75)
    assert np.isnan(r.theta) and r.df == 4
    # the eq. 9 test with rho_hat = 0.75
    fm = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    assert r.test(fm).pvalue == pytest.approx(cv_t_test(fm, rho=0.75).pvalue)
    assert v.test(fm).se == pytest.approx(0.1)
    # clipping
    low = subsample_rho(SubsampleCV(np.array([0.1, 0.2]), np.array([1.0, 1.0]), 20, 10, 5))
    assert low.raw_rho < 0 and low.rho == 0
    flat = subsample_rho(SubsampleCV(np.array([0.2, 0.2]), np.array([0.0, 0.0]), 20, 10, 5))
    assert flat.rho == RHO_MAX


def test_subsample_size():
    assert subsample_size(20, 10) == 10
    assert subsample_size(2000, 10) == 1000
    assert subsample_size(150, 10) == 70
    with pytest.raises(ValueError, match="n >= 20"):
        subsample_size(10, 10)


def _gaussian_replicates(rho, n, K, B, R, seed):
    """mu_hat, fold means, SubsampleCV of R replicates of the example-level gaussian_folds model."""
    pop = GaussianFoldsPopulation(rho=rho, mean=0.3, sigma=2.0)
    rng = np.random.default_rng(seed)
    fms, subs = [], []
    for _ in range(R):
        ex = pop.draw_examples(n, rng)

        def cv(rows, g, ex=ex):
            e = pop.subset_residuals(ex, rows)
            labels = KFold(K).labels(len(rows), g)
            return np.bincount(labels, e, K) / np.bincount(labels, minlength=K)

        fms.append(cv(np.arange(n), rng))
        subs.append(subsample_cv(cv, n, K, B, rng))
    sub = SubsampleCV(np.array([s.mu_hats for s in subs]), np.array([s.theta3s for s in subs]), n, subs[0].n_sub, K)
    return pop, np.array(fms), sub


def _z(values, expected):
    values = np.asarray(values)
    return (values.mean() - expected) / (values.std(ddof=1) / np.sqrt(values.size))


def test_subsample_estimators_against_theory_on_gaussian_folds():
    """theta(n') and E[theta3(n')] are known exactly: the overlap-corrected spread is unbiased for
    theta(n') = sigma^2 / (n' (1 - rho)), the mean subsample theta3 for sigma^2 / n'; their ratio
    gives rho (checked on the pooled means, whose ratio is consistent)."""
    rho, n, K, B = 0.5, 100, 10, 8
    pop, fm, sub = _gaussian_replicates(rho, n, K, B, 1500, seed=3)
    n_sub = sub.n_sub
    corrected = sub.mu_hats.var(axis=1, ddof=1) * n / (n - n_sub)
    limit = stats.norm.ppf(1 - 0.001 / 2)     # each check: two-sided at level 0.001
    assert abs(_z(corrected, pop.sigma ** 2 / (n_sub * (1 - rho)))) < limit
    assert abs(_z(sub.theta3s.mean(axis=1), pop.sigma ** 2 / n_sub)) < limit
    assert abs(_z(subsample_variance(sub).theta, pop.theta(n))) < limit
    pooled_rho = 1 - sub.theta3s.mean() / corrected.mean()
    # delta method on the ratio of two means
    a, b = sub.theta3s.mean(axis=1), corrected
    infl = (a - a.mean()) / b.mean() - a.mean() / b.mean() ** 2 * (b - b.mean())
    assert abs(pooled_rho - rho) / (infl.std(ddof=1) / np.sqrt(a.size)) < limit


def _binomial_ok(rejections, trials, alpha):
    return stats.binomtest(int(rejections), int(trials), alpha).pvalue > 0.001


def test_nadeau_bengio_test_has_exact_size_when_rho_is_rho_nb():
    """Proposition 2: on gaussian_folds with rho = K/(2K-1) the corrected test has level alpha."""
    K, R = 10, 4000
    pop = GaussianFoldsPopulation(rho=nadeau_bengio_rho(K).rho, mean=0.1)
    rng = np.random.default_rng(11)
    fm = np.array([pop.residual_blocks(K, 5, rng).mean(axis=1) for _ in range(R)])
    rejected = np.sum(nadeau_bengio_rho(K).test(fm, mu0=0.1).pvalue < 0.05)
    assert _binomial_ok(rejected, R, 0.05)


@pytest.mark.slow
def test_subsample_variance_test_calibrated_on_gaussian_folds():
    """Monte Carlo calibration: the subsample-variance t-test (B - 1 df) has size alpha on the
    example-level gaussian_folds model (binomial test), where the usual t (rho_hat = 0) does not."""
    rho, n, K, B, R = 0.5, 100, 10, 10, 3000
    pop, fm, sub = _gaussian_replicates(rho, n, K, B, R, seed=5)
    rejected = np.sum(subsample_variance(sub).test(fm, mu0=pop.mean).pvalue < 0.05)
    assert _binomial_ok(rejected, R, 0.05), rejected / R
    usual = np.sum(cv_t_test(fm, mu0=pop.mean).pvalue < 0.05)
    assert not _binomial_ok(usual, R, 0.05)
