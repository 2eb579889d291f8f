"""Histogram classifier under every tie rule, and the readings script of Nedelko's Figure 4:
against brute-force enumeration with a learner written from scratch here, and a simulation."""
import importlib.util
import itertools
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from simstudy.inference.error_functions import delta0
from simstudy.learners.histogram import (
    TIE_RULES, compositions, empirical_risk, kfold_error_distribution, kfold_loss_distribution, loo_estimate,
    misclassified_types, predict_cells,
)

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "nedelko_histogram_readings.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("nedelko_histogram_readings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                    # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------ learner from scratch
def _scratch_rule(sample, cells, tie):
    """P(predict class 1) per cell, from a list of (cell, class) pairs, with exact fractions."""
    c = [[0, 0] for _ in range(cells)]
    for cell, y in sample:
        c[cell][y] += 1
    zeros, ones = sum(x[0] for x in c), sum(x[1] for x in c)
    out = []
    for c0, c1 in c:
        if c1 != c0:
            out.append(Fraction(int(c1 > c0)))
        elif tie == "overall":
            out.append(Fraction(int(ones > zeros)))
        elif tie == "zero":
            out.append(Fraction(0))
        else:
            out.append(Fraction(1, 2))
    return out


def _loss(rule, point):
    cell, y = point
    return rule[cell] if y == 0 else 1 - rule[cell]


