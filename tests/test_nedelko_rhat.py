"""Nedelko's R_hat without the oracle: hand values, the histogram worst case, simulation checks
(the checks of experiments/nedelko_rhat.py)."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simstudy.inference.risk_bounds import (
    apply_rhat, effective_cells, halfplane_growth, histogram_cell_terms, histogram_worst_case_bias, rhat_bias_bound,
    vc_halfplane_bias,
)

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "nedelko_rhat.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("nedelko_rhat", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                    # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


script = _load_script()


# ----------------------------------------------------------------------------- hand-computed values
def test_one_cell_by_hand():
    # N = 1: the single point is always fitted (R_emp = 0); R = 2 q (1 - q), largest at q = 1/2
    one = histogram_worst_case_bias(1, 1)
    assert one.r_max == pytest.approx(0.0, abs=1e-12) and float(one(0.0)) == pytest.approx(0.5, abs=1e-9)
    # N = 2: E R_emp = q (1 - q) (a 1-1 tie costs one of two points), E R = 2 q (1 - q): b(r) = r on [0, 1/4]
    two = histogram_worst_case_bias(2, 1)
    assert two.r_max == pytest.approx(0.25, abs=1e-9)
    np.testing.assert_allclose(two(np.array([0.0, 0.05, 0.1, 0.2, 0.25])), [0.0, 0.05, 0.1, 0.2, 0.25], atol=1e-3)


@pytest.mark.parametrize("cells,expected", [(2, 0.5 * (1 / 21) * (20 / 21) ** 20),   # 0.0089736
                                            (3, (1 / 21) * (20 / 21) ** 20)])        # 0.0179471
def test_zero_empirical_risk_by_hand(cells, expected):
    # R_emp = 0 forces q_j in {0, 1}: the bias is the coin in empty cells, sum_j p_j (1 - p_j)^N / 2,
    # largest with n - 1 cells of mass 1/(N + 1) (the maximiser of p (1 - p)^N) and the rest in one cell
    assert float(histogram_worst_case_bias(20, cells)(0.0)) == pytest.approx(expected, abs=1e-4)


def test_vc_halfplane_by_hand():
    assert [halfplane_growth(m) for m in (1, 2, 3, 4, 40)] == [2, 4, 8, 14, 1562]
    # E = 4 (ln 1562 + ln 80) / 20 = 4 (7.353722 + 4.382027) / 20 = 2.3471498
    assert float(vc_halfplane_bias(0.0, 20)) == pytest.approx(2.3471498, abs=1e-6)
    # b(0.1) = (E/2)(1 + sqrt(1 + 0.4/E)) = 1.1735749 * 2.081859 = 2.443218
    assert float(vc_halfplane_bias(0.1, 20)) == pytest.approx(2.443218, abs=1e-5)
    assert float(apply_rhat(0.1, 20, "vc_halfplane")) == 1.0       # vacuous at N = 20


def test_effective_cells():
    assert effective_cells(20) == pytest.approx(np.log2(382))       # 8.58
    assert effective_cells(20, "vc_dimension") == 3.0
    b8, b9 = (float(histogram_worst_case_bias(20, n)(0.1)) for n in (8, 9))
    t = np.log2(382) - 8
    assert float(rhat_bias_bound(0.1, 20)) == pytest.approx((1 - t) * b8 + t * b9)
    assert b8 <= b9                                                  # more cells, more room for the worst case


# ----------------------------------------------------------------------------- histogram worst case
def _simulate_histogram(N, p, q, samples, rng):
    """Monte Carlo E R and E R_emp of the cell-majority classifier with a fair coin on ties."""
    cells = rng.choice(len(p), size=(samples, N), p=p)
    labels = rng.random((samples, N)) < q[cells]
    risks, emps = np.empty(samples), np.empty(samples)
    for s in range(samples):
        k1 = np.bincount(cells[s], weights=labels[s], minlength=len(p))
        m = np.bincount(cells[s], minlength=len(p))
        k0 = m - k1
        err = np.where(k1 > k0, 1 - q, np.where(k1 < k0, q, 0.5))
        risks[s], emps[s] = p @ err, np.minimum(k0, k1).sum() / N
    return risks, emps


def test_cell_terms_against_simulation():
    rng = np.random.default_rng(2)
    p, q, N = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.5, 0.9]), 8
    rho = np.array([histogram_cell_terms(N, pj, qj)[0][0, 0] for pj, qj in zip(p, q)])
    e = np.array([histogram_cell_terms(N, pj, qj)[1][0, 0] for pj, qj in zip(p, q)])
    risks, emps = _simulate_histogram(N, p, q, 20000, rng)
    for sim, exact in ((risks, rho.sum()), (emps, e.sum())):
        z = (sim.mean() - exact) / (sim.std() / np.sqrt(len(sim)))
        assert 2 * stats.norm.sf(abs(z)) > 1e-3


def test_worst_case_bounds_every_histogram_distribution():
    """sum_j beta_j <= B_n(sum_j e_j) for random distributions over n cells (exact, no simulation)."""
    rng = np.random.default_rng(5)
    N, n = 10, 3
    wc = histogram_worst_case_bias(N, n)
    for _ in range(300):
        p = rng.dirichlet(np.full(n, rng.choice([0.2, 1.0, 5.0])))
        q = rng.random(n) ** rng.choice([1, 3])
        terms = [histogram_cell_terms(N, pj, qj) for pj, qj in zip(p, q)]
        rho = sum(t[0][0, 0] for t in terms)
        e = sum(t[1][0, 0] for t in terms)
        assert rho - e <= float(wc(e)) + 1e-3


def test_grid_refinement_changes_little():
    coarse = histogram_worst_case_bias(10, 3)
    fine = histogram_worst_case_bias(10, 3, p_steps=400, q_steps=200, n_lambda=1601)
    r = np.linspace(0, coarse.r_max, 30)
    assert np.max(np.abs(coarse(r) - fine(r))) < 1e-3


# ----------------------------------------------------------------------------- simulation checks (Fisher)
@pytest.fixture(scope="module")
def fisher_runs():
    """Full-sample Fisher fits (tie rule random) on the check distributions, N = 20 and 200."""
    out = {}
    for cp in script.check_populations((0.05, 0.2, 0.4)):
        for N in (20, 200):
            out[cp.label, N] = script.full_sample_fits(cp, N, 1500, seed=1, tie_rule="random")
    return out


def test_vc_bound_holds_by_binomial_test(fisher_runs):
    for (label, N), est in fisher_runs.items():
        check = script.vc_check(est, N, 0.05)
        assert check["p_value"] > 1e-3, (label, N, check)


def test_worst_case_bias_bounds_fisher_optimism(fisher_runs):
    """The heuristic transfer holds on the family (R0 0.05, 0.2, 0.4) and outside it."""
    for (label, N), est in fisher_runs.items():
        if N == 20:
            check = script.worst_case_check(est, N)
            assert check["p_value"] > 1e-3, (label, check)


# ----------------------------------------------------------------------------- apply_rhat
def test_apply_rhat_clips_and_dispatches_per_sample_size():
    emp = np.array([0.0, 0.1, 0.45, 0.1])
    sizes = np.array([20, 20, 20, 30])
    out = apply_rhat(emp, sizes)
    assert out[0] == pytest.approx(float(rhat_bias_bound(0.0, 20)))
    assert out[3] == pytest.approx(0.1 + float(rhat_bias_bound(0.1, 30)))
    assert np.all((out >= 0) & (out <= 1))
    with pytest.raises(ValueError, match="rhat_method"):
        apply_rhat(emp, 20, "mean_curve")


def test_oracle_variant_is_the_table_lookup():
    from simstudy.studies.nedelko_fisher.aggregate import add_rhat

    table = pd.DataFrame({"sample_size": 4, "errors": range(5), "bias": [0.1, 0.1375, 0.15, 0.16, 0.175]})
    rec = pd.DataFrame({"sample_size": [4, 4, 4], "empirical": [0.25, 1.0, 0.0]})
    expected = [0.25 + 0.1375, 1.0, 0.1]                  # R_emp + b(k), clipped to [0, 1]
    np.testing.assert_allclose(apply_rhat(rec["empirical"], rec["sample_size"], "oracle_mean_curve", table=table),
                               expected)
    np.testing.assert_allclose(add_rhat(rec, table, "oracle_conditional_max"), expected)
    with pytest.raises(ValueError, match="table"):
        apply_rhat(rec["empirical"], 4, "oracle_mean_curve")


def test_full_sample_fits_are_the_study_learner():
    """The script's fits on the logistic family equal the study's calibration worker (same draw order)."""
    from simstudy.studies.base import Chunk
    from simstudy.studies.nedelko_fisher.worker import OptimismWorker, make_conditions

    cp = script.check_populations((0.2,))[0]
    fits = script.full_sample_fits(cp, 20, 50, seed=3)
    cond = make_conditions([20], [0.2])[0]
    study = OptimismWorker([type(cond)(20, 0.2, script.condition_key({"key": cp.key, "N": 20}))], 3, "random")
    rec = study(Chunk(0, 0, 50))
    np.testing.assert_array_equal(fits.empirical, rec["empirical"])
    np.testing.assert_allclose(fits.true_risk, rec["true_risk"], atol=1e-12)


def test_outside_population_risk_against_a_million_points():
    pop = script.OUTSIDE_POPULATIONS["contaminated"]
    s = pop.sample(1_000_000, np.random.default_rng(4))
    w, c = np.array([0.7, -0.4]), 0.2
    errors = int(np.sum((s.X @ w > c).astype(int) != s.y))
    assert stats.binomtest(errors, 1_000_000, float(pop.risk(w, c))).pvalue > 1e-3
