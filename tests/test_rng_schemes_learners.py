"""Seed derivation, the K-fold scheme and the scikit-learn learner wrapper."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from simstudy.cv.splits import KFold
from simstudy.learners.sklearn import ConstantClassifier, SklearnLearner
from simstudy.populations import Sample
from simstudy.rng import condition_key, replicate_rng


def test_condition_key_is_stable_and_order_free():
    a = condition_key({"n": 20, "K": 10, "population": {"kind": "logistic", "bayes_error": 0.2}})
    b = condition_key({"population": {"bayes_error": 0.2, "kind": "logistic"}, "K": 10, "n": 20})
    assert a == b
    # pinned: a change here silently changes every published number
    assert a == condition_key({"K": 10, "n": 20, "population": {"kind": "logistic", "bayes_error": 0.2}})
    assert len(a) == 32
    assert condition_key({"n": 20, "K": 10}) != condition_key({"n": 40, "K": 10})


def test_replicate_streams_are_distinct_and_reproducible():
    key = condition_key({"n": 20})
    x = replicate_rng(1, key, 5).random(4)
    np.testing.assert_array_equal(x, replicate_rng(1, key, 5).random(4))
    assert not np.allclose(x, replicate_rng(1, key, 6).random(4))
    assert not np.allclose(x, replicate_rng(2, key, 5).random(4))
    assert not np.allclose(x, replicate_rng(1, condition_key({"n": 40}), 5).random(4))


def test_kfold_invariants():
    rng = np.random.default_rng(0)
    n, K = 40, 10
    tested = np.zeros(n, int)
    for train, test in KFold(K).train_test(n, rng):
        assert len(test) == n // K
        assert np.intersect1d(train, test).size == 0
        assert len(train) + len(test) == n
        tested[test] += 1
    assert np.all(tested == 1)


@pytest.mark.parametrize("n,K", [(9, 10), (1, 2), (10, 1)])
def test_kfold_rejects_bad_sizes(n, K):
    with pytest.raises(ValueError):
        KFold(K).labels(n, np.random.default_rng(0))


@pytest.mark.parametrize("n,K", [(25, 10), (10, 10), (569, 10), (11, 2), (40, 10)])
def test_kfold_any_n_follows_scikit_learn_sizes(n, K):
    """Fold sizes floor(n/K) or ceil(n/K), the first n % K folds one larger (scikit-learn's rule)."""
    from sklearn.model_selection import KFold as SkKFold

    labels = KFold(K).labels(n, np.random.default_rng(1))
    sizes = np.bincount(labels, minlength=K)
    reference = [len(test) for _, test in SkKFold(K).split(np.zeros(n))]
    assert sizes.tolist() == reference
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == n


@pytest.mark.parametrize("n,K", [(20, 10), (40, 10), (60, 5), (12, 4)])
def test_kfold_labels_unchanged_when_k_divides_n(n, K):
    """The generalisation gives exactly the earlier labels (and consumes the same draws)."""
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    earlier = np.repeat(np.arange(K), n // K)[a.permutation(n)]
    np.testing.assert_array_equal(KFold(K).labels(n, b), earlier)
    assert a.random() == b.random()


def test_tree_fast_path_predicts_like_plain_sklearn():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    learner = SklearnLearner(DecisionTreeClassifier(), "tree")
    assert learner.fast_path
    fit_rng = np.random.default_rng(9)
    state = learner.start(Sample(X, y))
    model = learner.fit(state, np.arange(150), fit_rng)
    plain = DecisionTreeClassifier(random_state=model.random_state).fit(X[:150].astype(np.float32), y[:150])
    np.testing.assert_array_equal(learner.predict(state, model, np.arange(150, 200)),
                                  plain.predict(X[150:].astype(np.float32)))


def test_random_state_comes_from_the_replicate_stream_unless_fixed():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.arange(30) % 2
    rows = np.arange(30)
    free = SklearnLearner(DecisionTreeClassifier())
    a = free.fit(free.start(Sample(X, y)), rows, np.random.default_rng(1)).random_state
    b = free.fit(free.start(Sample(X, y)), rows, np.random.default_rng(1)).random_state
    assert a == b and isinstance(a, int)
    fixed = SklearnLearner(DecisionTreeClassifier(random_state=7))
    assert fixed.fit(fixed.start(Sample(X, y)), rows, np.random.default_rng(1)).random_state == 7


def test_single_class_fold_gives_constant_classifier():
    learner = SklearnLearner(LogisticRegression(), "logreg")
    assert not learner.fast_path
    state = learner.start(Sample(np.zeros((5, 2)), np.ones(5, int)))
    model = learner.fit(state, np.arange(5), np.random.default_rng(0))
    assert isinstance(model, ConstantClassifier)
    np.testing.assert_array_equal(learner.predict(state, model, np.arange(3)), [1, 1, 1])


def test_not_an_estimator_is_rejected():
    """Classifiers and regressors are learners (regression studies); a transformer is neither."""
    from sklearn.preprocessing import StandardScaler

    with pytest.raises(ValueError, match="neither a scikit-learn classifier nor a regressor"):
        SklearnLearner(StandardScaler(), "scaler")
