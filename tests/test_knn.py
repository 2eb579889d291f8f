"""The population k-NN: identical to scikit-learn without distance ties; list and brute-force
paths agree; one walk for many models equals one model at a time."""
import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from simstudy.learners.knn.population import PopulationKNN, supported_knn_params


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path))


def _population(N=400, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, p))
    y = (X[:, 0] + 0.8 * rng.normal(size=N) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("k", [1, 5, 7])
def test_matches_sklearn_on_continuous_data(k):
    X, y = _population()
    rng = np.random.default_rng(k)
    knn = PopulationKNN(KNeighborsClassifier(k), X, y, list_length=40)
    for n in (30, 120, 300):
        rows = rng.integers(0, len(y), n)          # with replacement: copies are separate points
        sk = KNeighborsClassifier(k, algorithm="brute").fit(X[rows], y[rows])
        ours = knn.predict_rows(knn.fit_rows(rows), np.arange(len(y)))
        np.testing.assert_array_equal(ours, sk.predict(X))


def test_brute_force_fallback_equals_long_lists_with_ties():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(300, 2)).astype(float)   # heavy distance ties
    y = rng.integers(0, 2, 300)
    short = PopulationKNN(KNeighborsClassifier(5), X, y, list_length=8)
    full = PopulationKNN(KNeighborsClassifier(5), X, y, list_length=300)
    for n in (10, 60, 200):
        model_rows = [rng.integers(0, 300, n) for _ in range(4)]
        models = [short.fit_rows(r) for r in model_rows]
        a = short.population_errors(models)
        b = full.population_errors([full.fit_rows(r) for r in model_rows])
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, [short.population_errors([m])[0] for m in models])


def test_tie_rule_prefers_smaller_row_index():
    X = np.array([[0.0], [1.0], [-1.0], [5.0]])
    y = np.array([0, 1, 0, 1])
    knn = PopulationKNN(KNeighborsClassifier(1), X, y, list_length=4)
    # query row 0 is not in the training set; rows 1 and 2 are equally near: row 1 wins
    assert knn.predict_rows(knn.fit_rows(np.array([1, 2, 3])), np.array([0]))[0] == 1


def test_unsupported_settings_are_named():
    ok, why = supported_knn_params(KNeighborsClassifier(weights="distance"))
    assert not ok and "weights" in why
    ok, why = supported_knn_params(KNeighborsClassifier(p=1))
    assert not ok and "metric" in why
    with pytest.raises(ValueError, match="weights"):
        PopulationKNN(KNeighborsClassifier(weights="distance"), np.zeros((3, 1)), np.zeros(3, int))


# ----------------------------------------------------------------------------- against the former walk
@pytest.fixture(scope="module")
def letter_knn(tmp_path_factory):
    """The population k-NN on Letter, its index built once into a temporary cache."""
    from conftest import LETTER_FILE

    if not LETTER_FILE.exists():
        pytest.skip("shared Letter data not present")
    from simstudy.populations import build_population

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(LETTER_FILE),
                            "positive": list("ABCDEFGHIJKLM")})
    cache = tmp_path_factory.mktemp("knn_cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMSTUDY_CACHE", str(cache))
        knn = PopulationKNN(KNeighborsClassifier(5), pop.X, pop.y)
        knn.build_index()
    return pop, knn


