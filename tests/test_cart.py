"""The numba CART kernel against scikit-learn's DecisionTreeClassifier."""
import logging

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.tree import DecisionTreeClassifier

from simstudy.learners.cart import CartLearner, fit_cart, predict_cart, supported_tree_params
from simstudy.learners.dispatch import build_learner
from simstudy.learners.sklearn import SklearnLearner
from simstudy.populations import Sample

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
    with pytest.raises(ValueError, match="learner.engine='numba' is invalid: no fast kernel"):
        build_learner({"name": "t", "engine": "numba", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier",
                                                                    "splitter": "random"}})
    assert not supported_tree_params(DecisionTreeClassifier(class_weight="balanced"))[0]
    assert not supported_tree_params(DecisionTreeClassifier(min_samples_leaf=0.1))[0]


def test_random_state_is_respected():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (60, 4)).astype(np.float32)   # many tied candidates
    y = rng.integers(0, 2, 60)
    fixed = CartLearner(DecisionTreeClassifier(random_state=5))
    state = fixed.start(Sample(X, y))
    a = fixed.fit(state, np.arange(60), np.random.default_rng(1))
    b = fixed.fit(state, np.arange(60), np.random.default_rng(2))
    np.testing.assert_array_equal(a.feature, b.feature)


@pytest.mark.skipif(not LETTER_FILE.exists(), reason="shared Letter data not present")
@pytest.mark.parametrize("n,R", [(40, 1500), (400, 400)])
def test_statistically_indistinguishable_on_letter(n, R):
    """Letter has integer features and many tied candidates: trees may differ by tie-breaking.
    On the same training sets and folds (the learner is not part of the seed), per-replicate CV
    errors of the two engines must not differ systematically, and rho must agree."""
    from simstudy.cv.losses import zero_one
    from simstudy.engine.config import RunnerConfig
    from simstudy.engine.runner import run_chunks
    from simstudy.populations import build_population
    from simstudy.studies.cv_variance.aggregate import aggregate
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(LETTER_FILE),
                            "positive": list("ABCDEFGHIJKLM")})
    conds = make_conditions([n], 10, pop)
    out = {}
    for name, learner in (("numba", CartLearner(DecisionTreeClassifier())),
                          ("sklearn", SklearnLearner(DecisionTreeClassifier()))):
        worker = CVVarianceWorker(pop, learner, zero_one, conds, seed=77, truth=False)
        out[name] = run_chunks(worker, [R], RunnerConfig(chunk_size=100, n_jobs=2, progress=False)).records
    a, b = out["numba"]["mu_hat"].to_numpy(), out["sklearn"]["mu_hat"].to_numpy()
    assert stats.ttest_rel(a, b).pvalue > 1e-3                 # paired: same samples and folds
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert stats.ttest_rel(out["numba"]["theta3"], out["sklearn"]["theta3"]).pvalue > 1e-3
    ra = aggregate(out["numba"], 0.05, [0.0], "mean_cv")[0].iloc[0]
    rb = aggregate(out["sklearn"], 0.05, [0.0], "mean_cv")[0].iloc[0]
    assert abs(ra.rho - rb.rho) < 4 * np.hypot(ra.rho_se, rb.rho_se)


def _fold_by_fold(X, y, labels, K, seeds, **params):
    """Reference for the one-call CV kernel: fit_cart on each training fold, predict its fold."""
    losses = np.empty(len(y))
    trees = []
    for k in range(K):
        test = labels == k
        tree = fit_cart(X[~test], y[~test], seeds[k], **params)
        losses[test] = predict_cart(tree, X[test]) != y[test]
        trees.append(tree)
    return losses, trees


