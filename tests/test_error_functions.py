"""Nedelko's error functions: theory, independent references, edges."""
import numpy as np
import pytest
from scipy import stats

from simstudy.inference.error_functions import (
    ERROR_FUNCTIONS, delta0, delta1, delta1_swapped, delta2, delta2_swapped,
)


@pytest.mark.parametrize("p", [0.05, 0.2, 0.5, 0.9])
def test_delta1_of_a_frequency_has_mean_one_over_n(p):
    """Paper: E[Delta1(nu, p)] = 1/N for the frequency nu of N Bernoulli(p) trials (exact sum)."""
    N = 20
    k = np.arange(N + 1)
    assert np.sum(stats.binom.pmf(k, N, p) * delta1(k / N, p)) == pytest.approx(1 / N, rel=1e-12)


def test_hand_values():
    assert delta0(0.2, 0.4) == pytest.approx(0.04 / (2 * 0.16 + 2 * 0.24))
    assert delta1(0.2, 0.4) == pytest.approx(0.04 / 0.24)
    assert delta1_swapped(0.2, 0.4) == pytest.approx(0.04 / 0.16)


def test_delta2_is_scipy_kl_divergence_and_nonnegative():
    rng = np.random.default_rng(0)
    rb, r = rng.random(50), rng.random(50)
    ref = [stats.entropy([a, 1 - a], [b, 1 - b]) for a, b in zip(rb, r)]
    np.testing.assert_allclose(delta2(rb, r), ref, rtol=1e-12)
    np.testing.assert_allclose(delta2_swapped(rb, r), delta2(r, rb))
    assert np.all(delta2(rb, r) >= 0)


@pytest.mark.parametrize("name", list(ERROR_FUNCTIONS))
def test_zero_iff_equal_including_edges(name):
    f = ERROR_FUNCTIONS[name]
    for v in (0.0, 0.3, 1.0):
        assert f(v, v) == 0.0
    assert f(0.3, 0.31) > 0


def test_edges():
    assert delta0(0.0, 1.0) == np.inf and delta0(0.0, 0.2) == pytest.approx(0.04 / 0.32)
    assert delta1(0.1, 0.0) == np.inf and delta1(0.0, 0.1) == pytest.approx(0.01 / 0.09)
    assert delta1_swapped(0.0, 0.1) == np.inf
    assert delta2(0.0, 0.1) == pytest.approx(-np.log(0.9))  # 0 ln 0 = 0
    assert delta2(0.1, 0.0) == np.inf
    assert delta2_swapped(0.0, 0.1) == np.inf
    with pytest.raises(ValueError, match="lie in"):
        delta0(1.2, 0.5)
