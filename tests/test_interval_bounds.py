"""Interval edges (issue 14 item 4): intervals of bounded quantities are clipped to the bounds when
asked, say so (``clipped``), and keep agreeing with their tests for null values inside them."""
import numpy as np
import pytest

from simstudy.cv.loop import nested_cv_losses
from simstudy.inference import binomial_test, cv_clt_test, cv_t_test, nested_cv_interval, z_test


def test_nested_cv_lower_end_of_a_small_error_rate_is_clipped():
    """A nearly perfect classifier: 2 errors in 60 points; the normal interval reaches below 0."""
    y = np.zeros(60)
    y[[5, 40]] = 1.0
    out = nested_cv_losses(lambda train, test: y[test], 60, 5, 3, np.random.default_rng(2))
    raw = nested_cv_interval(out.pair_losses, out.outer_losses)
    assert raw.low < 0 and raw.bounds is None and not raw.clipped
    res = nested_cv_interval(out.pair_losses, out.outer_losses, bounds=(0, 1))
    assert res.low == 0.0 and res.high == raw.high and res.clipped and res.bounds == (0.0, 1.0)
    ci = res.confidence_interval(0.99)
    assert ci.low == 0.0 and ci.clipped and ci.method == "nested cv (paper)"


def test_cv_clt_clipping_and_flags_on_batches():
    e = np.zeros((3, 20))
    e[0, :2] = 1.0          # error rate 0.1: the lower end falls below 0
    e[1, :10] = 1.0         # 0.5: inside
    e[2, :] = 1.0           # 1: a point at the upper bound, nothing to clip
    folds = np.arange(20) % 4
    raw = cv_clt_test(e, folds).confidence_interval()
    ci = cv_clt_test(e, folds, bounds=(0, 1)).confidence_interval()
    assert raw.low[0] < 0 and ci.low[0] == 0.0
    assert ci.clipped.tolist() == [True, False, False]
    np.testing.assert_array_equal(ci.high, np.minimum(raw.high, 1.0))
    # one-sided: the infinite end becomes the bound without counting as clipped
    less = cv_clt_test(e[1], folds, alternative="less", bounds=(0, 1)).confidence_interval()
    assert less.low == 0.0 and not less.clipped


def test_differences_of_losses_and_defaults():
    fm = np.array([-0.9, -0.95, -0.85, -0.99])
    assert cv_t_test(fm).confidence_interval().low < -1
    ci = cv_t_test(fm, bounds=(-1, 1)).confidence_interval()
    assert ci.low == -1.0 and ci.clipped and ci.bounds == (-1.0, 1.0)
    # the binomial Wald interval of an error rate is clipped by default; Wilson needs no clipping
    wald = binomial_test(1, 30, method="normal").confidence_interval()
    assert wald.low == 0.0 and wald.clipped
    assert not binomial_test(1, 30).confidence_interval().clipped
    # plain functions do not clip unless asked
    assert z_test(0.01, 0.1).confidence_interval().low < 0


def test_null_values_outside_the_bounds_are_refused():
    with pytest.raises(ValueError, match="outside bounds"):
        z_test(0.5, 0.1, mu0=1.5, bounds=(0, 1))
    with pytest.raises(ValueError, match="low < high"):
        z_test(0.5, 0.1, bounds=(1, 0))
    with pytest.raises(ValueError, match="error rate in"):
        binomial_test(3, 10, mu0=-0.1)
