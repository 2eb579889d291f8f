"""The cv_variance study: seed invariance, aggregation rules, failure capture."""
import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from simstudy.cv.losses import zero_one
from simstudy.engine.chunks import plan_chunks
from simstudy.engine.config import RunnerConfig
from simstudy.engine.runner import run_chunks
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations import LogisticPopulation, TabularPopulation
from simstudy.studies.cv_variance.aggregate import aggregate
from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions


def _records(worker, replicates, n_jobs, chunk_size, backend="loky", max_failure_rate=0.2):
    report = run_chunks(worker, [replicates] * len(worker.conditions),
                        RunnerConfig(chunk_size=chunk_size, n_jobs=n_jobs, backend=backend, progress=False,
                                     max_failure_rate=max_failure_rate))
    return report.records


@pytest.fixture
def worker():
    pop = LogisticPopulation(0.2)
    conds = make_conditions([20, 40], 5, pop)
    return CVVarianceWorker(pop, SklearnLearner(DecisionTreeClassifier(), "tree"), zero_one, conds, seed=3, truth=False)


def test_identical_records_for_any_n_jobs_chunking_and_backend(worker):
    ref = _records(worker, 24, n_jobs=1, chunk_size=24, backend="sequential")
    for n_jobs, chunk, backend in [(2, 5, "loky"), (2, 3, "fork"), (2, 7, "threading"), (1, 1, "sequential")]:
        other = _records(worker, 24, n_jobs=n_jobs, chunk_size=chunk, backend=backend)
        pd.testing.assert_frame_equal(ref.drop(columns="fold_means"), other.drop(columns="fold_means"))
        np.testing.assert_array_equal(np.stack(ref.fold_means), np.stack(other.fold_means))


def test_replicate_does_not_depend_on_other_conditions(worker):
    alone = CVVarianceWorker(worker.population, worker.learner, zero_one, make_conditions([40], 5, worker.population),
                             seed=3, truth=False)
    both = _records(worker, 6, 1, 6, "sequential")
    only40 = _records(alone, 6, 1, 6, "sequential")
    np.testing.assert_array_equal(both[both.n == 40].mu_hat.to_numpy(), only40.mu_hat.to_numpy())


def test_records_are_consistent(worker):
    rec = _records(worker, 10, 1, 10, "sequential")
    fm = np.stack(rec.fold_means)
    np.testing.assert_allclose(rec.mu_hat, fm.mean(1))
    np.testing.assert_allclose(rec.theta3, fm.var(1, ddof=1) / 5)
    assert set(np.unique(fm[rec.n == 20] * 4)) <= set(range(5))  # 0-1 loss on folds of m = 4 (n = 20)


def test_exact_truth_on_a_finite_population():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    pop = TabularPopulation(X, y, name="toy")
    learner = SklearnLearner(DecisionTreeClassifier(max_depth=1), "stump")
    w = CVVarianceWorker(pop, learner, zero_one, make_conditions([20], 4, pop), seed=1, truth=True)
    losses, truth, truth_se = w.replicate(w.conditions[0], 0)
    assert losses.shape == (20,) and truth.shape == (4,) and np.all((truth >= 0) & (truth <= 1))
    assert np.all(truth_se == 0)  # a finite population's truth is exact
    rec = _records(w, 400, 1, 400, "sequential")
    # E[mu_hat] = E[true error of the fold models] exactly: paired z-test over replicates
    d = rec.mu_hat - rec.true_error
    z = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    assert abs(z) < 3.3
    summary, _ = aggregate(rec, 0.05, [0.0], "auto")
    assert summary.loc[0, "mu_source"] == "exact"
    assert summary.loc[0, "mu"] == pytest.approx(rec.true_error.mean())


def _hand_records(fold_means, n=4, K=2):
    fm = np.asarray(fold_means, float)
    mu = fm.mean(1)
    return pd.DataFrame({"n": n, "K": K, "replicate": range(len(fm)), "mu_hat": mu,
                         "theta1": mu**2, "theta2": 0.0, "theta3": fm.var(1, ddof=1) / K,
                         "theta4": 0.0, "theta5": 0.0, "fold_means": list(fm), "error": ""})