@pytest.mark.parametrize("kind", ["letter-like", "continuous", "near-duplicates", "three-classes"])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_one_call_cross_validation_equals_fold_by_fold_fits(kind, criterion):
    """cross_validate_cart grows fold k's tree exactly as fit_cart on the rows outside fold k
    (same seed): identical node arrays, and its held-out predictions are those trees' (in the
    label space of y)."""
    from simstudy.learners.cart import RankedFeatures, cross_validate_cart

    rng = np.random.default_rng(7)
    n, K = 300, 10
    X = rng.integers(0, 16, (n, 6)).astype(np.float32)      # few values: histogram pool path
    if kind == "continuous":
        X = rng.normal(size=(n, 6)).astype(np.float32)      # many values: sort/histogram path
    elif kind == "near-duplicates":  # values k 1e-6 and k 1e-6 + 5e-8: candidates between them are skipped
        X[:, 3] = (rng.integers(0, 16, n) * 1e-6 + (np.arange(n) < n // 2) * 5e-8).astype(np.float32)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) * 4 > 15).astype(int)
    if kind == "three-classes":
        y = y + (X[:, 2] > 10)
    labels = rng.permutation(np.repeat(np.arange(K), n // K))
    seeds = list(range(100, 100 + K))
    ranked = RankedFeatures.from_array(X)
    if kind == "near-duplicates":
        assert ranked.close[3] and not ranked.close[0]
    names = np.array(["a", "b", "c"])  # same class order as y: predictions come back as these labels
    labels_y = names[y]
    cv = cross_validate_cart(ranked, labels_y, labels, K, seeds, criterion=criterion)
    losses, trees = _fold_by_fold(ranked, y, labels, K, seeds, criterion=criterion)
    assert cv.predictions.dtype == labels_y.dtype
    np.testing.assert_array_equal(cv.predictions != labels_y, losses)
    for ours, ref in zip(cv.models, trees):
        for name in ("feature", "threshold", "left", "right"):
            np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name))
        np.testing.assert_array_equal(predict_cart(ours, X), names[predict_cart(ref, X)])
    assert cross_validate_cart(ranked, y, labels, K, seeds, criterion=criterion, keep_models=False).models is None
    with pytest.raises(ValueError, match="seeds"):
        cross_validate_cart(ranked, y, labels, K, seeds[:3])


def test_all_feature_gini_scan_equals_the_scalar_scan():
    """The SIMD-friendly two-class Gini scan finds, for every feature, the same best proxy
    (bitwise) and rank as the scalar bin scan, on random histograms with empty bins and
    min_samples_leaf constraints."""
    from simstudy.learners.cart import _GINI, _best_split_in_bins, _gini2_scan_all_features

    rng = np.random.default_rng(3)
    found = 0
    for trial in range(300):
        p, bins, m = int(rng.integers(1, 20)), int(rng.integers(2, 40)), int(rng.integers(1, 60))
        y = (rng.random(m) < rng.random()).astype(int)               # the node's labels
        counts = np.zeros((2, bins, p))
        for f in range(p):                                           # each feature: the same samples in bins
            used = rng.choice(bins, size=int(rng.integers(1, bins + 1)), replace=False)
            np.add.at(counts[:, :, f], (y, rng.choice(used, size=m)), 1.0)
        node = np.bincount(y, minlength=2).astype(float)
        min_leaf = int(rng.integers(1, 4))
        values = np.arange(bins, dtype=float)
        cum0, cum1, best, rank = np.empty(p), np.empty(p), np.empty(p), np.empty(p, np.int64)
        _gini2_scan_all_features(counts, node[0], node[1], m, min_leaf, bins, cum0, cum1, best, rank)
        scratch = [np.zeros(2) for _ in range(2)]
        for f in range(p):
            proxy, r = _best_split_in_bins(counts, f, 0, bins - 1, values, node, m, min_leaf, _GINI, *scratch, False)
            assert proxy == best[f] and (r == rank[f] or proxy == -np.inf), (trial, f)
            found += proxy > -np.inf
    assert found > 1000  # most features have a valid split: the comparison is not vacuous


def test_stable_argsort_is_numpys_mergesort_order():
    """The grow loop's small-node sort (it cannot allocate, see ``grow._grow_nodes``) orders the
    positions as ``np.argsort(kind="mergesort")``: by key, equal keys in position order."""
    from simstudy.learners.cart.grow import _stable_argsort

    rng = np.random.default_rng(5)
    for m in [0, 1, 2, 3, 5, 8, 17, 64, 100, 257]:
        for distinct in (1, 3, 1000):
            keys = np.concatenate([rng.integers(0, distinct, m), rng.integers(0, 9, 7)])  # the first m count
            out, buf = np.full(m + 7, -1), np.full(m + 7, -1)
            result = _stable_argsort(keys, m, out, buf)
            assert result is out or result is buf
            np.testing.assert_array_equal(result[:m], np.argsort(keys[:m], kind="mergesort"))


def test_labels_are_encoded_as_np_unique_encodes_them():
    """The kernels' label encoding (integers and booleans ranked like a feature, by counting)
    gives np.unique's classes (same dtype) and inverse, for every label type a study meets."""
    from simstudy.learners.cart.grow import _encode_labels
    from simstudy.learners.cart.ranking import rank_column

    rng = np.random.default_rng(5)
    cases = [rng.integers(0, 2, 50), rng.integers(-5, 5, 30).astype(np.int8), rng.integers(0, 3, 40).astype(np.uint8),
             rng.integers(0, 2, 20).astype(bool), rng.integers(0, 10**12, 25), np.array([7]), np.array([3, 3, 3]),
             rng.integers(-2**40, 2**40, 100), np.array(list("abcab")), rng.integers(0, 2, 30).astype(float)]
    for y in cases:
        classes, codes = _encode_labels(y)
        expected_classes, expected_codes = np.unique(y, return_inverse=True)
        assert classes.dtype == expected_classes.dtype and np.array_equal(classes, expected_classes), y.dtype
        assert codes.dtype == np.int64 and np.array_equal(codes, expected_codes), y.dtype
    ranks, values = rank_column(np.array([2.5, -1.0, 2.5, 7.0]))    # by hand
    assert ranks.tolist() == [1, 0, 1, 2] and values.tolist() == [-1.0, 2.5, 7.0]


def test_split_trees_with_repeated_rows_equal_fit_cart():
    """A training set that repeats rows (a bootstrap set) is grown from its own rows: its root
    histogram cannot be the sample's minus the absent rows' (the one-call kernels do that for
    sets of distinct rows)."""
    from simstudy.learners.cart import predict_cart
    from simstudy.learners.cart.crossval import predict_splits_cart

    rng = np.random.default_rng(9)
    X = rng.integers(0, 6, (300, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 3, 300) > 6).astype(int)
    trains = [rng.integers(0, 300, 300) for _ in range(3)] + [np.arange(0, 300, 2)]
    predictions = predict_splits_cart(X, y, trains, [np.arange(300)] * 4, [1, 2, 3, 4])
    for rows, seed, predicted in zip(trains, [1, 2, 3, 4], predictions):
        assert np.array_equal(predicted, predict_cart(fit_cart(X[rows], y[rows], seed), X))


def test_rows_descending_four_at_a_time_reach_the_leaf_of_a_row_by_row_descent():
    """predict_cart (rows in groups of four, then the remainder) gives each row the class of the
    leaf a plain root-to-leaf descent reaches: any number of rows, NaN values (they go right,
    as x <= threshold is false), trees of one leaf."""
    rng = np.random.default_rng(3)

    def descend(tree, x):
        node = 0
        while tree.left[node] >= 0:
            node = tree.left[node] if x[tree.feature[node]] <= tree.threshold[node] else tree.right[node]
        return tree.classes[tree.leaf_class[node]]

    for trial in range(20):
        n = int(rng.integers(5, 300))
        X = rng.integers(0, 8, (n, 3)).astype(float) + (rng.normal(size=(n, 3)) if trial % 2 else 0)
        y = rng.integers(0, 3, n) if trial % 3 else np.full(n, 1)
        tree = fit_cart(X, y, trial)
        for m in (1, 3, 4, 7, int(rng.integers(8, 200))):
            Xq = (rng.normal(size=(m, 3)) * 4 + 4).astype(np.float32)
            Xq[::5, 0] = np.nan
            expected = [descend(tree, x) for x in Xq]
            assert np.array_equal(predict_cart(tree, Xq), expected), (trial, m)


def test_study_records_do_not_depend_on_the_one_call_kernel():
    """The cv_variance worker gives identical records (losses, theta's, exact fold errors)
    whether the tree's one-call CV kernel or the generic fold loop of fit/predict is used."""
    from simstudy.cv.losses import zero_one
    from simstudy.populations.finite import TabularPopulation
    from simstudy.studies.base import Chunk
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    class FoldLoopOnly:  # the same learner without its cross_validate method
        def __init__(self, learner):
            self._learner = learner
            self.dtype, self.name = learner.dtype, learner.name

        def __getattr__(self, name):
            if name == "cross_validate":
                raise AttributeError(name)
            return getattr(self._learner, name)

    rng = np.random.default_rng(0)
    X = rng.integers(0, 8, (2000, 5)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=2000) * 2 > 7).astype(int)
    pop = TabularPopulation(X, y, name="toy")
    conds = make_conditions([20, 100], 10, pop)
    tree = CartLearner(DecisionTreeClassifier())
    for truth in (False, True):
        fast = CVVarianceWorker(pop, tree, zero_one, conds, seed=5, truth=truth)
        loop = CVVarianceWorker(pop, FoldLoopOnly(tree), zero_one, conds, seed=5, truth=truth)
        for c in range(2):
            a, b = fast(Chunk(c, 0, 20)), loop(Chunk(c, 0, 20))
            assert (a["error"] == "").all()
            pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("kind", ["letter-like", "continuous", "near-duplicates", "three-classes"])
def test_a_subset_state_grows_the_trees_of_its_own_start(kind):
    """start_subset(start(sample), rows) keeps the sample's ranks (values absent from the rows are
    empty bins, a close pair of values may lie outside the rows); every K-fold CV, tree and split
    prediction on it equals that of start(sample[rows]), including rows that lack values, a
    close pair or a class of the sample."""
    from simstudy.cv.loop import cross_validate

    rng = np.random.default_rng(11)
    n, K = 400, 10
    X = rng.integers(0, 16, (n, 6)).astype(np.float32)
    if kind == "continuous":
        X = rng.normal(size=(n, 6)).astype(np.float32)
    elif kind == "near-duplicates":   # the close pair (5e-8 apart) only among the rows not taken
        X[:, 3] = (rng.integers(0, 16, n) * 1e-6).astype(np.float32)
        X[-1, 3] = np.float32(X[0, 3] + 5e-8)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) * 4 > 15).astype(int)
    if kind == "three-classes":
        y = y + 2 * (X[:, 2] > 13)
    tree = CartLearner(DecisionTreeClassifier())
    whole = tree.start(Sample(X, y, None))
    for trial in range(6):
        rows = np.sort(rng.permutation(n - 1)[:n // 2 - trial * 20])   # never the last row
        if kind == "letter-like":
            rows = rows[X[rows, 4] != 7]                                  # a value absent from the rows
        if kind == "three-classes" and trial % 2:
            rows = rows[y[rows] != 2]                                     # a class absent from the rows
        own, sub = tree.start(Sample(X[rows], y[rows], None)), tree.start_subset(whole, rows)
        if kind == "near-duplicates":
            assert sub.ranked.close[3] and not own.ranked.close[3]
        labels = rng.permutation(np.arange(rows.size) % K)
        a = cross_validate(tree, own, labels, K, np.random.default_rng(trial), keep_models=True)
        b = cross_validate(tree, sub, labels, K, np.random.default_rng(trial), keep_models=True)
        np.testing.assert_array_equal(a.predictions, b.predictions)
        for ta, tb in zip(a.models, b.models):
            for name in ("feature", "threshold", "left", "right", "leaf_class"):
                np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name))
        trains = [np.flatnonzero(labels != k) for k in range(3)] + [rng.choice(rows.size, rows.size)]
        tests = [np.flatnonzero(labels == k) for k in range(3)] + [np.arange(rows.size)]
        for pa, pb in zip(tree.split_predictions(own, trains, tests, np.random.default_rng(trial)),
                          tree.split_predictions(sub, trains, tests, np.random.default_rng(trial))):
            np.testing.assert_array_equal(pa, pb)


