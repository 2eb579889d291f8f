"""Regression populations and their truth, any loss and any n in the studies, label noise.

Monte Carlo checks are z-tests (or binomial tests) at level 1e-3 per check; a check that
fails here means a real discrepancy far more often than chance (Bonferroni across a test's
checks where there are several).
"""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from conftest import ROOT
from simstudy import run_study
from simstudy.cv.losses import absolute, squared, zero_one
from simstudy.errors import ConfigError
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations import TabularPopulation, build_population
from simstudy.populations.noise import LabelNoisePopulation
from simstudy.populations.regression import (Friedman1Population, GaussianLinearPopulation, friedman1_mean,
                                             linear_predictor_risk)
from simstudy.populations.truth import true_risks

LEVEL = 1e-3


def _z_ok(values, target, checks=1):
    """Two-sided z-test of mean(values) == target at level LEVEL / checks."""
    values = np.asarray(values, dtype=float)
    z = (values.mean() - target) / (values.std(ddof=1) / np.sqrt(values.size))
    return abs(z) < stats.norm.isf(LEVEL / (2 * checks)), z


# ----------------------------------------------------------------------------- closed form vs Monte Carlo
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_gaussian_linear_closed_form_matches_a_large_sample(loss):
    pop = GaussianLinearPopulation(p=3, beta=[1.0, -0.5, 0.25], sigma=0.7, correlation=0.4)
    predictors = [(np.array([1.0, -0.5, 0.25]), 0.0), (np.zeros(3), 0.3), (np.array([0.2, 0.9, -1.0]), -0.8)]
    s = pop.sample(400_000, np.random.default_rng(11))
    for w, b in predictors:
        exact = linear_predictor_risk(w, b, pop.beta, pop.Sigma, pop.sigma, loss)
        residual = s.y - (s.X @ w + b)
        values = residual**2 if loss == "squared" else np.abs(residual)
        ok, z = _z_ok(values, exact, checks=len(predictors))
        assert ok, (w, b, exact, values.mean(), z)
    assert pop.bayes_risk("squared") == pytest.approx(0.49)


def test_exact_route_for_linear_models_and_sample_route_for_trees():
    pop = GaussianLinearPopulation(p=4, evaluation_size=50_000)
    s = pop.sample(60, np.random.default_rng(1))
    rows = np.arange(60)
    for estimator in (LinearRegression(), Ridge(alpha=3.0)):
        learner = SklearnLearner(estimator, "lin")
        model = learner.fit(learner.start(s), rows, np.random.default_rng(0))
        risks = true_risks(learner, [model], pop, squared)
        assert risks.mc_se[0] == 0.0                       # closed form
        w, b = model.coef_, model.intercept_
        assert risks.values[0] == pytest.approx(pop.sigma**2 + (w - pop.beta) @ pop.Sigma @ (w - pop.beta) + b**2)
        # the closed form agrees with the evaluation-sample mean (an independent route)
        X, y = pop.evaluation_set()
        ok, z = _z_ok((y - model.predict(X)) ** 2, risks.values[0], checks=2)
        assert ok, z
    tree = SklearnLearner(DecisionTreeRegressor(max_depth=3), "tree")
    model = tree.fit(tree.start(s), rows, np.random.default_rng(0))
    risks = true_risks(tree, [model], pop, squared)
    assert risks.mc_se[0] > 0                               # Monte Carlo, error reported


def test_friedman1_truth_matches_an_independent_sample():
    pop = Friedman1Population(sigma=1.5, evaluation_size=20_000)
    s = pop.sample(200, np.random.default_rng(3))
    learner = SklearnLearner(DecisionTreeRegressor(max_depth=4), "tree")
    model = learner.fit(learner.start(s), np.arange(200), np.random.default_rng(0))
    risks = true_risks(learner, [model], pop, squared)
    fresh = pop.sample(200_000, np.random.default_rng(99))   # independent of the evaluation sample
    loss = (fresh.y - model.predict(fresh.X)) ** 2
    se = np.hypot(loss.std(ddof=1) / np.sqrt(loss.size), risks.mc_se[0])
    z = (loss.mean() - risks.values[0]) / se
    assert abs(z) < stats.norm.isf(LEVEL / 2), z
    assert 0 < risks.mc_se[0] < 0.02 * risks.values[0]
    # other losses: the plain evaluation-set mean, also with its Monte Carlo error
    assert true_risks(learner, [model], pop, absolute).mc_se[0] > 0
    np.testing.assert_allclose(friedman1_mean(np.full((1, 10), 0.5)), 10 * np.sin(np.pi / 4) + 7.5)