def _brute_force_sample(counts, cells, K, tie):
    """Risk vector, empirical, LOO and the K-fold distribution of one count vector, by enumeration."""
    sample = [(t // 2, t % 2) for t in range(2 * cells) for _ in range(counts[t])]
    N = len(sample)
    full = _scratch_rule(sample, cells, tie)
    mis = [_loss(full, (t // 2, t % 2)) for t in range(2 * cells)]
    emp = sum(_loss(full, z) for z in sample) / N
    loo = sum(_loss(_scratch_rule(sample[:i] + sample[i + 1:], cells, tie), sample[i]) for i in range(N)) / N
    m, kfold = N // K, {}
    partitions = [p for p in itertools.product(range(K), repeat=N) if all(p.count(k) == m for k in range(K))]
    for labels in partitions:                              # every labelled partition is equally likely
        est = sum(_loss(_scratch_rule([z for z, l in zip(sample, labels) if l != k], cells, tie), sample[i])
                  for k in range(K) for i in range(N) if labels[i] == k) / N
        kfold[est] = kfold.get(est, 0) + Fraction(1, len(partitions))
    return mis, emp, loo, kfold


@pytest.mark.parametrize("tie", TIE_RULES)
@pytest.mark.parametrize("cells,N,K", [(2, 4, 2), (2, 6, 3), (3, 6, 2)])
def test_every_count_vector_matches_brute_force(tie, cells, N, K):
    for counts in compositions(N, 2 * cells):
        mis, emp, loo, kfold = _brute_force_sample(counts.tolist(), cells, K, tie)
        np.testing.assert_array_equal(misclassified_types(counts, tie), np.array([float(v) for v in mis]))
        assert empirical_risk(counts, tie) == pytest.approx(float(emp), abs=1e-15)
        assert loo_estimate(counts, tie) == pytest.approx(float(loo), abs=1e-15)
        dist = kfold_loss_distribution(counts, K, tie)
        expected = np.zeros_like(dist.probabilities)
        for value, prob in kfold.items():
            expected[int(value * 2 * N)] = float(prob)
        np.testing.assert_allclose(dist.probabilities, expected, atol=1e-13)


def test_tie_rules_by_hand_and_interfaces():
    counts = [1, 1, 0, 0, 0, 1]       # cell 0 tied, cell 1 empty, cell 2 -> 1; the sample has 2 ones, 1 zero
    assert predict_cells(counts).tolist() == [1, 1, 1]
    assert predict_cells(counts, "zero").tolist() == [0, 0, 1]
    assert predict_cells(counts, "coin").tolist() == [0.5, 0.5, 1]
    assert misclassified_types(counts, "coin").tolist() == [0.5, 0.5, 0.5, 0.5, 1, 0]   # cell 2 says 1
    assert misclassified_types(counts).dtype == np.int64
    assert empirical_risk(counts, "coin") == pytest.approx(1 / 3)      # (1/2 + 1/2 + 0) / 3
    with pytest.raises(ValueError, match="tie must be one of"):
        predict_cells(counts, "random")
    with pytest.raises(ValueError, match="kfold_loss_distribution"):
        kfold_error_distribution([2, 1, 1, 0], 2, "coin")
    d = kfold_loss_distribution([2, 1, 0, 3, 4, 2], 4, "coin")
    assert d.probabilities.sum() == pytest.approx(1.0) and d.probabilities.shape == (25,)
    np.testing.assert_array_equal(kfold_error_distribution([2, 1, 0, 3, 4, 2], 4),
                                  kfold_loss_distribution([2, 1, 0, 3, 4, 2], 4).probabilities[0::2])


def _brute_force_moments(p, cells, N, K, tie):
    """E[Delta0] of each estimator over ordered samples, with the learner from scratch."""
    out = {"loo": 0.0, "empirical": 0.0, "kfold": 0.0, "kfold_complete": 0.0}
    for seq in itertools.product(range(2 * cells), repeat=N):
        prob = float(np.prod([p[t] for t in seq]))
        if prob == 0:
            continue
        counts = np.bincount(seq, minlength=2 * cells).tolist()
        mis, emp, loo, kfold = _brute_force_sample(counts, cells, K, tie)
        risk = float(sum(float(mv) * pt for mv, pt in zip(mis, p)))
        out["loo"] += prob * delta0(float(loo), risk)
        out["empirical"] += prob * delta0(float(emp), risk)
        out["kfold"] += prob * sum(float(q) * delta0(float(v), risk) for v, q in kfold.items())
        out["kfold_complete"] += prob * delta0(float(sum(v * q for v, q in kfold.items())), risk)
    return out


@pytest.mark.parametrize("tie", TIE_RULES)
def test_readings_script_moments_match_brute_force(tie):
    script = _load_script()
    p = np.array([0.1, 0.3, 0.35, 0.25])
    exact = script.moments(script.rule_tables(tie, cells=2, n=4, k=2), p)
    brute = _brute_force_moments(p, 2, 4, 2, tie)
    for est, value in brute.items():
        assert exact[est].mean_delta0 == pytest.approx(value, abs=1e-12), est


def test_readings_script_reproduces_the_study_and_its_simulation_agrees():
    """tie = overall, E[Delta0], random partition: the study's numbers; a simulation for 'coin'."""
    from simstudy.studies.nedelko_histogram.exact import exact_expectations, sample_tables
    script = _load_script()
    p = np.array([0.25, 0.1, 0.05, 0.2, 0.3, 0.1])
    study = exact_expectations(sample_tables(3, 12, 4), p[None]).set_index("estimator")["mean_delta0"]
    mine = script.moments(script.rule_tables("overall"), p)
    for est in ("loo", "kfold", "empirical"):
        assert mine[est].mean_delta0 == pytest.approx(study[est], abs=1e-14)
    coin = script.rule_tables("coin")
    check = script.monte_carlo_check(coin, p, 20000, np.random.default_rng(5)).set_index("estimator")
    for est in ("loo", "kfold", "empirical"):
        assert 2 * stats.norm.sf(abs(check.loc[est, "z"])) > 1e-3, est


@pytest.mark.parametrize("tie", TIE_RULES)
def test_study_tie_option_equals_the_readings_script(tie):
    """study.tie: the study's exact expectations equal the script's independent computation."""
    from simstudy.studies.nedelko_histogram.exact import exact_expectations, sample_tables
    script = _load_script()
    grid = np.array([[0.1, 0.3, 0.35, 0.25], [0.5, 0.0, 0.25, 0.25], [0.2, 0.2, 0.3, 0.3]])
    study = exact_expectations(sample_tables(2, 8, 4, tie), grid)
    tables = script.rule_tables(tie, cells=2, n=8, k=4)
    for g, p in enumerate(grid):
        mine = script.moments(tables, p)
        rows = study[study["distribution"] == g].set_index("estimator")
        for est in ("loo", "kfold", "empirical"):
            assert rows.loc[est, "mean_delta0"] == pytest.approx(mine[est].mean_delta0, abs=1e-14), (tie, g, est)
            assert rows.loc[est, "mean_estimate"] == pytest.approx(mine[est].mean, abs=1e-14)
        assert rows["mean_true_risk"].iloc[0] == pytest.approx(mine["loo"].risk, abs=1e-14)


def test_study_counts_by_hand():
    import pandas as pd

    from simstudy.studies.nedelko_histogram.study import by_bayes_error, winner_counts

    wide = pd.DataFrame({"loo": [0.1, 0.2, 0.0, 0.3, 0.05], "kfold": [0.2, 0.1, 0.0, 0.3 + 1e-13, 0.05],
                         "empirical": [0.05, 0.15, 0.0, 0.1, 0.2]})
    assert winner_counts(wide) == {"loo < kfold": 1, "kfold < loo": 1, "empirical smallest": 2, "loo < empirical": 1,
                                   "kfold < empirical": 2, "all equal": 1}
    table = by_bayes_error(wide, pd.Series([0.0, 0.0, 0.0, 0.5, 0.5])).set_index("bayes_error")
    assert table.loc[0.0, "distributions"] == 3 and table.loc[0.0, "all equal"] == 1
    assert table.loc[0.5, "empirical smallest"] == 1 and table.loc[0.0, "loo < kfold"] == 1
    assert table.loc[0.5, "loo / kfold"] == pytest.approx(0.35 / (0.35 + 1e-13))
