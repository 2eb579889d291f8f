"""The numba CART kernel against scikit-learn's DecisionTreeClassifier."""
import logging

import numpy as np
import pytest
from scipy import stats
from sklearn.tree import DecisionTreeClassifier

from simstudy.learners import CartLearner, SklearnLearner, build_learner
from simstudy.learners.cart import fit_cart, predict_cart, supported_tree_params

from conftest import LETTER_FILE


def _same_tree(sk, ours, X_test):
    assert sk.tree_.node_count == ours.node_count
    np.testing.assert_array_equal(np.sort(sk.tree_.threshold[sk.tree_.feature >= 0]),
                                  np.sort(ours.threshold[ours.feature >= 0]))
    np.testing.assert_array_equal(sk.predict(X_test), predict_cart(ours, X_test))


@pytest.mark.parametrize("trial", range(24))
def test_identical_to_sklearn_without_tied_candidates(trial):
    """One feature: no ties between features, so the trees must be identical (thresholds,
    node count, predictions), for both criteria, 2-3 classes and the stopping parameters."""
    rng = np.random.default_rng(trial)
    n = int(rng.integers(10, 500))
    kind = trial % 3
    if kind == 0:
        x = rng.normal(size=n)
    elif kind == 1:
        x = rng.integers(0, 16, n).astype(float)          # integer values with many repeats
    else:
        x = rng.normal(size=n)
        x[: n // 3] = np.round(x[: n // 3], 1) + 5e-8      # near-duplicates closer than 1e-7
    X = x[:, None].astype(np.float32)
    y = (x + rng.normal(size=n) > 0).astype(int) + (trial % 2) * (rng.random(n) < 0.3)
    params = dict(criterion=["gini", "entropy", "log_loss"][trial % 3],
                  max_depth=[None, 3, 7][(trial // 3) % 3],
                  min_samples_leaf=[1, 3][(trial // 9) % 2],
                  min_samples_split=[2, 6][(trial // 2) % 2])
    sk = DecisionTreeClassifier(random_state=trial, **params).fit(X, y)
    crit = "entropy" if params["criterion"] == "log_loss" else params["criterion"]
    ours = fit_cart(X, y, trial, crit, params["max_depth"], params["min_samples_split"], params["min_samples_leaf"])
    _same_tree(sk, ours, np.concatenate([X, rng.normal(size=(500, 1)).astype(np.float32) * 3]))


def test_fully_grown_trees_fit_distinct_points_and_respect_leaves():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    tree = fit_cart(X, y, 0)
    np.testing.assert_array_equal(predict_cart(tree, X), y)  # pure leaves
    tree = fit_cart(X, y, 0, min_samples_leaf=10)
    leaves = np.flatnonzero(tree.left < 0)
    assert len(leaves) <= 30
    labels = np.array(["a", "b"])[y % 2]                       # non-integer class labels
    assert set(predict_cart(fit_cart(X, labels, 0), X)) <= {"a", "b"}


def test_engine_selection_and_fallback(caplog):
    assert isinstance(build_learner({"name": "tree", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}}),
                      CartLearner)
    sk_cfg = {"name": "tree", "engine": "sklearn", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}}
    assert isinstance(build_learner(sk_cfg), SklearnLearner)
    with caplog.at_level(logging.INFO, logger="simstudy"):
        fallback = build_learner({"name": "tree", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier",
                                                               "max_features": "sqrt"}})
    assert isinstance(fallback, SklearnLearner) and "max_features='sqrt'" in caplog.text
    with pytest.raises(ValueError, match="learner.engine=numba: no fast kernel"):
        build_learner({"name": "t", "engine": "numba", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier",
                                                                    "splitter": "random"}})
    assert not supported_tree_params(DecisionTreeClassifier(class_weight="balanced"))[0]
    assert not supported_tree_params(DecisionTreeClassifier(min_samples_leaf=0.1))[0]


def test_random_state_is_respected():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (60, 4)).astype(np.float32)   # many tied candidates
    y = rng.integers(0, 2, 60)
    fixed = CartLearner(DecisionTreeClassifier(random_state=5))
    a = fixed.fit(X, y, np.random.default_rng(1))
    b = fixed.fit(X, y, np.random.default_rng(2))
    np.testing.assert_array_equal(a.feature, b.feature)


@pytest.mark.skipif(not LETTER_FILE.exists(), reason="shared Letter data not present")
@pytest.mark.parametrize("n,R", [(40, 1500), (400, 400)])
def test_statistically_indistinguishable_on_letter(n, R):
    """Letter has integer features and many tied candidates: trees may differ by tie-breaking.
    On the same training sets and folds (the learner is not part of the seed), per-replicate CV
    errors of the two engines must not differ systematically, and rho must agree."""
    from simstudy.populations import build_population
    from simstudy.runner import run_chunks
    from simstudy.studies.cv_variance import CVVarianceWorker, aggregate, make_conditions

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(LETTER_FILE),
                            "positive": list("ABCDEFGHIJKLM")})
    conds = make_conditions([n], 10, pop)
    out = {}
    for name, learner in (("numba", CartLearner(DecisionTreeClassifier())),
                          ("sklearn", SklearnLearner(DecisionTreeClassifier()))):
        worker = CVVarianceWorker(pop, learner, conds, seed=77, truth=False)
        out[name] = run_chunks(worker, [R], chunk_size=100, n_jobs=2, progress=False).records
    a, b = out["numba"]["mu_hat"].to_numpy(), out["sklearn"]["mu_hat"].to_numpy()
    assert stats.ttest_rel(a, b).pvalue > 1e-3                 # paired: same samples and folds
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert stats.ttest_rel(out["numba"]["theta3"], out["sklearn"]["theta3"]).pvalue > 1e-3
    ra = aggregate(out["numba"], 0.05, [0.0], "mean_cv")[0].iloc[0]
    rb = aggregate(out["sklearn"], 0.05, [0.0], "mean_cv")[0].iloc[0]
    assert abs(ra.rho - rb.rho) < 4 * np.hypot(ra.rho_se, rb.rho_se)
