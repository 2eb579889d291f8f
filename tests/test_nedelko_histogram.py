"""Histogram classifier computed exactly: against brute force at tiny sizes and simulation."""
import itertools

import numpy as np
import pytest
from scipy import stats

from simstudy.inference.error_functions import delta0
from simstudy.learners.histogram import (
    compositions, kfold_error_distribution, loo_estimate, predict_cells,
)
from simstudy.studies.nedelko_histogram.exact import exact_expectations, sample_probabilities, sample_tables, simplex_grid


def _rule(types, cells):
    """Train on a list of types t = 2 cell + class; the returned function predicts a type's class."""
    counts = np.bincount(np.asarray(types, dtype=int), minlength=2 * cells)
    pred = predict_cells(counts)
    return lambda t: pred[t // 2]


def _brute_force(p, cells, N, K):
    """Expectations by enumerating ordered samples and every partition of positions into folds.

    The K-fold estimate does not depend on the folds' labels, so its mean over the K! labellings
    of a partition is its value on the partition: each partition is enumerated once."""
    T = 2 * cells
    m = N // K
    # all partitions of positions into K folds of size m, each fold led by its smallest position
    partitions = []
    def rec(left, folds):
        if not left:
            partitions.append(folds)
            return
        for rest in itertools.combinations(left[1:], m - 1):
            chosen = (left[0], *rest)
            rec([i for i in left if i not in chosen], folds + [chosen])
    rec(list(range(N)), [])
    out = {"risk": 0.0, "emp": 0.0, "loo": 0.0, "kf": 0.0, "d0_loo": 0.0, "d0_kf": 0.0, "d0_emp": 0.0}
    for seq in itertools.product(range(T), repeat=N):
        prob = float(np.prod([p[t] for t in seq]))
        if prob == 0:
            continue
        full = _rule(seq, cells)
        risk = sum(p[t] for t in range(T) if full(t) != t % 2)
        emp = np.mean([full(t) != t % 2 for t in seq])
        loo = np.mean([_rule(seq[:i] + seq[i + 1:], cells)(seq[i]) != seq[i] % 2 for i in range(N)])
        kf_vals = []
        for folds in partitions:
            errors = 0
            for fold in folds:
                train = [seq[i] for i in range(N) if i not in fold]
                rule = _rule(train, cells)
                errors += sum(rule(seq[i]) != seq[i] % 2 for i in fold)
            kf_vals.append(errors / N)
        out["risk"] += prob * risk
        out["emp"] += prob * emp
        out["loo"] += prob * loo
        out["kf"] += prob * np.mean(kf_vals)
        out["d0_loo"] += prob * delta0(loo, risk)
        out["d0_emp"] += prob * delta0(emp, risk)
        out["d0_kf"] += prob * np.mean([delta0(v, risk) for v in kf_vals])
    return out


@pytest.mark.parametrize("cells,N,K,p", [
    (2, 4, 2, [0.1, 0.3, 0.35, 0.25]),
    (2, 4, 2, [0.0, 0.5, 0.25, 0.25]),
    (1, 6, 3, [0.4, 0.6]),
    (2, 6, 3, [0.2, 0.2, 0.1, 0.5]),
])
def test_exact_expectations_match_brute_force(cells, N, K, p):
    p = np.array(p)
    exact = exact_expectations(sample_tables(cells, N, K), p[None]).set_index("estimator")
    brute = _brute_force(p, cells, N, K)
    assert exact["mean_true_risk"].iloc[0] == pytest.approx(brute["risk"], abs=1e-12)
    assert exact.loc["empirical", "mean_estimate"] == pytest.approx(brute["emp"], abs=1e-12)
    assert exact.loc["loo", "mean_estimate"] == pytest.approx(brute["loo"], abs=1e-12)
    assert exact.loc["kfold", "mean_estimate"] == pytest.approx(brute["kf"], abs=1e-12)
    assert exact.loc["loo", "mean_delta0"] == pytest.approx(brute["d0_loo"], abs=1e-12)
    assert exact.loc["empirical", "mean_delta0"] == pytest.approx(brute["d0_emp"], abs=1e-12)
    assert exact.loc["kfold", "mean_delta0"] == pytest.approx(brute["d0_kf"], abs=1e-12)


def test_tie_and_empty_cell_rules():
    # cell 0 tied (1-1), cell 1 empty, overall 2 ones vs 1 zero -> ties go to class 1
    assert predict_cells([1, 1, 0, 0, 0, 1]).tolist() == [1, 1, 1]
    # overall tie too -> class 0
    assert predict_cells([1, 1, 0, 0]).tolist() == [0, 0]
    assert predict_cells([0, 2, 3, 0]).tolist() == [1, 0]


def test_kfold_distribution_properties():
    n = np.array([2, 1, 0, 3, 4, 2])
    d = kfold_error_distribution(n, 4)
    assert d.sum() == pytest.approx(1.0, abs=1e-12) and np.all(d >= 0)
    # K = N is leave-one-out: a point mass at N * LOO
    d = kfold_error_distribution(n, 12)
    assert d[int(round(12 * loo_estimate(n)))] == pytest.approx(1.0)


def test_grid_and_probabilities():
    grid = simplex_grid(6, 6)
    assert len(grid) == 462 and np.allclose(grid.sum(1), 1)
    tables = sample_tables(1, 4, 2)
    prob = sample_probabilities(tables, np.array([[0.3, 0.7]]))
    assert prob.sum() == pytest.approx(1.0)
    k = tables.counts[:, 1]
    np.testing.assert_allclose(prob[0], stats.binom.pmf(k, 4, 0.7))
    assert len(compositions(12, 6)) == 6188


def test_exact_matches_simulation_at_study_size():
    """3 cells, N = 12, K = 4: simulated means within Monte Carlo error of the exact values."""
    p = np.array([0.25, 0.1, 0.05, 0.2, 0.3, 0.1])
    exact = exact_expectations(sample_tables(3, 12, 4), p[None]).set_index("estimator")
    rng = np.random.default_rng(2024)
    R = 6000
    d0 = {"loo": [], "kfold": [], "empirical": []}
    for _ in range(R):
        seq = rng.choice(6, size=12, p=p)
        full = _rule(seq, 3)
        risk = sum(p[t] for t in range(6) if full(t) != t % 2)
        emp = np.mean([full(t) != t % 2 for t in seq])
        loo = np.mean([_rule(np.delete(seq, i), 3)(seq[i]) != seq[i] % 2 for i in range(12)])
        labels = rng.permutation(np.repeat(np.arange(4), 3))
        kf = sum(_rule(seq[labels != k], 3)(t) != t % 2 for k in range(4) for t in seq[labels == k]) / 12
        for name, v in (("loo", loo), ("kfold", kf), ("empirical", emp)):
            d0[name].append(delta0(v, risk))
    for name, values in d0.items():
        values = np.asarray(values)
        z = (values.mean() - exact.loc[name, "mean_delta0"]) / (values.std(ddof=1) / np.sqrt(R))
        assert 2 * stats.norm.sf(abs(z)) > 1e-3, name
