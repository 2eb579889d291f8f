"""The batched logistic kernel as a learner: the same models, predictions, probabilities, random
draws and study records as scikit-learn's LogisticRegression(solver="newton-cholesky")."""
import logging
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from simstudy.cv.loop import cross_validate, split_losses
from simstudy.cv.losses import log_loss, zero_one
from simstudy.cv.splits import FiveByTwo, KFold
from simstudy.errors import ConfigError
from simstudy.learners.dispatch import build_learner
from simstudy.learners.logistic.learner import LogisticLearner
from simstudy.learners.logistic.newton import SINGULAR_HESSIAN
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations import Sample
from simstudy.populations.truth import model_risks

from conftest import LETTER_FILE

NEWTON = {"_target_": "sklearn.linear_model.LogisticRegression", "solver": "newton-cholesky"}


@pytest.fixture(scope="module")
def letter():
    if not LETTER_FILE.exists():
        pytest.skip("shared Letter data not present")
    from simstudy.populations import build_population

    return build_population({"kind": "tabular", "name": "letter", "path": str(LETTER_FILE),
                             "positive": list("ABCDEFGHIJKLM")})


class _Binary:
    """A finite population stand-in: it declares its data (``finite_data``, what fast_kernel looks at)."""

    def __init__(self, y):
        self.X = np.zeros((len(y), 1))
        self.y = np.asarray(y)

    def finite_data(self, dtype=np.float64):
        return self.X.astype(dtype), self.y


def _pair(population, **params):
    spec = {"name": "logreg", "estimator": dict(NEWTON, **params)}
    return build_learner(spec, population), build_learner(dict(spec, engine="sklearn"), population)


def test_engine_selection(caplog):
    binary = _Binary([0, 1, 1, 0])
    kernel, sk = _pair(binary)
    assert isinstance(kernel, LogisticLearner) and isinstance(sk, SklearnLearner)
    assert kernel.describe()["engine"].startswith("simstudy batched logistic")
    with caplog.at_level(logging.INFO, logger="simstudy"):
        lbfgs = build_learner({"name": "lr", "estimator": {"_target_": "sklearn.linear_model.LogisticRegression"}},
                              binary)
        three = build_learner({"name": "lr", "estimator": NEWTON}, _Binary([0, 1, 2]))
    assert isinstance(lbfgs, SklearnLearner) and "solver='lbfgs'" in caplog.text
    assert isinstance(three, SklearnLearner) and "binary labels" in caplog.text
    forced = build_learner({"name": "lr", "engine": "numba",
                            "estimator": {"_target_": "sklearn.linear_model.LogisticRegression"}}, binary)
    assert isinstance(forced, LogisticLearner) and not forced.exact
    with pytest.raises(ConfigError, match="engine='numba' is invalid"):
        build_learner({"name": "lr", "engine": "numba", "estimator": NEWTON}, _Binary([0, 1, 2]))
    with pytest.raises(ConfigError, match="engine='numba' is invalid"):
        build_learner({"name": "lr", "engine": "numba", "estimator": dict(NEWTON, class_weight="balanced")}, binary)
    with pytest.raises(ValueError, match="labels 0 and 1"):
        kernel.start(Sample(np.zeros((3, 1)), np.array([0, 2, 1])))


@pytest.mark.parametrize("n", [100, 400])
def test_cross_validation_and_fits_equal_sklearn(letter, n):
    """Same fold models (to rounding), the same predictions and the same random draws as
    scikit-learn fold by fold; then the full sample and the 5x2 fits through ``fit``."""
    kernel, sk = _pair(letter)
    rng = np.random.default_rng(n)
    sample = letter.sample(n, rng)
    labels = KFold(10).labels(n, rng)
    halves = FiveByTwo().halves(n, rng)
    out = {}
    for name, learner in (("kernel", kernel), ("sklearn", sk)):
        fit_rng = np.random.default_rng(3)
        state = learner.start(sample)
        folds = cross_validate(learner, state, labels, 10, fit_rng, keep_models=True)
        full = learner.fit(state, np.arange(n), fit_rng)
        tests = [t for h in halves for t in (~h, h)]
        fbt = split_losses(learner, state, sample.y, zero_one, tests, fit_rng)
        truth = model_risks(learner, list(folds.models) + [full], letter, zero_one)
        out[name] = (folds, full, fbt, truth, fit_rng.integers(0, 2**62))
    (fk, fullk, fbtk, truthk, nextk), (fs, fulls, fbts, truths, nexts) = out["kernel"], out["sklearn"]
    np.testing.assert_array_equal(fk.predictions, fs.predictions)
    for model, est in zip(fk.models + [fullk], fs.models + [fulls]):
        assert np.abs(model.w - est.coef_[0]).max() < 1e-10 and abs(model.b - est.intercept_[0]) < 1e-10
        assert model.n_iter == est.n_iter_[0]
    for a, b in zip(fbtk, fbts):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(truthk, truths)
    assert nextk == nexts                       # the replicate's stream was consumed identically


