"""The compiled pieces of the batched Fisher fit give the same bits as the array formulation they
replaced (so Nedelko's records do not move), and one pass over the candidates serves every rule."""
import numpy as np
import pytest

from simstudy.learners.linear.fisher import _direction, fisher_directions, predict_rules
from simstudy.learners.linear.threshold import TIE_RULES, _sort_order, erm_threshold


def _einsum_directions(X, y, W):
    """Fisher's directions as computed before the compiled class sums (np.einsum throughout)."""
    y1 = (y == 1).astype(float)[:, None, :]
    stats = {}
    for label, ind in ((1, y1), (0, 1.0 - y1)):
        wy = W * ind
        n = wy.sum(-1)
        s = np.einsum("bfn,bnp->bfp", wy, X)
        ss = np.einsum("bfn,bnp,bnq->bfpq", wy, X, X)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = s / n[..., None]
            S = ss / n[..., None, None] - m[..., :, None] * m[..., None, :]
        stats[label] = (n, np.nan_to_num(m), np.nan_to_num(S))
    (n1, m1, S1), (n0, m0, S0) = stats[1], stats[0]
    w = _direction(S1 + S0, m1 - m0)
    return w, np.einsum("bfp,bnp->bfn", w, X), np.einsum("bfp,bfp->bf", w, (m1 + m0) / 2)


def _samples(seed, B=40, N=23, p=2, F=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(B, N, p)) * rng.uniform(0.1, 30, size=(B, 1, p)) + rng.normal(size=(B, 1, p)) * 5
    y = rng.integers(0, 2, size=(B, N))
    y[0] = 1                                     # one class only
    y[1, :] = 0
    W = np.concatenate([np.ones((B, 1, N)), rng.integers(0, 4, size=(B, F - 1, N))], axis=1).astype(float)
    W[2, 3] = 0.0                                # an empty training set
    return X, y, W


def test_directions_bit_for_bit_equal_to_einsum_in_two_dimensions():
    """Nedelko's model is 2-D: there the compiled sums make np.einsum's operations in its order."""
    for seed in range(5):
        X, y, W = _samples(seed, p=2)
        d = fisher_directions(X, y, W)
        w, proj, prefer = _einsum_directions(X, y, W)
        assert np.array_equal(d.w, w)
        assert np.array_equal(d.proj, proj)
        assert np.array_equal(d.prefer, prefer)


@pytest.mark.parametrize("p", [1, 3, 5])
def test_directions_equal_to_einsum_to_rounding_in_other_dimensions(p):
    """np.einsum switches to unrolled sums for some strides, so other dimensions agree to rounding."""
    X, y, W = _samples(1, p=p)
    d = fisher_directions(X, y, W)
    w, proj, prefer = _einsum_directions(X, y, W)
    scale = np.maximum(np.linalg.norm(w, axis=-1, keepdims=True), 1e-300)
    assert np.abs((d.w - w) / scale).max() < 1e-11
    assert np.abs(d.proj - proj).max() < 1e-12 * np.abs(proj).max()


def test_one_pass_for_all_rules_equals_one_rule_at_a_time():
    X, y, W = _samples(4)
    X = np.round(X)                              # equal projections: many tied thresholds
    d = fisher_directions(X, y, W)
    u = np.random.default_rng(5).random(W.shape[:2])
    together = d.thresholds(tuple(TIE_RULES), u)
    assert np.mean(together["first"].minimisers > 1) > 0.05
    for rule in TIE_RULES:
        alone = d.thresholds((rule,), u)[rule]
        assert np.array_equal(together[rule].c, alone.c)
        assert np.array_equal(together[rule].error, alone.error)
        assert np.array_equal(together[rule].minimisers, alone.minimisers)
        c, err = erm_threshold(d.proj, d.y, d.weights, d.prefer, rule, u)   # labels copied per fit
        assert np.array_equal(c, alone.c) and np.array_equal(err, alone.error)
        rules = d.rules(rule, u)
        assert np.array_equal(d.sample_predictions(rules), predict_rules(rules, X) == 1)


def test_sort_order_short_long_and_nan_rows():
    rng = np.random.default_rng(6)
    for N in (1, 2, 20, 64, 65, 300):
        values = np.round(rng.normal(size=N), 1)   # ties
        order = np.empty(N, dtype=np.int64)
        _sort_order(values, order)
        assert np.array_equal(values[order], np.sort(values))
        assert sorted(order) == list(range(N))
    values = np.array([0.3, np.nan, -1.0, 0.3])
    order = np.empty(4, dtype=np.int64)
    _sort_order(values, order)
    assert np.array_equal(order, np.argsort(values))
