"""The ``split_predictions`` fast path (all fits of a split design in one call) against the
required ``fit``/``predict`` calls split by split, and nested CV through it."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from simstudy.cv.loop import nested_cv_losses, split_losses
from simstudy.cv.losses import zero_one
from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits
from simstudy.learners.cart import CartLearner
from simstudy.learners.logistic.learner import LogisticLearner
from simstudy.populations import Sample


def _sample(kind: str, n: int, rng) -> Sample:
    X = rng.integers(0, 16, (n, 6)).astype(float)           # few values: the histogram pool path
    if kind == "continuous":
        X = rng.normal(size=(n, 6))                          # many values: the sort path
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) * 4 > (15 if kind != "continuous" else 0)).astype(int)
    if kind == "three-classes":
        y = y + (X[:, 2] > 10)
    if kind == "rare-class":                                 # class 2 in 3 rows: most training sets lack it
        y[:3] = 2
    return Sample(X, y)


def _splits(n: int, rng) -> tuple[list, list]:
    """5x2 halves, repeated train/validation splits and a few tiny training sets (one class)."""
    halves = FiveByTwo().halves(n, rng)
    trains = [np.flatnonzero(t) for h in halves for t in (h, ~h)]
    tests = [np.flatnonzero(~t) for h in halves for t in (h, ~h)]
    for test in RepeatedSplits(n // 10, 6).test_masks(n, rng):
        rows = np.flatnonzero(test) if np.asarray(test).dtype == bool else np.asarray(test)
        keep = np.ones(n, bool)
        keep[rows] = False
        trains.append(np.flatnonzero(keep))
        tests.append(rows)
    trains += [np.array([0, 1]), np.arange(5)]
    tests += [np.arange(2, 12), np.arange(5, n)]
    return trains, tests


LEARNERS = {
    "tree": lambda: CartLearner(DecisionTreeClassifier()),
    "tree-depth3-entropy": lambda: CartLearner(DecisionTreeClassifier(max_depth=3, criterion="entropy")),
    "logreg": lambda: LogisticLearner(LogisticRegression(solver="newton-cholesky")),
}


CASES = [(name, kind) for name in LEARNERS for kind in ("letter-like", "continuous", "three-classes", "rare-class")
         if name != "logreg" or kind in ("letter-like", "continuous")]   # the logistic kernel: labels 0/1 only


@pytest.mark.parametrize("learner_name,kind", CASES)
def test_split_predictions_equal_fit_and_predict_split_by_split(learner_name, kind):
    """The same predictions as ``fit`` + ``predict`` per split, and the replicate's generator
    consumed identically (the next draw is equal)."""
    rng = np.random.default_rng(11)
    n = 120
    sample = _sample(kind, n, rng)
    trains, tests = _splits(n, rng)
    learner = LEARNERS[learner_name]()
    state = learner.start(sample)
    fast_rng, loop_rng = np.random.default_rng(5), np.random.default_rng(5)
    fast = learner.split_predictions(state, trains, tests, fast_rng)
    loop = [learner.predict(state, learner.fit(state, train, loop_rng), test) for train, test in zip(trains, tests)]
    assert len(fast) == len(trains)
    for a, b in zip(fast, loop):
        np.testing.assert_array_equal(a, b)
    assert fast_rng.integers(0, 2**62) == loop_rng.integers(0, 2**62)


def test_split_losses_take_the_fast_path_only_without_probabilities():
    """split_losses gives the same losses with and without the fast path (the fast path is
    skipped when the loss needs probabilities)."""

    class FitPredictOnly:  # the same learner without split_predictions
        def __init__(self, learner):
            self._learner = learner

        def __getattr__(self, name):
            if name == "split_predictions":
                raise AttributeError(name)
            return getattr(self._learner, name)

    rng = np.random.default_rng(2)
    sample = _sample("letter-like", 80, rng)
    trains, tests = _splits(80, rng)
    learner = CartLearner(DecisionTreeClassifier())
    state = learner.start(sample)
    a = split_losses(learner, state, sample.y, zero_one, tests, np.random.default_rng(1), trains)
    b = split_losses(FitPredictOnly(learner), state, sample.y, zero_one, tests, np.random.default_rng(1), trains)
    for x, z in zip(a, b):
        np.testing.assert_array_equal(x, z)


@pytest.mark.parametrize("shared_rng", [False, True])
def test_nested_cv_many_losses_equal_one_fit_per_call(shared_rng):
    """nested_cv_losses with ``many_losses`` (one call per repetition) equals the one-fit-per-call
    path, also when the fits draw from the same generator as the fold assignments (the
    rho_hat worker's case): the draws happen in the same order."""
    n, K, R = 60, 5, 3
    sample = _sample("letter-like", n, np.random.default_rng(4))
    learner = CartLearner(DecisionTreeClassifier())
    state = learner.start(sample)
    first = KFold(K).labels(n, np.random.default_rng(9))
    out = {}
    for path in ("one", "many"):
        rng = np.random.default_rng(3)
        fit_rng = rng if shared_rng else np.random.default_rng(8)

        def one(train, test):
            return learner.predict(state, learner.fit(state, train, fit_rng), test) != sample.y[test]

        def many(trains, tests):
            return split_losses(learner, state, sample.y, zero_one, tests, fit_rng, trains)

        out[path] = nested_cv_losses(one if path == "one" else None, n, K, R, rng, first_labels=first,
                                     many_losses=many if path == "many" else None)
        out[path + "-next"] = rng.integers(0, 2**62)
    for name in ("pair_losses", "outer_losses", "labels"):
        np.testing.assert_array_equal(getattr(out["one"], name), getattr(out["many"], name))
    assert out["one-next"] == out["many-next"]


def test_nested_cv_refuses_ambiguous_or_short_many_losses():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="exactly one of losses"):
        nested_cv_losses(None, 12, 3, 1, rng)
    with pytest.raises(ValueError, match="exactly one of losses"):
        nested_cv_losses(lambda tr, te: np.zeros(len(te)), 12, 3, 1, rng, many_losses=lambda trs, tes: [])
    with pytest.raises(ValueError, match="returned 1 loss arrays for 6 splits"):
        nested_cv_losses(None, 12, 3, 1, rng, many_losses=lambda trs, tes: [np.zeros(len(tes[0]))])