def test_rho_hat_records_do_not_depend_on_reusing_the_sample_state():
    """The rho_hat worker's records (subsample CVs included) are identical whether the halves
    reuse the sample's preparation (start_subset) or are prepared again."""
    from simstudy.cv.losses import zero_one
    from simstudy.populations.finite import TabularPopulation
    from simstudy.studies.base import Chunk, size_conditions
    from simstudy.studies.rho_hat.worker import RhoHatWorker

    class StartOnly:  # the same learner without start_subset
        def __init__(self, learner):
            self._learner = learner
            self.dtype, self.name = learner.dtype, learner.name

        def __getattr__(self, name):
            if name == "start_subset":
                raise AttributeError(name)
            return getattr(self._learner, name)

    rng = np.random.default_rng(3)
    X = rng.integers(0, 12, (3000, 5)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=3000) * 3 > 11).astype(int)
    pop = TabularPopulation(X, y, name="toy")
    conds = size_conditions("rho_hat", [200], 10, pop)
    tree = CartLearner(DecisionTreeClassifier())
    a = RhoHatWorker(pop, tree, zero_one, conds, 4, 3, 2, 1)(Chunk(0, 0, 4))
    b = RhoHatWorker(pop, StartOnly(tree), zero_one, conds, 4, 3, 2, 1)(Chunk(0, 0, 4))
    assert (a["error"] == "").all()
    pd.testing.assert_frame_equal(a, b)


