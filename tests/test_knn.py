"""The population k-NN: identical to scikit-learn without distance ties; list and brute-force
paths agree; one walk for many models equals one model at a time."""
import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from simstudy.learners.knn import PopulationKNN, supported_knn_params


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
