"""Data-driven rho_hat (simstudy.inference.rho_hat): hand-computed values, theory on the
example-level gaussian_folds model (rho and theta known exactly at every size), and Monte Carlo
calibration of the tests judged with binomial tests."""
import numpy as np
import pytest
from scipy import stats

from simstudy.cv.splits import KFold
from simstudy.inference import (cv_t_test, nadeau_bengio_rho, subsample_cv, subsample_rho, subsample_variance,
                                SubsampleCV)
from simstudy.inference.rho_hat import RHO_MAX, subsample_size
from simstudy.populations.synthetic import GaussianFoldsPopulation


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
    # 2 splits into halves (h = 10 of n = 20), K = 5
    sub = SubsampleCV(mu_hats=np.array([[0.1, 0.3], [0.2, 0.2]]),
                      theta3s=np.array([[0.004, 0.006], [0.005, 0.005]]), n=20, n_sub=10, K=5)
    v = subsample_variance(sub)
    # theta(h) = mean((0.1-0.3)^2, 0)/2 = 0.01; theta(n) = 0.01 * 10 / 20 = 0.005
    assert v.theta == pytest.approx(0.005)
    assert v.df == 2
    r = subsample_rho(sub)
    assert r.raw_rho == pytest.approx(1 - 0.005 / 0.01)
    assert r.rho == pytest.approx(0.5)
    assert np.isnan(r.theta) and r.df == 4
    fm = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    assert r.test(fm).pvalue == pytest.approx(cv_t_test(fm, rho=0.5).pvalue)
    assert v.test(fm).se == pytest.approx(np.sqrt(0.005))
    # clipping
    low = subsample_rho(SubsampleCV(np.array([[0.1, 0.2]]), np.array([[1.0, 1.0]]), 20, 10, 5))
    assert low.raw_rho < 0 and low.rho == 0
    flat = subsample_rho(SubsampleCV(np.array([[0.2, 0.2]]), np.array([[0.0, 0.0]]), 20, 10, 5))
    assert flat.rho == RHO_MAX


def test_subsample_size_and_splits():
    assert subsample_size(20, 10) == 10
    assert subsample_size(2000, 10) == 1000
    assert subsample_size(150, 10) == 70
    with pytest.raises(ValueError, match="n >= 20"):
        subsample_size(19, 10)
    seen = []
    sub = subsample_cv(lambda rows, g: (seen.append(rows), np.zeros(5))[1], 25, 5, 3, np.random.default_rng(0))
    assert sub.mu_hats.shape == (3, 2) and sub.n_sub == 10
    for b in range(3):   # the two halves of a split are disjoint
        assert len(seen[2 * b]) == 10 and not set(seen[2 * b]) & set(seen[2 * b + 1])


def _gaussian_replicates(rho, n, K, B, R, seed):
    """Fold means and SubsampleCV of R replicates of the example-level gaussian_folds model."""
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
    """theta(h) and E[theta3(h)] are known exactly: the half-sample estimate is unbiased for
    theta(h) = sigma^2 / (h (1 - rho)), the mean half theta3 for sigma^2 / h, theta_hat(n) for
    theta(n) (the 1/s law is exact here); their pooled ratio gives rho (delta method)."""
    rho, n, K, B = 0.5, 100, 10, 4
    pop, fm, sub = _gaussian_replicates(rho, n, K, B, 1500, seed=3)
    h = sub.n_sub
    theta_half = np.mean((sub.mu_hats[..., 0] - sub.mu_hats[..., 1]) ** 2, axis=-1) / 2
    limit = stats.norm.ppf(1 - 0.001 / 2)     # each check: two-sided at level 0.001
    assert abs(_z(theta_half, pop.sigma ** 2 / (h * (1 - rho)))) < limit
    assert abs(_z(sub.theta3s.mean(axis=(1, 2)), pop.sigma ** 2 / h)) < limit
    assert abs(_z(subsample_variance(sub).theta, pop.theta(n))) < limit
    a, b = sub.theta3s.mean(axis=(1, 2)), theta_half
    pooled_rho = 1 - a.mean() / b.mean()
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
    """Monte Carlo calibration: the subsample-variance t-test (B df) has size alpha on the
    example-level gaussian_folds model (binomial test), where the usual t (rho_hat = 0) does not."""
    rho, n, K, B, R = 0.5, 100, 10, 5, 3000
    pop, fm, sub = _gaussian_replicates(rho, n, K, B, R, seed=5)
    rejected = np.sum(subsample_variance(sub).test(fm, mu0=pop.mean).pvalue < 0.05)
    assert _binomial_ok(rejected, R, 0.05), rejected / R
    usual = np.sum(cv_t_test(fm, mu0=pop.mean).pvalue < 0.05)
    assert not _binomial_ok(usual, R, 0.05)


def test_subsample_rho_satterthwaite_df():
    sub = SubsampleCV(np.array([[0.1, 0.3], [0.2, 0.2]]), np.array([[0.004, 0.006], [0.005, 0.005]]), 20, 10, 5)
    r = subsample_rho(sub, df="satterthwaite")
    assert r.df == pytest.approx(1 / (1 / 4 + 1 / 2 + 1 / 16))
    fm = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    folds = subsample_rho(sub).test(fm)
    satt = r.test(fm)
    assert satt.statistic == pytest.approx(folds.statistic)      # the same statistic (eq. 9, rho_hat = 0.5)
    assert satt.pvalue == pytest.approx(2 * stats.t.sf(abs(folds.statistic), r.df))
    with pytest.raises(ValueError, match="satterthwaite"):
        subsample_rho(sub, df="other")


def test_figures_are_small_multiples_with_wilson_bars_and_the_sizes_run():
    """Issue 15's convention on the rho_hat figures (per run, and the combined one of experiments/rho_hat_summary.py):
    at most 5 series per panel (+ the goal band), no legend inside a panel, one figure legend, x ticks at the sizes
    run; drawn from the committed tables of results/rho_hat/letter_tree (no replicate recomputed)."""
    import importlib.util
    from pathlib import Path

    import matplotlib.pyplot as plt
    import pandas as pd

    from simstudy.studies.rho_hat.figures import FAMILIES, rho_hat_figures

    root = Path(__file__).resolve().parents[1]
    run = root / "results" / "rho_hat" / "letter_tree"
    summary, tests = pd.read_csv(run / "summary.csv"), pd.read_csv(run / "tests.csv")
    spec = importlib.util.spec_from_file_location("rho_hat_summary", root / "experiments" / "rho_hat_summary.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    per_run = rho_hat_figures(summary, tests, 0.05, "letter, tree")["size_power_vs_n"]()
    combined = script.size_power_figure([("letter_tree", summary, tests)] * 2, 0.05, None)
    sizes = [str(n) for n in sorted(tests["n"].unique())]
    for fig in (per_run, combined):
        fig.canvas.draw()
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert fig.legends and len(panels) >= 2 * len(FAMILIES)
        for ax in panels:
            assert ax.get_legend() is None
            labels = [lab for lab in ax.get_legend_handles_labels()[1] if not lab.startswith("_")]
            assert len([lab for lab in labels if not lab.startswith("goal")]) <= 5, labels
            assert [t.get_text() for t in ax.get_xticklabels()] == sizes
        plt.close(fig)