def _descent_errors(tree, X, y):
    return int(np.sum(predict_cart(tree, X) != y))


def test_population_errors_from_row_bitsets_equal_row_by_row_descent():
    """The bitset error count equals predicting every row, including thresholds outside the
    population's range, leaf labels the population lacks, a tree that is one leaf, changed data
    (cache by content) and data with too many distinct values (descent fallback)."""
    from simstudy.learners.cart import PopulationBitsets, population_errors

    rng = np.random.default_rng(11)
    Xp = rng.integers(5, 16, (3001, 4)).astype(np.float32)          # 3001 rows: a partial last word
    yp = (Xp[:, 0] + Xp[:, 1] + rng.normal(size=3001) * 3 > 20).astype(int) + 1   # labels {1, 2}
    trees = []
    for trial in range(12):
        Xs = rng.integers(0, 21, (150, 4)).astype(np.float32)       # values below and above the population's
        ys = rng.integers(0, 3, 150) if trial % 3 == 0 else (Xs[:, 0] > 10).astype(int) + 1  # label 0: absent
        trees.append(fit_cart(Xs, ys, trial, max_depth=None if trial % 2 else 4))
    trees.append(fit_cart(Xs, np.full(150, 2), 0))                   # a root leaf
    assert trees[-1].node_count == 1
    expected = np.array([_descent_errors(t, Xp, yp) for t in trees]) / len(yp)
    assert PopulationBitsets.build(Xp, yp) is not None
    np.testing.assert_array_equal(population_errors(trees, Xp, yp), expected)
    np.testing.assert_array_equal(population_errors(trees, Xp.copy(), yp.copy()), expected)  # same content
    Xq = Xp.copy()
    Xq[:, 0] = 20 - Xq[:, 0]                                         # new content: rebuilt, not reused
    np.testing.assert_array_equal(population_errors(trees, Xq, yp),
                                  np.array([_descent_errors(t, Xq, yp) for t in trees]) / len(yp))
    Xc = Xp + rng.normal(size=Xp.shape).astype(np.float32)           # continuous: descent fallback
    assert PopulationBitsets.build(Xc, yp) is None
    np.testing.assert_array_equal(population_errors(trees, Xc, yp),
                                  np.array([_descent_errors(t, Xc, yp) for t in trees]) / len(yp))