def test_aggregate_hand_case_and_theta3_zero_rule():
    # four replicates, K = 2: mu_true = mean mu_hat = 0.5
    rec = _hand_records([[0.5, 0.5], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    rec.loc[0, "fold_means"] = np.array([1.0, 1.0])  # theta3 = 0 and mu_hat = 1 != mu_true
    rec.loc[0, ["mu_hat", "theta3"]] = [1.0, 0.0]
    summary, tests = aggregate(rec, 0.05, [0.0, 0.7], "mean_cv")
    mu = np.array([1.0, 0.5, 0.5, 0.5])
    assert summary.loc[0, "mu"] == pytest.approx(mu.mean())
    assert summary.loc[0, "theta"] == pytest.approx(mu.var(ddof=1))
    assert summary.loc[0, "theta3_zero"] == 2
    assert summary.loc[0, "rho"] == pytest.approx(1 - np.mean([0, 0.25, 0.25, 0]) / mu.var(ddof=1))
    # replicate 0: infinite t -> rejects; replicate 3: flat but mu_hat != mu_true (0.625) -> rejects
    assert list(tests.rejections) == [2, 2]


def test_failing_replicates_are_recorded_not_dropped():
    class Flaky(DecisionTreeClassifier):
        def fit(self, X, y, **kw):
            if len(y) == 32:  # n = 40 training folds only
                raise RuntimeError("boom")
            return super().fit(X, y, **kw)

    pop = LogisticPopulation(0.2)
    w = CVVarianceWorker(pop, SklearnLearner(Flaky(), "flaky"), zero_one, make_conditions([20, 40], 5, pop), 0, False)
    rec = _records(w, 5, 1, 5, "sequential", max_failure_rate=1.0)  # 5 of 10 fail: recorded, not stopped
    assert len(rec) == 10
    failed = rec[rec.error != ""]
    assert list(failed.n.unique()) == [40] and failed.error.str.contains("RuntimeError: boom").all()
    summary, tests = aggregate(rec, 0.05, [0.0], "auto")
    assert list(summary.failed) == [0, 5]
    w.on_error = "raise"
    with pytest.raises(RuntimeError, match="boom"):
        w(plan_chunks([5, 5], 5)[1])


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7])
def test_gaussian_folds_study_checks_proposition2(rho):
    """Through the whole study pipeline: rho_hat = rho has level alpha, rho_hat = 0 the analytic
    rate P(|t_{K-1}| > t_crit sqrt(1 - rho)), Var(mu_hat) the exact theta, rho = gamma/theta."""
    from scipy import stats

    from simstudy.populations import GaussianFoldsPopulation

    pop = GaussianFoldsPopulation(rho=rho, mean=0.25, sigma=2.0)
    w = CVVarianceWorker(pop, None, zero_one, make_conditions([40], 10, pop), seed=11, truth=False)
    R = 4000
    rec = _records(w, R, 1, 1000, "sequential")
    summary, tests = aggregate(rec, 0.05, sorted({0.0, rho}), "auto")
    assert summary.loc[0, "mu"] == 0.25 and summary.loc[0, "mu_source"] == "exact"
    t = tests.set_index("rho_hat")
    assert stats.binomtest(int(t.loc[rho, "rejections"]), R, 0.05).pvalue > 1e-3
    t_crit = stats.t.ppf(0.975, 9)
    analytic = 2 * stats.t.sf(t_crit * np.sqrt(1 - rho), 9)
    assert stats.binomtest(int(t.loc[0.0, "rejections"]), R, analytic).pvalue > 1e-3
    ratio = summary.loc[0, "theta"] / pop.theta(40)  # ~ chi2(R-1)/(R-1)
    assert 2 * min(stats.chi2.cdf(ratio * (R - 1), R - 1), stats.chi2.sf(ratio * (R - 1), R - 1)) > 1e-3
    assert abs(summary.loc[0, "rho"] - rho) < 4 * summary.loc[0, "rho_se"]


@pytest.mark.parametrize("dataset, squares", [("letter", True), (None, False)])
def test_type1_figure_names_the_papers_squares_only_where_it_draws_them(dataset, squares):
    """With a paper dataset the open squares are drawn and the caption names them; without one
    (e.g. the default logistic population) neither."""
    from simstudy.studies.cv_variance.figures import plot_type1_vs_n

    tests = pd.DataFrame({"n": [20, 40] * 2, "K": 10, "test": "cv_t", "rho_hat": [0.0, 0.0, 0.7, 0.7], "alpha": 0.05,
                          "rejection_rate": 0.05, "ci_low": 0.03, "ci_high": 0.08})
    fig = plot_type1_vs_n(tests, 0.05, dataset)
    caption = " ".join(t.get_text() for t in fig.texts)
    drawn = [line for line in fig.axes[0].lines if line.get_marker() == "s" and line.get_markerfacecolor() == "none"]
    assert ("Open squares" in caption) is squares and bool(drawn) is squares
    assert "95% Wilson intervals" in caption