def test_evaluation_sample_is_fixed_and_not_pickled():
    import pickle

    a, b = Friedman1Population(evaluation_size=2000), Friedman1Population(evaluation_size=2000)
    np.testing.assert_array_equal(a.evaluation_set()[1], b.evaluation_set()[1])
    assert pickle.loads(pickle.dumps(a))._evaluation is None


# ----------------------------------------------------------------------------- studies: any n, any loss
def test_cv_variance_unequal_folds_regression_with_exact_truth():
    r = run_study("cv_variance", population={"kind": "gaussian_linear", "p": 3}, learner="ols", sizes=[25],
                  K=10, replicates=300, truth=True, loss="squared", n_jobs=1, progress=False)
    rec = r.records
    sizes = np.array([3] * 5 + [2] * 5)
    fm = np.stack(rec.fold_means)
    ft = np.stack(rec.fold_true_errors)
    np.testing.assert_allclose(rec.mu_hat, fm @ sizes / 25)          # size-weighted: mean of the 25 losses
    np.testing.assert_allclose(rec.true_error, ft @ sizes / 25)
    assert "true_error_mc_se" not in rec                               # the truth is exact
    # E[mu_hat] = E[true_error] exactly (every loss is a fresh draw given its fold model)
    ok, z = _z_ok(rec.mu_hat - rec.true_error, 0.0, checks=2)
    assert ok, z
    ok, z = _z_ok(fm.mean(1) - ft.mean(1), 0.0, checks=2)             # the t-test's H0 (unweighted)
    assert ok, z
    s = r.summary.iloc[0]
    assert s["m"] == 2.5 and s["failed"] == 0
    assert s["rho"] == pytest.approx(1 - rec.theta3.mean() / rec.mu_hat.var(ddof=1))


def test_cv_variance_theta_from_the_generalised_estimators():
    from simstudy.inference import variance_estimates
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    pop = GaussianLinearPopulation(p=2)
    learner = SklearnLearner(LinearRegression(), "ols")
    w = CVVarianceWorker(pop, learner, squared, make_conditions([23], 4, pop), seed=5, truth=False)
    from simstudy.studies.base import Chunk

    rec = w(Chunk(0, 0, 3))
    for r in range(3):
        losses, _, _ = w.replicate(w.conditions[0], r)
        est = variance_estimates(losses, np.repeat(np.arange(4), [6, 6, 6, 5]))
        assert rec.theta3[r] == pytest.approx(float(est.theta3))
        assert rec.mu_hat[r] == pytest.approx(losses.mean())


def test_cv_clt_unequal_folds_regression_target_is_size_weighted():
    learners = {"ridge": {"_target_": "sklearn.linear_model.Ridge", "alpha": 1.0}}
    r = run_study("cv_clt", population={"kind": "gaussian_linear", "p": 3}, learners=learners,
                  comparisons=[["ridge", "ridge"]], sizes=[23], K=5, replicates=150, nested_cv_replicates=2,
                  loss="squared", n_jobs=1, progress=False)
    rec = r.records[r.records.subject == "ridge"]
    assert (r.records.error == "").all()
    # E[R_hat] = E[R_n] with R_n the size-weighted mean of the fold models' risks
    ok, z = _z_ok(rec.estimate - rec.target, 0.0)
    assert ok, z
    s = r.summary
    assert set(s.procedure) >= {"cv_clt_all_pairs", "nested_cv"} and (s.replicates > 0).all()


def test_cv_clt_on_friedman_reports_the_truth_error():
    learners = {"tree": {"_target_": "sklearn.tree.DecisionTreeRegressor", "max_depth": 3}}
    r = run_study("cv_clt", population={"kind": "friedman1", "evaluation_size": 2000}, learners=learners,
                  comparisons=[], sizes=[30], K=3, replicates=4, nested_cv_replicates=0, loss="absolute",
                  n_jobs=1, progress=False)
    assert (r.summary.target_mc_se > 0).all()


