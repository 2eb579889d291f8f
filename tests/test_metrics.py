"""Monte Carlo summaries: Wilson intervals and the delta-method SE of rho."""
import numpy as np
import pytest
from scipy import stats

from simstudy.inference import binomial_test
from simstudy.studies.metrics import between_block_correlation, mean_summary, rejection_rate


def wilson_interval(k, n):
    """The package's Wilson interval, as a (low, high) pair."""
    ci = binomial_test(k, n, method="wilson").confidence_interval(0.95)
    return ci.low, ci.high


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (164, 1000), (5, 10_000)])
def test_wilson_matches_scipy(k, n):
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k, n) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_wilson_hand_value():
    # k = 5, n = 10, z = 1.959964: centre 0.5, half-width z sqrt(0.025 + z^2/400) / (1 + z^2/10)
    z = stats.norm.ppf(0.975)
    half = z * np.sqrt(0.025 + z**2 / 400) / (1 + z**2 / 10)
    assert wilson_interval(5, 10) == pytest.approx((0.5 - half, 0.5 + half))


def test_wilson_invalid():
    with pytest.raises(ValueError, match="trials must be positive"):
        wilson_interval(1, 0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(5, 3)


def test_rejection_rate_and_mean_summary():
    r = rejection_rate([True, False, False, True])
    assert (r.successes, r.trials, r.rate) == (2, 4, 0.5)
    m = mean_summary([1.0, 2.0, 3.0, np.nan])
    assert (m.mean, m.count) == (2.0, 3)
    assert m.se == pytest.approx(1 / np.sqrt(3))


def test_rho_delta_method_se_matches_bootstrap():
    rng = np.random.default_rng(5)
    R, K = 4000, 10
    c = 0.4 / (K - (K - 1) * 0.4)  # fold-mean correlation giving rho = gamma / theta = 0.4
    common = rng.normal(size=(R, 1)) * np.sqrt(c)
    fm = common + rng.normal(size=(R, K)) * np.sqrt(1 - c)
    mu = fm.mean(1)
    t3 = fm.var(1, ddof=1) / K
    est = between_block_correlation(mu, t3)
    assert est.value == pytest.approx(0.4, abs=4 * est.se)  # true rho = 0.4
    boots = []
    for _ in range(300):
        i = rng.integers(0, R, R)
        boots.append(1 - t3[i].mean() / mu[i].var(ddof=1))
    assert est.se == pytest.approx(np.std(boots, ddof=1), rel=0.15)
