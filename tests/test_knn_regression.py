"""k-NN regression for the models of one sample (simstudy.learners.knn.regression): scikit-learn's
KNeighborsRegressor predictions bit for bit without distance ties, the documented tie rule with
them, the shared evaluation of a sample's models, and the study records unchanged."""
import numpy as np
import pytest
from sklearn.neighbors import KNeighborsRegressor

from simstudy.learners.dispatch import build_learner
from simstudy.learners.knn.regression import SampleKNNRegressor, KnnRegressionModel
from simstudy.populations.base import Sample


def _reference(Xs, ys, rows, Xq, k):
    """The rule by hand: training points (copies separate) by (distance, sample position), the
    mean of the first k targets in that order (np.mean over an (m, k, 1) array, as scikit-learn)."""
    counts = np.bincount(rows, minlength=len(Xs))
    out = np.empty((len(Xq), k), np.int64)
    for q, x in enumerate(Xq):
        d = ((Xs - x) ** 2).sum(axis=1)
        ranked = sorted((d[j], j) for j in range(len(Xs)) if counts[j])
        out[q] = [j for _, j in ranked for _ in range(counts[j])][:k]
    return np.mean(ys.reshape(-1, 1)[out], axis=1).ravel()


@pytest.mark.parametrize("k", [1, 5, 10])
@pytest.mark.parametrize("n, p", [(15, 2), (60, 10), (200, 10)])
def test_predictions_are_scikit_learns_bit_for_bit(k, n, p):
    """Continuous features (no distance ties): K-fold models, the full sample and a bootstrap
    multiset, at the sample's rows and at 500 new points, every model against its own scikit-learn fit."""
    rng = np.random.default_rng(n + p + k)
    X, y = rng.random((n, p)), rng.normal(size=n)
    learner = SampleKNNRegressor(KNeighborsRegressor(n_neighbors=k), name="knn")
    state = learner.start(Sample(X=X, y=y))
    Xnew = rng.random((500, p))
    labels = rng.permutation(np.arange(n) % 5)
    designs = [np.flatnonzero(labels != f) for f in range(5)] + [np.arange(n), np.sort(rng.integers(0, n, n))]
    for rows in designs:
        model = learner.fit(state, rows, rng)
        ref = KNeighborsRegressor(n_neighbors=k).fit(X[rows], y[rows])
        assert np.array_equal(learner.predict_features(model, Xnew), ref.predict(Xnew))
        assert np.array_equal(learner.predict(state, model, np.arange(n)), ref.predict(X))


def test_ties_follow_the_documented_rule():
    """Integer features (many equal distances, more than the kept width of nearest positions):
    every model equals the rule computed by hand."""
    rng = np.random.default_rng(5)
    n, k = 120, 7
    X, y = rng.integers(0, 3, (n, 2)).astype(float), rng.normal(size=n)
    learner = SampleKNNRegressor(KNeighborsRegressor(n_neighbors=k), name="knn")
    state = learner.start(Sample(X=X, y=y))
    Xnew = rng.integers(0, 3, (40, 2)).astype(float)
    for rows in (np.arange(n), np.arange(0, n, 3), np.sort(rng.integers(0, n, n))):
        model = learner.fit(state, rows, rng)
        assert np.array_equal(learner.predict_features(model, Xnew), _reference(X, y, rows, Xnew, k))
        assert np.array_equal(learner.predict(state, model, np.arange(10)), _reference(X, y, rows, X[:10], k))


def test_shared_evaluation_never_mixes_samples():
    """The nearest positions kept for one sample and evaluation set are not reused for another
    sample, even with the same evaluation array (or one at the same address)."""
    rng = np.random.default_rng(2)
    Xeval = rng.random((300, 3))
    learner = SampleKNNRegressor(KNeighborsRegressor(n_neighbors=3), name="knn")
    for _ in range(3):
        X, y = rng.random((30, 3)), rng.normal(size=30)
        state = learner.start(Sample(X=X, y=y))
        model = learner.fit(state, np.arange(30), rng)
        ours = learner.predict_features(model, Xeval)
        assert np.array_equal(ours, KNeighborsRegressor(n_neighbors=3).fit(X, y).predict(Xeval))
    assert isinstance(model, KnnRegressionModel)
    import pickle
    assert pickle.loads(pickle.dumps(learner))._near is None


def test_build_learner_takes_the_kernel_for_uniform_euclidean_only():
    spec = {"name": "knn", "estimator": {"_target_": "sklearn.neighbors.KNeighborsRegressor", "n_neighbors": 4}}
    assert isinstance(build_learner(spec), SampleKNNRegressor)
    assert not isinstance(build_learner({**spec, "engine": "sklearn"}), SampleKNNRegressor)
    weighted = {"name": "knn", "estimator": {"_target_": "sklearn.neighbors.KNeighborsRegressor",
                                             "weights": "distance"}}
    assert not isinstance(build_learner(weighted), SampleKNNRegressor)
    with pytest.raises(ValueError, match="at least 4 training points"):
        learner = build_learner(spec)
        learner.fit(learner.start(Sample(X=np.zeros((3, 1)), y=np.zeros(3))), np.arange(3), None)


def test_cv_clt_regression_records_equal_with_scikit_learns_knn():
    """The Friedman calibration study's replicates (K-fold, truth on the evaluation sample, 5x2,
    train/validation, nested CV) with the kernel and with scikit-learn's k-NN: the same records."""
    from simstudy import engine
    from simstudy.learners.sklearn import SklearnLearner
    from simstudy.studies.base import Chunk

    learners = {"knn": {"_target_": "sklearn.neighbors.KNeighborsRegressor", "n_neighbors": 10}}
    plan = engine.prepare("cv_clt_regression", population={"kind": "friedman1", "evaluation_size": 1000},
                          runner={"n_jobs": 1}, sizes=[40], K=10, replicates=3, repeated_splits=3,
                          nested_cv_replicates=2, nested_cv_repetitions=2, learners=learners, comparisons=[],
                          loss="squared")
    worker = engine.build(plan).phases()[0].worker
    assert isinstance(worker.learners["knn"], SampleKNNRegressor)
    ours = worker(Chunk(0, 0, 3))
    worker.learners["knn"] = SklearnLearner(KNeighborsRegressor(n_neighbors=10), name="knn")
    theirs = worker(Chunk(0, 0, 3))
    assert (ours["error"] == "").all() and ours.equals(theirs)