def _dense_counts(models, N):
    counts = np.zeros((N, len(models)), np.int32)
    for i, m in enumerate(models):
        counts[m.rows, i] = m.counts
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("n", [100, 200, 400, 3200])
def test_walks_equal_the_former_implementation_on_letter(letter_knn, n):
    """Population errors of the K + 1 models of cv_clt replicates (forward walk, reverse lists,
    brute force), and the predictions of 5x2 and bootstrap models at the sample's own rows
    (local lists), equal the walk of commit f564282 prediction for prediction."""
    from knn_reference import reference_predictions
    from simstudy.cv.splits import FiveByTwo, KFold

    pop, knn = letter_knn
    lists, N = np.asarray(knn.lists, dtype=np.int32), len(pop.y)
    rng = np.random.default_rng(n)
    for _ in range(2):
        sample = pop.sample(n, rng)
        labels = KFold(10).labels(n, rng)
        state = knn.start(sample)
        everyone = np.arange(n)
        models = [knn.fit(state, everyone[labels != k], rng) for k in range(10)] + [knn.fit(state, everyone, rng)]
        ref = reference_predictions(lists, knn.X, knn.y, 5, _dense_counts(models, N), np.arange(N))
        np.testing.assert_array_equal(knn._predict_many(models, None), ref)
        np.testing.assert_array_equal(knn.population_errors(models), np.mean(ref != knn.y, axis=1))
        splits = [(h, ~h) for h in FiveByTwo().halves(n, rng)] + [(rng.integers(0, n, n), None)]
        for train, test in splits:
            train_rows = everyone[train] if train.dtype == bool else train
            test_rows = everyone[test] if test is not None else everyone
            model = knn.fit(state, train_rows, rng)
            ref = reference_predictions(lists, knn.X, knn.y, 5, _dense_counts([model], N), state.index[test_rows])
            np.testing.assert_array_equal(knn.predict(state, model, test_rows), ref[0])
            np.testing.assert_array_equal(knn.predict_rows(model, state.index[test_rows]), ref[0])


def test_forward_and_reverse_walks_agree_with_ties_and_short_lists(monkeypatch):
    """Integer features (many distance ties), lists shorter than most walks need: the reverse
    lists (cut at depths from a few entries, where most queries walk on along their list, to the
    whole list), the forward walk and the former implementation give the same predictions."""
    import simstudy.learners.knn.population as knn_module
    from knn_reference import reference_predictions

    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(500, 3)).astype(float)
    y = rng.integers(0, 3, 500)
    knn = PopulationKNN(KNeighborsClassifier(3), X, y, list_length=40)
    for n in (15, 60, 300):
        models = [knn.fit_rows(rng.integers(0, 500, n)) for _ in range(3)]
        ref = reference_predictions(np.asarray(knn.lists, np.int32), X, y, 3, _dense_counts(models, 500),
                                    np.arange(500))
        monkeypatch.setattr(knn_module, "REVERSE_MIN_HEADS", 10**9)     # forward walk only
        np.testing.assert_array_equal(knn._predict_many(models, None), ref)
        monkeypatch.setattr(knn_module, "REVERSE_MIN_HEADS", 0)         # reverse lists only
        for hits in (1, 3, 12, 10**9):                                  # depth 1-3 entries ... the whole list
            monkeypatch.setattr(knn_module, "REVERSE_HITS", hits)
            np.testing.assert_array_equal(knn._predict_many(models, None), ref)


def test_reverse_lists_hold_every_entry_by_position_then_query():
    """Row j's reverse entries are the (q, t) with lists[q, t] == j, by (t, q): the entries down
    to any depth are a prefix, which the depth-cut reverse walk relies on."""
    from simstudy.learners.knn import walks as knn_walks

    rng = np.random.default_rng(11)
    lists = np.stack([rng.permutation(50)[:12] for _ in range(50)]).astype(np.uint16)
    ptr, rev = np.empty(51, np.int64), np.empty((50 * 12, 2), np.uint16)
    knn_walks.reverse_lists(lists, ptr, rev)
    for j in range(50):
        q, t = np.nonzero(lists == j)
        expected = sorted(zip(t.tolist(), q.tolist()))
        got = [(int(b), int(a)) for a, b in rev[ptr[j]:ptr[j + 1]]]
        assert got == expected


def test_a_model_without_training_rows_gets_the_smallest_label_on_both_walks(monkeypatch):
    """No training row (no votes): every prediction is the smallest label, as before the
    depth-cut reverse walk (whose depth divides by the number of training rows)."""
    import simstudy.learners.knn.population as knn_module
    from simstudy.learners.knn.population import KnnModel

    rng = np.random.default_rng(12)
    X, y = rng.random((300, 3)), rng.integers(0, 2, 300)
    knn = PopulationKNN(3, X, y, list_length=40)
    empty = KnnModel(np.array([], np.int64), np.array([], np.int32))
    for min_heads in (0, 10**9):                     # reverse walk, forward walk
        monkeypatch.setattr(knn_module, "REVERSE_MIN_HEADS", min_heads)
        assert knn.population_errors([empty])[0] == np.mean(y != 0)