@pytest.mark.parametrize("ties", ["draw", "shuffle"])
def test_tied_features_are_chosen_uniformly_as_by_sklearn(ties):
    """Three copies of the informative feature tie at every node: each tie rule must pick each
    copy at the root with probability 1/3 (chi-square against uniform), like scikit-learn."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, 80).astype(np.float32)
    X = np.column_stack([x, x, rng.normal(size=80).astype(np.float32) * 0.01, x])    # copies: 0, 1, 3
    y = (x + rng.normal(size=80) > 2.5).astype(int)
    seeds = range(600)
    ours = np.bincount([fit_cart(X, y, s, ties=ties).feature[0] for s in seeds], minlength=4)
    theirs = np.bincount([DecisionTreeClassifier(random_state=s).fit(X, y).tree_.feature[0] for s in seeds],
                         minlength=4)
    for counts in (ours, theirs):
        assert counts[2] == 0 and counts.sum() == 600
        assert stats.chisquare(counts[[0, 1, 3]]).pvalue > 1e-3
    assert stats.chi2_contingency(np.stack([ours[[0, 1, 3]], theirs[[0, 1, 3]]])).pvalue > 1e-3


def test_tie_rules_share_the_trees_without_ties_and_refuse_unknown_names():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 5)).astype(np.float32)          # continuous, large nodes: no tied candidates
    y = (X[:, 0] + X[:, 1] + rng.normal(size=400) > 0).astype(int)
    a, b = fit_cart(X, y, 1, max_depth=3, ties="draw"), fit_cart(X, y, 2, max_depth=3, ties="shuffle")
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    with pytest.raises(ValueError, match="ties='first' is invalid"):
        fit_cart(X, y, 1, ties="first")
    with pytest.raises(ValueError, match="ties='first' is invalid"):
        CartLearner(DecisionTreeClassifier(), ties="first")
    assert CartLearner(DecisionTreeClassifier()).describe()["ties"] == "draw"


def test_learner_config_chooses_the_tie_rule():
    spec = {"name": "tree", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}}
    assert build_learner(spec).ties == "draw"
    former = build_learner(dict(spec, ties="shuffle"))
    assert former.ties == "shuffle" and "ties" not in former.describe()   # identity of runs made before the rule
    from simstudy.errors import ConfigError
    with pytest.raises(ConfigError, match="learner.ties='first' is invalid"):
        build_learner(dict(spec, ties="first"))
