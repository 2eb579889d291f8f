"""Chunk-level linear kernels against scikit-learn fitted fold by fold."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import RidgeClassifier

from simstudy.cv.losses import zero_one
from simstudy.engine.config import RunnerConfig
from simstudy.engine.runner import run_chunks
from simstudy.learners.dispatch import build_learner
from simstudy.learners.linear.batched import BatchedLDA, BatchedRidge
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations import LogisticPopulation
from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

# (kernel, scikit-learn estimator, well defined on rank-deficient data)
CASES = [
    (BatchedRidge(1.0), lambda: RidgeClassifier(alpha=1.0), True),
    (BatchedRidge(0.0), lambda: RidgeClassifier(alpha=0.0), False),
    (BatchedLDA(), lambda: LinearDiscriminantAnalysis(solver="lsqr"), True),
    (BatchedLDA(), lambda: LinearDiscriminantAnalysis(solver="eigen"), False),  # same rule when full rank
]


def _data(kind, R=12, n=40, p=4, K=10, seed=0, collinear=True):
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        X = rng.normal(size=(R, n, p)) * np.arange(1, p + 1) + 5
    else:  # integer features with repeats and, at n = 20, rank-deficient scatter
        X = rng.integers(0, 16, (R, n, p)).astype(float)
        if collinear:
            X[:, :, -1] = X[:, :, 0]  # a collinear feature: singular scatter
    y = (X[..., 0] + rng.normal(size=(R, n)) * 3 > X[..., 0].mean()).astype(int)
    labels = np.stack([rng.permutation(np.repeat(np.arange(K), n // K)) for _ in range(R)])
    return X, y, labels, K


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("kind", ["continuous", "integer"])
def test_decisions_equal_sklearn_fold_by_fold(case, kind):
    learner, make, rank_deficient_ok = CASES[case]
    X, y, labels, K = _data(kind, n=20 if kind == "integer" else 40, p=4 if kind == "continuous" else 6,
                            collinear=rank_deficient_ok)
    rules = learner.fold_rules(X, y, labels, K)
    for r in range(X.shape[0]):
        for k in range(K):
            train = labels[r] != k
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = make().fit(X[r][train], y[r][train])
            ours = X[r] @ rules.w[r, k] + rules.b[r, k]
            np.testing.assert_allclose(ours, est.decision_function(X[r]), atol=1e-8 * (1 + np.abs(ours).max()))
            clear = np.abs(ours) > 1e-8
            np.testing.assert_array_equal((ours > 0)[clear], (est.predict(X[r]) == 1)[clear])


def test_single_class_fold_is_constant():
    X = np.random.default_rng(0).normal(size=(1, 8, 2))
    y = np.array([[1, 1, 1, 1, 1, 1, 0, 0]])
    labels = np.array([[0, 0, 1, 1, 2, 2, 3, 3]])  # fold 3 holds both 0s: training fold 3 is all 1s
    for learner in (BatchedRidge(1.0), BatchedLDA()):
        rules = learner.fold_rules(X, y, labels, 4)
        assert np.all(rules.w[0, 3] == 0) and rules.b[0, 3] > 0


def test_dispatch_and_fallback():
    ridge = build_learner({"name": "ridge", "estimator": {"_target_": "sklearn.linear_model.RidgeClassifier"}})
    assert isinstance(ridge, BatchedRidge)
    lda = build_learner({"name": "lda", "estimator": {"_target_": "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
                                                      "solver": "lsqr"}})
    assert isinstance(lda, BatchedLDA)
    for solver in ("svd", "eigen"):
        other = build_learner({"name": "lda", "estimator": {
            "_target_": "sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "solver": solver}})
        assert isinstance(other, SklearnLearner)
    forced = build_learner({"name": "r", "engine": "sklearn", "estimator": {"_target_": "sklearn.linear_model.RidgeClassifier"}})
    assert isinstance(forced, SklearnLearner)


@pytest.mark.parametrize("make,batched", [(lambda: RidgeClassifier(alpha=0.5), BatchedRidge(0.5)),
                                          (lambda: LinearDiscriminantAnalysis(solver="lsqr"), BatchedLDA())])
def test_worker_records_identical_to_per_replicate_sklearn(make, batched):
    pop = LogisticPopulation(0.15)
    conds = make_conditions([20, 60], 10, pop)
    runs = {}
    for name, learner in (("batched", batched), ("sklearn", SklearnLearner(make()))):
        worker = CVVarianceWorker(pop, learner, zero_one, conds, seed=4, truth=False)
        runs[name] = run_chunks(worker, [50, 50], RunnerConfig(chunk_size=17, n_jobs=1, progress=False)).records
    a, b = runs["batched"], runs["sklearn"]
    pd.testing.assert_series_equal(a.mu_hat, b.mu_hat)
    np.testing.assert_allclose(a.theta3, b.theta3)


def test_protocol_fit_equals_the_fold_rule():
    """fit(state, rows) of the batched learners is the rule fitted on those rows (with repeats)."""
    from simstudy.populations import Sample

    X, y, labels, K = _data("continuous", R=1, n=40, p=3)
    for learner in (BatchedRidge(0.3), BatchedLDA()):
        state = learner.start(Sample(X[0], y[0]))
        rule = learner.fit(state, np.flatnonzero(labels[0] != 2), np.random.default_rng(0))
        folds = learner.fold_rules(X, y, labels, K)
        np.testing.assert_allclose(rule.w[0, 0], folds.w[0, 2], rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(learner.predict(state, rule, np.arange(40)),
                                      (X[0] @ folds.w[0, 2] + folds.b[0, 2] > 0).astype(int))
