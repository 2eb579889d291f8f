"""The exact fast fit of LinearRegression and Ridge (simstudy.learners.linear.exact): scikit-learn's
coefficients and predictions bit for bit, the same random draws, and scikit-learn itself where it
changes method."""
import itertools

import numpy as np
import pytest
from sklearn.linear_model import Lasso, LinearRegression, Ridge

from simstudy.learners.linear.exact import LinearFit, linear_fast_path
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations.base import Sample


def _problem(rng, n, p, kind):
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 10, size=p) + rng.normal(size=p)
    if kind == "collinear" and p > 1:
        X[:, -1] = 2.0 * X[:, 0] - X[:, 1 % p]
    if kind == "integer":
        X = np.round(X)
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    return X, y


ESTIMATORS = [LinearRegression(), LinearRegression(fit_intercept=False), LinearRegression(tol=1e-3),
              Ridge(alpha=1.0), Ridge(alpha=1e-8), Ridge(alpha=100.0, fit_intercept=False),
              Ridge(alpha=0.5, solver="cholesky"), Ridge(alpha=3)]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_fits_are_scikit_learns_bit_for_bit(estimator):
    rng = np.random.default_rng(7)
    fast = linear_fast_path(estimator)
    assert fast is not None
    checked = 0
    for n, p, kind in itertools.product((3, 9, 18, 22, 45, 180, 900), (1, 5, 10), ("plain", "collinear", "integer")):
        X, y = _problem(rng, n, p, kind)
        ours = fast.fit(X, y)
        if ours is None:  # Ridge with p > n, or a failed Cholesky: scikit-learn's other route
            assert isinstance(estimator, Ridge)
            continue
        ref = estimator.__class__(**estimator.get_params()).fit(X, y)
        assert np.array_equal(ours.coef_, ref.coef_), (n, p, kind)
        assert np.array_equal(np.asarray(ours.intercept_), np.asarray(ref.intercept_)), (n, p, kind)
        Xnew = rng.normal(size=(50, p))
        assert np.array_equal(ours.predict(Xnew), ref.predict(Xnew)), (n, p, kind)
        checked += 1
    assert checked >= 40


def test_ridge_leaves_scikit_learns_other_routes_to_scikit_learn():
    rng = np.random.default_rng(1)
    X, y = _problem(rng, 4, 10, "plain")                     # more features than rows: the kernel form
    assert linear_fast_path(Ridge()).fit(X, y) is None
    learner = SklearnLearner(Ridge(), name="ridge")
    model = learner.fit(learner.start(Sample(X=X, y=y)), np.arange(4), np.random.default_rng(0))
    assert isinstance(model, Ridge)                           # fitted by scikit-learn itself


@pytest.mark.parametrize("estimator", [Ridge(positive=True), Ridge(solver="svd"), Ridge(alpha=np.array([1.0])),
                                       LinearRegression(positive=True), Lasso()], ids=repr)
def test_other_settings_have_no_fast_path(estimator):
    assert linear_fast_path(estimator) is None


@pytest.mark.parametrize("estimator", [LinearRegression(), Ridge(alpha=2.0)], ids=repr)
def test_learner_paths_agree_and_draw_the_same_seeds(estimator):
    """Through the learner, fast and plain paths give the same predictions and leave the
    generator in the same state (Ridge's random_state=None gets a seed per fit either way)."""
    rng = np.random.default_rng(3)
    X, y = _problem(rng, 60, 5, "plain")
    out = {}
    for fast in (True, False):
        learner = SklearnLearner(estimator, name="lin", fast_path=fast)
        assert learner.fast_path is fast and learner.dtype == np.float64
        state = learner.start(Sample(X=X, y=y))
        gen = np.random.default_rng(11)
        models = [learner.fit(state, np.flatnonzero(np.arange(60) % 5 != k), gen) for k in range(5)]
        assert all(isinstance(m, LinearFit) for m in models) is fast
        preds = [learner.predict(state, m, np.flatnonzero(np.arange(60) % 5 == k)) for k, m in enumerate(models)]
        out[fast] = (np.concatenate(preds), learner.predict_features(models[0], X[:7]), gen.integers(0, 2**62))
    assert np.array_equal(out[True][0], out[False][0]) and np.array_equal(out[True][1], out[False][1])
    assert out[True][2] == out[False][2]
    assert SklearnLearner(estimator, name="lin").describe()["fast_path"] is True


def test_regression_study_records_equal_with_and_without_the_fast_path():
    """cv_variance on the Gaussian linear model with exact truth: the same records either way."""
    from simstudy import engine

    records = {}
    for fast in (True, False):
        plan = engine.prepare("cv_variance", population={"kind": "gaussian_linear"},
                              learner={"name": "ridge_regressor", "fast_path": fast,
                                       "estimator": {"_target_": "sklearn.linear_model.Ridge", "alpha": 1.0}},
                              runner={"n_jobs": 1}, sizes=[20, 25], K=10, replicates=30, truth=True, loss="squared")
        records[fast] = engine.execute(plan).records.drop(columns=["seconds"], errors="ignore")
    assert records[True].equals(records[False])
