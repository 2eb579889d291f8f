"""Tie rules of the Fisher ERM threshold: the batched kernel against a brute-force enumeration."""
import numpy as np
import pytest
from scipy import stats

from simstudy.learners.linear.fisher import fisher_fit, predict_rules
from simstudy.learners.linear.fisher_reference import (
    reference_estimates, reference_fit, reference_minimisers, reference_threshold,
)
from simstudy.learners.linear.threshold import TIE_RULES, erm_threshold, tie_uniforms
from simstudy.populations.synthetic import LogisticPopulation

RULES = tuple(TIE_RULES)


def _tied_problems(count: int, seed: int):
    """Small 1-D problems with many ties: integer projections, 0/1/2 weights, random labels."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        N = int(rng.integers(1, 12))
        yield (rng.integers(0, 5, N).astype(float), rng.integers(0, 2, N), rng.integers(0, 3, N).astype(float),
               float(rng.uniform(-1, 5)), float(rng.random()))


@pytest.mark.parametrize("rule", RULES)
def test_erm_threshold_equals_brute_force(rule):
    problems = list(_tied_problems(400, seed=1))
    N = max(len(p[1]) for p in problems)
    pad = lambda a, fill: np.concatenate([a, np.full(N - len(a), fill)])  # noqa: E731 (weight-0 padding)
    proj = np.stack([pad(p[0], 0.0) for p in problems])
    y = np.stack([pad(p[1], 0) for p in problems])
    wts = np.stack([pad(p[2], 0.0) for p in problems])
    prefer = np.array([p[3] for p in problems])
    u = np.array([p[4] for p in problems])
    c, err = erm_threshold(proj, y, wts, prefer, rule, u)
    several = 0
    for j, (pj, yj, wj, prefj, uj) in enumerate(problems):
        ref = reference_threshold(pj, yj, wj, prefj, rule, uj)
        assert (c[j], err[j]) == (ref.threshold, ref.error), (rule, pj, yj, wj)
        several += len(reference_minimisers(pj, yj, wj)) > 1
    assert several > 50  # the problems do exercise the tie rule (77 of 400 have several minimisers)


def test_rules_on_a_hand_case():
    # projections 0,1,2,3, labels 1,0,1,0: candidates -inf(2) 0.5(3) 1.5(2) 2.5(3) +inf(2)
    proj, y, w = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1, 0, 1, 0]), np.ones(4)
    pick = lambda rule, u=None, prefer=0.0: float(erm_threshold(proj, y, w, np.array(prefer), rule, u)[0])  # noqa
    assert pick("midpoint", prefer=2.9) == 1.5       # the only finite minimiser
    assert pick("first") == -np.inf
    assert pick("last") == np.inf
    assert [pick("random", u) for u in (0.0, 0.33, 0.34, 0.66, 0.67, 0.999)] == [-np.inf, -np.inf, 1.5, 1.5,
                                                                                   np.inf, np.inf]


def test_equal_class_means_take_the_tie_rule():
    # means coincide: w = 0, the candidates are the two constant rules with 2 errors each
    X = np.array([[[0.0, 0.0], [2.0, 2.0], [0.0, 2.0], [2.0, 0.0]]])
    y = np.array([[1, 1, 0, 0]])
    W = np.ones((1, 1, 4))
    assert fisher_fit(X, y, W, "midpoint").c[0, 0] == -np.inf   # as before tie rules existed
    assert fisher_fit(X, y, W, "first").c[0, 0] == -np.inf
    assert fisher_fit(X, y, W, "last").c[0, 0] == np.inf
    assert fisher_fit(X, y, W, "random", np.array([[0.7]])).c[0, 0] == np.inf
    # a heavier class wins under every rule
    y3 = np.array([[1, 1, 0, 0, 1]])
    X3 = np.concatenate([X, [[[1.0, 1.0]]]], axis=1)
    for rule in RULES:
        assert fisher_fit(X3, y3, np.ones((1, 1, 5)), rule, np.array([[0.99]])).c[0, 0] == -np.inf


def _unit_rule(w, c):
    """A rule scaled to a unit direction (the kernel's adj(S) d is det(S) times S^-1 d)."""
    norm = np.linalg.norm(w)
    return (w / norm, c / norm) if norm > 0 else (w, c)


@pytest.mark.parametrize("rule", RULES)
def test_fisher_fit_equals_reference_fit(rule):
    pop, rng = LogisticPopulation(0.3), np.random.default_rng(4)
    B, N = 60, 12
    X, y = np.empty((B, N, 2)), np.empty((B, N), dtype=int)
    for b in range(B):
        s = pop.sample(N, rng)
        X[b], y[b] = np.round(s.X, 1), s.y    # rounding makes equal projections too
    # fit 0: the whole sample; fits 1..N: leave-one-out
    W = np.concatenate([np.ones((B, 1, N)), 1.0 - np.eye(N)[None].repeat(B, 0)], axis=1)
    u = rng.random((B, 1 + N))
    rules = fisher_fit(X, y, W, rule, u)
    pred = predict_rules(rules, X)
    for b in range(B):
        for f in range(1 + N):
            keep = W[b, f] > 0
            w_ref, c_ref = reference_fit(X[b][keep], y[b][keep], rule, u[b, f])
            w_k, c_k = _unit_rule(rules.w[b, f], rules.c[b, f])
            w_r, c_r = _unit_rule(w_ref, c_ref)
            np.testing.assert_allclose(w_k, w_r, rtol=1e-7, atol=1e-9)
            assert c_k == pytest.approx(c_r, rel=1e-7, abs=1e-9)
            assert np.array_equal(pred[b, f], (X[b] @ w_ref > c_ref).astype(int))


def test_random_rule_picks_each_minimiser_uniformly():
    """Chi-square test of the chosen minimiser's counts, per sample, from per-fit uniforms."""
    pop = LogisticPopulation(0.35)
    rng = np.random.default_rng(7)
    fits, tested, pvalues = 4000, 0, []
    while tested < 6:
        s = pop.sample(20, rng)
        w, _ = reference_fit(s.X, s.y)   # the direction does not depend on the tie rule
        mins = reference_minimisers(s.X @ w, s.y)
        if len(mins) < 3:
            continue
        tested += 1
        u = tie_uniforms(rng, fits, "random")
        rules = fisher_fit(s.X[None], s.y[None], np.ones((1, fits, 20)), "random", u[None])
        scale = np.linalg.norm(rules.w[0, 0]) / np.linalg.norm(w)     # adj(S) d = det(S) S^-1 d
        chosen = rules.c[0] / scale
        index = np.array([np.argmin([abs(m.threshold - c) if np.isfinite(m.threshold) else
                                     (0.0 if m.threshold == c else np.inf) for m in mins]) for c in chosen])
        counts = np.bincount(index, minlength=len(mins))
        assert counts.sum() == fits
        pvalues.append(stats.chisquare(counts).pvalue)
    # each sample's test at level 1e-3, and the six p-values together (Fisher's method)
    assert min(pvalues) > 1e-3, pvalues
    assert stats.combine_pvalues(pvalues).pvalue > 1e-3


def test_random_rule_picks_a_constant_rule_with_probability_one_over_m():
    # labels 1, 0 at projections 0, 1: minimisers -inf and +inf (1 error each), 0.5 has 2
    proj, y = np.array([[0.0, 1.0]]), np.array([[1, 0]])
    u = np.random.default_rng(3).random(10000)
    c, _ = erm_threshold(np.repeat(proj, 10000, 0), np.repeat(y, 10000, 0), np.ones((10000, 2)),
                         np.zeros(10000), "random", u)
    assert set(np.unique(c)) == {-np.inf, np.inf}
    assert stats.binomtest(int(np.sum(c == np.inf)), 10000, 0.5).pvalue > 1e-3


def test_uniforms_are_checked_and_drawn_only_for_the_random_rule():
    proj, y, w = np.array([0.0, 1.0]), np.array([1, 0]), np.ones(2)
    with pytest.raises(ValueError, match="tie_rule"):
        erm_threshold(proj, y, w, np.array(0.0), "closest")
    with pytest.raises(ValueError, match="uniforms"):
        erm_threshold(proj, y, w, np.array(0.0), "random")
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        erm_threshold(proj, y, w, np.array(0.0), "random", np.array(1.0))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert tie_uniforms(rng, 5, "first") is None and rng.bit_generator.state == state
    assert tie_uniforms(rng, 5, "random").shape == (5,)


def test_uniforms_come_last_and_do_not_depend_on_batching():
    from simstudy.studies.nedelko_fisher.worker import draw, make_conditions

    cond, pop = make_conditions([20], [0.2])[0], LogisticPopulation(0.2)
    plain = draw(20, cond.key, pop, 11, range(3, 9), 5, 4)
    rep = draw(20, cond.key, pop, 11, range(3, 9), 5, 4, uniforms=True)
    for a, b in ((plain.X, rep.X), (plain.y, rep.y), (plain.folds, rep.folds), (plain.boot, rep.boot)):
        np.testing.assert_array_equal(a, b)          # the samples do not depend on drawing the uniforms
    assert plain.uniforms is None and rep.uniforms.shape == (6, 1 + 20 + 5 + 4)
    part = draw(20, cond.key, pop, 11, range(5, 7), 5, 4, uniforms=True)
    np.testing.assert_array_equal(part.uniforms, rep.uniforms[2:4])
    assert draw(20, cond.key, pop, 11, range(2), 0, 0, uniforms=True).uniforms.shape == (2, 1)   # full fit only


@pytest.mark.parametrize("rule", RULES)
def test_study_worker_under_each_rule_equals_plain_refits(rule):
    """The study's estimates (LOO, K-fold, empirical, Err(1) of .632, exact risk) under each tie rule
    equal a refit of every training set by the brute-force reference, with the study's uniforms."""
    from simstudy.populations.synthetic import linear_rule_risk
    from simstudy.studies.base import Chunk
    from simstudy.studies.nedelko_fisher.worker import FisherRiskWorker, draw, make_conditions

    cond, pop = make_conditions([20], [0.3])[0], LogisticPopulation(0.3)
    out = FisherRiskWorker([cond], 2013, K=5, bootstrap=3, tie_rule=rule)(Chunk(0, 0, 25))
    d = draw(20, cond.key, pop, 2013, range(25), 5, 3, uniforms=True)
    for j in range(25):
        ref = reference_estimates(d.X[j], d.y[j], d.folds[j], d.boot[j], rule, d.uniforms[j])
        row = out.loc[j]
        assert (row["empirical"], row["loo"], row["kfold"]) == pytest.approx((ref.empirical, ref.loo, ref.kfold))
        assert row["boot632"] == pytest.approx(0.368 * ref.empirical + 0.632 * ref.err1)
        assert row["true_risk"] == pytest.approx(float(linear_rule_risk(ref.w, ref.c, alpha=pop.alpha)), abs=1e-12)
        w = ref.w if np.linalg.norm(ref.w) > 0 else np.ones(2)
        assert row["minimisers"] == len(reference_minimisers(d.X[j] @ w, d.y[j]))


def test_minimiser_counts_equal_brute_force():
    from simstudy.learners.linear.fisher import fisher_directions

    rng = np.random.default_rng(8)
    X = rng.integers(-2, 3, size=(300, 9, 2)).astype(float)          # integer points: many equal projections
    y = rng.integers(0, 2, size=(300, 9))
    d = fisher_directions(X, y, np.ones((300, 1, 9)))
    counts = d.minimisers()[:, 0]
    for b in range(300):
        if d.only1[b, 0] or d.only0[b, 0]:
            assert counts[b] == 1
            continue
        assert counts[b] == len(reference_minimisers(d.proj[b, 0], y[b])), b
    assert np.mean(counts > 1) > 0.2
