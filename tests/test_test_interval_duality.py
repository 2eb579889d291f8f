"""Every test and its interval agree: mu0 lies in the level-(1 - alpha) interval exactly when the
test of H0: mu = mu0 does not reject at alpha (p-value >= alpha), two-sided and one-sided, for
random inputs including zero-variance ones. Nested CV (interval only) and Alpaydin's F (test
only) have no partner; the F test's result says so."""
import numpy as np
import pytest

from simstudy.inference import (
    binomial_test, cv_clt_test, cv_t_test, five_by_two_f_test, five_by_two_t_test, holdout_test, mcnemar_test,
    repeated_kfold_t_test, resampled_t_test, t_test, two_proportion_z_test, z_test,
)

LEVELS = (0.8, 0.95, 0.99)
ALTERNATIVES = ("two-sided", "less", "greater")


def _null_values(rng, ci, estimate, bounds):
    """Null values to try: random ones around the interval, the estimate itself, and the bounds."""
    low, high = bounds
    finite = [v for v in (ci.low, ci.high, estimate) if np.isfinite(v)]
    centre = float(np.mean(finite)) if finite else 0.0
    span = max(float(np.ptp(finite)) if len(finite) > 1 else 0.0, 1e-3)
    values = centre + span * rng.uniform(-2, 2, 40)
    values = np.concatenate([values, [estimate] if np.isfinite(estimate) else [], [low, high]])
    return values[np.isfinite(values) & (values >= low) & (values <= high)]


def assert_dual(make, rng, bounds=(-np.inf, np.inf), vectorised=True):
    """``make(mu0, alternative)`` -> TestResult; checks duality at every level and alternative.

    ``vectorised``: ``make`` takes an array of null values at once (else one call per value).
    """
    checked = 0
    for alternative in ALTERNATIVES:
        reference = make(0.0 if bounds[0] <= 0.0 <= bounds[1] else bounds[0], alternative)
        for level in LEVELS:
            ci = reference.confidence_interval(level)
            # the interval does not depend on the null value
            other = make(bounds[1] if np.isfinite(bounds[1]) else 1.0, alternative).confidence_interval(level)
            assert (other.low, other.high) == (ci.low, ci.high)
            if alternative == "less":
                assert ci.low == (bounds[0] if np.isfinite(bounds[0]) else -np.inf)
            if alternative == "greater":
                assert ci.high == (bounds[1] if np.isfinite(bounds[1]) else np.inf)
            mu0 = _null_values(rng, ci, reference.estimate, bounds)
            ends = np.array([e for e in (ci.low, ci.high) if np.isfinite(e)])
            near = np.min(np.abs(mu0[:, None] - ends[None, :]), axis=1) if ends.size else np.full(mu0.size, np.inf)
            mu0 = mu0[(near == 0) | (near > 1e-9)]      # not within root-finding / rounding distance of an end
            p = make(mu0, alternative).pvalue if vectorised else np.array([make(float(v), alternative).pvalue
                                                                           for v in mu0])
            inside = (ci.low <= mu0) & (mu0 <= ci.high)
            bad = inside != (np.asarray(p) >= 1 - level)
            assert not bad.any(), (alternative, level, mu0[bad], ci, np.asarray(p)[bad])
            checked += mu0.size
    assert checked > 100


def _data(rng, shape, kind):
    """Random data of a kind: continuous, 0-1, or constant (zero variance)."""
    if kind == "normal":
        return rng.normal(rng.uniform(-1, 1), rng.uniform(0.1, 2), shape)
    if kind == "binary":
        return (rng.random(shape) < rng.uniform(0.05, 0.95)).astype(float)
    return np.full(shape, rng.choice([0.0, 0.3, 0.25, -1.7, 1.0]))


KINDS = ("normal", "binary", "constant")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_cv_t(kind, seed):
    rng = np.random.default_rng(seed)
    fm = _data(rng, int(rng.integers(2, 12)), kind)
    for rho in (0.0, 0.7):
        assert_dual(lambda mu0, alt: cv_t_test(fm, mu0, rho=rho, alternative=alt), rng)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_cv_clt_and_holdout(kind, seed):
    rng = np.random.default_rng(100 + seed)
    n, K = int(rng.integers(20, 60)), int(rng.integers(2, 8))
    e = _data(rng, n, kind)
    folds = rng.permutation(np.arange(n) % K)                   # unequal folds when K does not divide n
    for variance in ("all-pairs", "within-fold"):
        assert_dual(lambda mu0, alt: cv_clt_test(e, folds, mu0, variance, alt), rng)
    assert_dual(lambda mu0, alt: holdout_test(e, mu0, alt), rng)
    if kind == "binary":  # clipped to the bounds of a 0-1 loss: duality for null values inside them
        assert_dual(lambda mu0, alt: cv_clt_test(e, folds, mu0, alternative=alt, bounds=(0, 1)), rng, (0.0, 1.0))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_repeated_designs(kind, seed):
    rng = np.random.default_rng(200 + seed)
    x = _data(rng, int(rng.integers(2, 20)), kind)
    for correction in (None, "nadeau-bengio"):
        assert_dual(lambda mu0, alt: resampled_t_test(x, 90, 10, mu0, correction, alt), rng)
    d = _data(rng, (3, 5), kind)
    assert_dual(lambda mu0, alt: repeated_kfold_t_test(d, 80, 20, mu0, alternative=alt), rng)
    p = _data(rng, (5, 2), kind)
    assert_dual(lambda mu0, alt: five_by_two_t_test(p, mu0, alt), rng)


@pytest.mark.parametrize("seed", range(4))
def test_building_blocks(seed):
    rng = np.random.default_rng(300 + seed)
    est, se, df = rng.normal(), [0.0, rng.uniform(0.01, 1)][seed % 2], int(rng.integers(1, 30))
    assert_dual(lambda mu0, alt: z_test(est, se, mu0, alt), rng)
    assert_dual(lambda mu0, alt: t_test(est, se, df, mu0, alt), rng)


@pytest.mark.parametrize("method", ["normal", "wilson", "clopper-pearson"])
@pytest.mark.parametrize("k,n", [(0, 20), (1, 20), (7, 20), (20, 20), (164, 1000), (3, 5)])
def test_binomial(method, k, n):
    rng = np.random.default_rng(k * 1000 + n)
    assert_dual(lambda mu0, alt: binomial_test(k, n, mu0, alt, method), rng, (0.0, 1.0))


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("b,c", [(0, 0), (0, 7), (10, 2), (3, 4), (25, 25), (1, 0)])
def test_mcnemar(exact, b, c):
    rng = np.random.default_rng(b * 100 + c)
    assert_dual(lambda mu0, alt: mcnemar_test(b, c, exact, mu0, alt), rng, (0.0, 1.0), vectorised=False)


@pytest.mark.parametrize("pooled", [True, False])
@pytest.mark.parametrize("counts", [(30, 200, 45, 210), (0, 10, 0, 10), (0, 15, 4, 12), (9, 9, 3, 11), (5, 40, 5, 40)])
def test_two_proportions(pooled, counts):
    rng = np.random.default_rng(sum(counts))
    assert_dual(lambda mu0, alt: two_proportion_z_test(*counts, mu0, alt, pooled), rng, (-1.0, 1.0), vectorised=False)


def test_f_test_has_no_interval():
    res = five_by_two_f_test(np.random.default_rng(0).normal(size=(5, 2)))
    with pytest.raises(NotImplementedError, match="no confidence interval"):
        res.confidence_interval()