# ----------------------------------------------------------------------------- bad input: early and clear
@pytest.mark.parametrize("overrides,message", [
    (["population=gaussian_linear", "study.loss=squared", "study.truth=true"], "is a classification learner"),
    (["learner=ols"], "regression learner but population"),
    (["learner=tree", "study.loss=squared"], "study.loss='squared' is a regression loss"),
    (["population=gaussian_linear", "learner=ols", "study.loss=zero_one"], "is a classification loss"),
    (["population=gaussian_linear", "learner=ols", "study.loss=test_regression.nan_loss"], "non-finite"),
    (["population=gaussian_linear", "learner=ols", "study.loss=squared", "+population.label_noise=0.1"],
     "label noise flips class labels"),
    (["population=logistic", "population.label_noise=1.5"], "population.label_noise=1.5"),
    (["population=gaussian_linear", "population.sigma=-1", "learner=ols", "study.loss=squared"], "population.sigma"),
])
def test_bad_parts_are_config_errors(compose_config, overrides, message):
    from conftest import validate

    cfg = compose_config("experiment=debug", *overrides)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(".", r"\.")):
        validate(cfg)


def nan_loss(y, y_hat):
    return np.full(len(y), np.nan)


def test_cli_refuses_a_classifier_on_a_regression_population(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "simstudy.cli", "experiment=debug", "population=gaussian_linear",
                           "study.loss=squared", f"hydra.run.dir={tmp_path / 'bad'}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "classification learner" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "bad" / "replicates.parquet").exists()


# ----------------------------------------------------------------------------- tabular regression
def test_tabular_regression_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X @ [1.0, 2.0, -1.0] + 0.1 * rng.normal(size=50)
    path = tmp_path / "reg.csv"
    pd.DataFrame(np.column_stack([X, y]), columns=["a", "b", "c", "target"]).to_csv(path, index=False)
    pop = build_population({"kind": "tabular", "task": "regression", "path": str(path)})
    assert pop.task == "regression" and pop.y.dtype == np.float64
    np.testing.assert_allclose(pop.y, y)
    np.testing.assert_allclose(pop.X, X)
    r = run_study("cv_variance", population={"kind": "tabular", "task": "regression", "path": str(path)},
                  learner="ridge_regressor", sizes=[20], K=4, replicates=5, truth=True, loss="absolute",
                  n_jobs=1, progress=False)
    assert (r.records.error == "").all() and np.isfinite(r.records.true_error).all()
    # text in the target column names the field
    path.write_text("a,b,target\n1,2,x\n3,4,5\n5,6,7\n")
    with pytest.raises(ValueError, match="numeric target"):   # the CLI's exit 2, as every loading error
        build_population({"kind": "tabular", "task": "regression", "path": str(path)})
    with pytest.raises(ConfigError, match="population.positive"):
        build_population({"kind": "tabular", "task": "regression", "path": str(path), "positive": ["1"]})


def test_tabular_regression_through_fetch_openml(monkeypatch, tmp_path):
    from test_populations import _fake_openml

    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(40, 2)), 3)
    y = np.round(X[:, 0] - X[:, 1] + 0.5, 3)
    _fake_openml(monkeypatch, 4321, X, [repr(float(v)) for v in y], numeric_target=True)
    pop = build_population({"kind": "tabular", "task": "regression", "source": "openml", "openml_id": 4321,
                            "data_home": str(tmp_path)})
    np.testing.assert_allclose(pop.X, X)
    np.testing.assert_allclose(pop.y, y)
    assert pop.task == "regression"