def test_single_class_folds_draw_nothing_and_predict_their_class():
    """A training set holding one class: the constant rule, no seed drawn (as SklearnLearner)."""
    X = np.arange(24, dtype=float).reshape(12, 2)
    y = np.array([1] * 10 + [0, 0])
    labels = np.array([0] * 10 + [1, 1])        # fold 1's training set holds class 1 only
    kernel, sk = _pair(_Binary(y))
    got = {}
    for name, learner in (("kernel", kernel), ("sklearn", sk)):
        rng = np.random.default_rng(0)
        folds = cross_validate(learner, learner.start(Sample(X, y)), labels, 2, rng, keep_models=True)
        got[name] = (folds.predictions, rng.integers(0, 2**62))
    np.testing.assert_array_equal(got["kernel"][0], got["sklearn"][0])
    assert got["kernel"][1] == got["sklearn"][1]
    state = kernel.start(Sample(X, y))
    model = kernel.fit(state, np.arange(10), np.random.default_rng(0))
    assert model.constant and (kernel.predict(state, model, np.arange(12)) == 1).all()
    np.testing.assert_array_equal(kernel.predict_proba(state, model, np.arange(2)), [[0, 1], [0, 1]])


def test_repeated_rows_and_probabilities_equal_sklearn(letter):
    kernel, sk = _pair(letter)
    rng = np.random.default_rng(8)
    sample = letter.sample(200, rng)
    rows = rng.integers(0, 200, 200)            # a bootstrap: repeats are sample weights
    k_state, s_state = kernel.start(sample), sk.start(sample)
    model = kernel.fit(k_state, rows, np.random.default_rng(1))
    est = sk.fit(s_state, rows, np.random.default_rng(1))
    assert np.abs(model.w - est.coef_[0]).max() < 1e-10
    test = np.arange(200)
    np.testing.assert_allclose(kernel.predict_proba(k_state, model, test), sk.predict_proba(s_state, est, test),
                               rtol=0, atol=1e-12)
    X, y = letter.evaluation_set()
    np.testing.assert_allclose(kernel.predict_features_proba(model, X), sk.predict_features_proba(est, X),
                               rtol=0, atol=1e-12)
    risks = [model_risks(learner, [m], letter, log_loss)[0] for learner, m in ((kernel, model), (sk, est))]
    assert abs(risks[0] - risks[1]) < 1e-12


def test_failed_newton_step_is_refitted_by_sklearn():
    """Where scikit-learn's Newton solver gives up (here a singular Hessian: duplicated feature,
    no effective penalty) it falls back to L-BFGS; the learner hands such fits to scikit-learn."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    X = np.concatenate([X, X[:, :1]], axis=1)
    y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)
    kernel, _ = _pair(_Binary(y), C=1e300)
    model = kernel.fit(kernel.start(Sample(X, y)), np.arange(40), np.random.default_rng(0))
    assert model.by_sklearn and model.status == SINGULAR_HESSIAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed = int(np.random.default_rng(0).integers(0, 2**31 - 1))
        est = LogisticRegression(solver="newton-cholesky", C=1e300, random_state=seed).fit(X, y)
    np.testing.assert_array_equal(model.w, est.coef_[0])


def test_cv_clt_records_equal_the_sklearn_path(letter):
    """A small cv_clt chunk (K-fold, full fit, 5x2, train/validation splits, nested CV, truth)
    gives identical records with the kernel and with scikit-learn."""
    from simstudy.studies.base import Chunk
    from simstudy.studies.cv_clt.study import make_conditions
    from simstudy.studies.cv_clt.worker import CVCLTWorker

    conditions = make_conditions([100], 10, letter)
    frames = []
    for learner in _pair(letter):
        worker = CVCLTWorker(letter, {"logreg": learner}, zero_one, conditions, [], 2020, 15, 2, 1)
        frames.append(worker(Chunk(0, 0, 3)))
    a, b = frames
    assert list(a.columns) == list(b.columns) and (a["error"] == "").all()
    for column in a.columns:
        for u, v in zip(a[column], b[column]):
            np.testing.assert_array_equal(u, v, err_msg=column)
