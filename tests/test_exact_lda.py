"""The exact fast fit of binary LinearDiscriminantAnalysis(solver="lsqr")
(simstudy.learners.linear.exact_lda): scikit-learn's fitted attributes, predictions and
probabilities bit for bit, and scikit-learn itself wherever the fast fit does not apply; the
binary linear models' predictions and probabilities from their coefficients, bit for bit."""
import itertools

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression

from simstudy.learners.linear.exact_lda import lda_fast_path
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations.base import Sample


def _problem(rng, n, p, kind, positive_rate=0.5):
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 10, size=p) + rng.normal(size=p)
    if kind == "collinear" and p > 1:
        X[:, -1] = 2.0 * X[:, 0] - X[:, 1 % p]
    if kind == "integer":
        X = np.round(X)
    y = (rng.random(n) < positive_rate).astype(np.int64)
    y[:2], y[2:4] = 0, 1                                   # two rows of each class at least
    return X, y


def _same(a, b):
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def test_fits_are_scikit_learns_bit_for_bit():
    rng = np.random.default_rng(3)
    fast = lda_fast_path(LinearDiscriminantAnalysis(solver="lsqr"))
    checked = 0
    for n, p, kind, rate in itertools.product((5, 20, 50, 400), (1, 2, 10, 30), ("plain", "collinear", "integer"),
                                              (0.1, 0.5)):
        X, y = _problem(rng, n, p, kind, rate)
        ours = fast.fit(X, y)
        ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
        assert set(vars(ours)) == set(vars(ref))
        assert all(_same(vars(ours)[k], v) for k, v in vars(ref).items()), (n, p, kind, rate)
        Xnew = rng.normal(size=(50, p)) * 3
        assert np.array_equal(ours.predict(Xnew), ref.predict(Xnew))
        assert np.array_equal(ours.predict_proba(Xnew), ref.predict_proba(Xnew))
        checked += 1
    assert checked == 96


@pytest.mark.filterwarnings("ignore:Only one sample available")  # scikit-learn's, on a one-row class
@pytest.mark.parametrize("labels", ([0] * 6 + [1], [0, 0, 2, 2, 0, 2, 0], [0, 1, 2, 0, 1, 2, 0]),
                         ids=("one row of a class", "labels 0 and 2", "three classes"))
def test_other_labels_go_to_scikit_learn(labels):
    y = np.array(labels)
    X = np.random.default_rng(0).normal(size=(y.size, 2))
    assert lda_fast_path(LinearDiscriminantAnalysis(solver="lsqr")).fit(X, y) is None
    learner = SklearnLearner(LinearDiscriminantAnalysis(solver="lsqr"), name="lda")
    model = learner.fit(learner.start(Sample(X=X, y=y)), np.arange(y.size), np.random.default_rng(0))
    assert np.array_equal(model.coef_, LinearDiscriminantAnalysis(solver="lsqr").fit(X, y).coef_)


@pytest.mark.parametrize("estimator", [LinearDiscriminantAnalysis(), LinearDiscriminantAnalysis(solver="eigen"),
                                       LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
                                       LinearDiscriminantAnalysis(solver="lsqr", priors=[0.3, 0.7]),
                                       LinearDiscriminantAnalysis(solver="lsqr", n_components=1)], ids=repr)
def test_other_settings_have_no_fast_path(estimator):
    assert lda_fast_path(estimator) is None


def test_the_learner_fits_through_the_fast_path_with_the_same_models():
    rng = np.random.default_rng(5)
    X, y = _problem(rng, 60, 4, "plain")
    fast = SklearnLearner(LinearDiscriminantAnalysis(solver="lsqr"), name="lda")
    slow = SklearnLearner(LinearDiscriminantAnalysis(solver="lsqr"), name="lda", fast_path=False)
    assert fast.describe() == slow.describe()               # a run's identity is unchanged
    rows = rng.integers(0, 60, 60)
    a = fast.fit(fast.start(Sample(X=X, y=y)), rows, np.random.default_rng(0))
    b = slow.fit(slow.start(Sample(X=X, y=y)), rows, np.random.default_rng(0))
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    assert not hasattr(fast._lda.template, "coef_") and vars(fast._lda.template) == vars(slow.template)
    assert np.array_equal(fast.predict_features_proba(a, X), slow.predict_features_proba(b, X))



@pytest.mark.parametrize("estimator", [LinearDiscriminantAnalysis(solver="lsqr"), LinearDiscriminantAnalysis(),
                                       LogisticRegression(), LogisticRegression(C=0.1, solver="newton-cholesky")],
                         ids=repr)
def test_binary_linear_models_predict_as_scikit_learn_bit_for_bit(estimator):
    rng = np.random.default_rng(11)
    learner = SklearnLearner(estimator, name="linear")
    for n, p, kind in itertools.product((20, 200), (1, 3, 12), ("plain", "collinear")):
        X, y = _problem(rng, n, p, kind, 0.3)
        model = learner.fit(learner.start(Sample(X=X, y=y)), np.arange(n), rng)
        Xnew = rng.normal(size=(300, p)) * 5
        assert np.array_equal(learner.predict_features(model, Xnew), model.predict(Xnew))
        proba = learner.predict_features_proba(model, Xnew, n_classes=3)
        assert np.array_equal(proba[:, :2], model.predict_proba(Xnew)) and np.all(proba[:, 2] == 0)
        assert learner.probability_rule(model) is not None


def test_other_models_predict_through_scikit_learn():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(60, 3))
    y = np.arange(60) % 3                                      # three classes: softmax, argmax
    learner = SklearnLearner(LinearDiscriminantAnalysis(solver="lsqr"), name="lda")
    model = learner.fit(learner.start(Sample(X=X, y=y)), np.arange(60), rng)
    assert np.array_equal(learner.predict_features_proba(model, X), model.predict_proba(X))
    assert np.array_equal(learner.predict_features(model, X), model.predict(X))
    assert learner.probability_rule(model) is None