# ----------------------------------------------------------------------------- label noise
def test_label_noise_flips_at_rate_eta_and_is_coupled_across_eta():
    X = np.random.default_rng(0).normal(size=(500, 2))
    base = TabularPopulation(X, (X[:, 0] > 0).astype(int), name="toy")
    clean = base.sample(4000, np.random.default_rng(7)).y
    flipped = {}
    for eta in (0.1, 0.3):
        noisy = LabelNoisePopulation(base, eta).sample(4000, np.random.default_rng(7))
        flipped[eta] = noisy.y != clean
        assert noisy.index is None
        p = stats.binomtest(int(flipped[eta].sum()), 4000, eta).pvalue
        assert p > LEVEL / 2, (eta, flipped[eta].mean())
    assert np.all(flipped[0.3][flipped[0.1]])        # flips at 0.1 are a subset of flips at 0.3
    # the streams do not depend on eta (seed_params does: the run identity)
    a, b = LabelNoisePopulation(base, 0.1), LabelNoisePopulation(base, 0.3)
    assert a.stream_params() == b.stream_params() and a.seed_params() != b.seed_params()
    assert a.fingerprint == base.fingerprint          # the data stay part of the run's identity


def test_noisy_truth_closed_form_equals_the_weighted_evaluation_set():
    X = np.random.default_rng(0).normal(size=(400, 2))
    base = TabularPopulation(X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int), name="toy")
    learner = SklearnLearner(DecisionTreeClassifier(max_depth=2), "stump")
    s = base.sample(60, np.random.default_rng(2))
    model = learner.fit(learner.start(s), np.arange(60), np.random.default_rng(0))
    eta = 0.2
    clean = true_risks(learner, [model], base, zero_one).values[0]
    noisy = LabelNoisePopulation(base, eta, "noisy")
    via_formula = true_risks(learner, [model], noisy, zero_one).values[0]
    assert via_formula == pytest.approx(eta + (1 - 2 * eta) * clean)
    Xe, ye = noisy.evaluation_set()                   # the general route: weighted evaluation set
    pred = learner.predict_features(model, Xe)
    assert np.average(zero_one(ye, pred), weights=noisy.evaluation_weights) == pytest.approx(via_formula)
    assert true_risks(learner, [model], LabelNoisePopulation(base, eta, "clean"), zero_one).values[0] == clean


def test_label_noise_study_truth_matches_the_cv_estimate():
    # the CV estimate on noisy labels estimates the noisy truth: E[mu_hat] = E[true error]
    pop = {"kind": "tabular", "path": None}
    X = np.random.default_rng(0).normal(size=(600, 2))
    base = TabularPopulation(X, (X[:, 0] > 0).astype(int), name="toy")
    r = run_study("cv_variance", population=LabelNoisePopulation(base, 0.25, "noisy"),
                  learner=DecisionTreeClassifier(max_depth=1), sizes=[40], K=5, replicates=300, truth=True,
                  n_jobs=1, progress=False)
    ok, z = _z_ok(r.records.mu_hat - r.records.true_error, 0.0)
    assert ok, z
    assert r.summary.true_error_mean.iloc[0] > 0.25
    del pop


def test_learning_curve_and_noise_curve_figures():
    from simstudy.studies.cv_variance.figures import cv_variance_figures, sweep_figures

    rows = []
    for eta in (0.0, 0.1, 0.2):
        for n in (20, 40):
            rows.append({"population.label_noise": eta, "n": n, "K": 10, "mu_hat_mean": 0.3 + eta, "mu_hat_se": 0.01,
                         "true_error_mean": 0.3, "true_error_se": 0.01, "rho": 0.2, "rho_se": 0.05,
                         "mu_hat_q05": 0.2, "mu_hat_q95": 0.5, "true_error_q05": 0.25, "true_error_q95": 0.35})
    summary = pd.DataFrame(rows)
    out = sweep_figures(summary, None, ["population.label_noise"])
    assert set(out) == {"rho_vs_n", "error_vs_label_noise"}
    tests = pd.DataFrame({"n": [20, 40], "K": 10, "test": "cv_t", "rho_hat": 0.0, "alpha": 0.05,
                          "rejection_rate": 0.05, "ci_low": 0.03, "ci_high": 0.08})
    figs = cv_variance_figures(summary[summary["population.label_noise"] == 0], tests, 0.05, loss="squared")
    assert "learning_curve" in figs
    ax = figs["learning_curve"]().axes[0]
    assert ax.get_ylabel() == "expected squared loss" and len(ax.lines) == 2   # mu_hat and the true error
