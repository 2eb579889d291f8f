"""The split schemes on one base class: the same draws as the scheme functions they replaced,
scikit-learn's splitter interface, scikit-learn splitters accepted, and truth_available a bool."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.model_selection import KFold as SkKFold
from sklearn.tree import DecisionTreeClassifier

from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits, Splitter, check_splitter
from simstudy.populations.truth import missing_truth, truth_available


def _old_halves(n, rng):
    """The 5x2 halvings as the scheme function drew them: one permutation per halving."""
    halves = np.zeros((5, n), dtype=bool)
    for i in range(5):
        halves[i, rng.permutation(n)[: n // 2]] = True
    return halves


def _old_validation_sets(n, n_test, repetitions, rng):
    test = np.zeros((repetitions, n), dtype=bool)
    for j in range(repetitions):
        test[j, rng.permutation(n)[:n_test]] = True
    return test


@pytest.mark.parametrize("n", [11, 40])
def test_the_schemes_draw_what_the_scheme_functions_drew(n):
    np.testing.assert_array_equal(FiveByTwo().halves(n, np.random.default_rng(3)),
                                  _old_halves(n, np.random.default_rng(3)))
    np.testing.assert_array_equal(RepeatedSplits(n // 4, 6).test_masks(n, np.random.default_rng(4)),
                                  _old_validation_sets(n, n // 4, 6, np.random.default_rng(4)))
    labels = KFold(4).labels(n, np.random.default_rng(5))
    masks = KFold(4).test_masks(n, np.random.default_rng(5))
    np.testing.assert_array_equal(masks, labels[None, :] == np.arange(4)[:, None])


@pytest.mark.parametrize("scheme", [KFold(5), FiveByTwo(), RepeatedSplits(3, 4)])
def test_every_scheme_is_a_splitter_whose_splits_are_its_test_masks(scheme):
    assert isinstance(scheme, Splitter)
    masks = scheme.test_masks(20, np.random.default_rng(0))
    assert masks.shape == (scheme.get_n_splits(), 20)
    pairs = list(scheme.train_test(20, np.random.default_rng(0)))
    for (train, test), mask in zip(pairs, masks):
        np.testing.assert_array_equal(test, np.flatnonzero(mask))
        np.testing.assert_array_equal(train, np.flatnonzero(~mask))


def test_five_by_two_uses_each_halving_both_ways():
    halves = FiveByTwo().halves(9, np.random.default_rng(1))
    masks = FiveByTwo().test_masks(9, np.random.default_rng(1))
    np.testing.assert_array_equal(masks[0::2], ~halves)
    np.testing.assert_array_equal(masks[1::2], halves)


def test_the_schemes_are_scikit_learn_splitters():
    X, y = np.random.default_rng(0).normal(size=(60, 3)), np.tile([0, 1], 30)
    scores = cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=KFold(5, random_state=7))
    again = cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=KFold(5, random_state=7))
    assert len(scores) == 5 and np.array_equal(scores, again)
    first = [test for _, test in KFold(5, random_state=7).split(X, y)]
    labels = KFold(5).labels(60, np.random.default_rng(7))
    for k, test in enumerate(first):
        np.testing.assert_array_equal(test, np.flatnonzero(labels == k))


def test_check_splitter_accepts_a_number_of_folds_and_any_scikit_learn_splitter():
    shuffled = check_splitter(5, random_state=3)
    assert isinstance(shuffled, SkKFold) and shuffled.shuffle and shuffled.random_state == 3
    stratified = StratifiedKFold(4)
    assert check_splitter(stratified) is stratified and check_splitter(KFold(3)) == KFold(3)
    for bad in (1, "five", object()):
        with pytest.raises(ValueError, match="cv="):
            check_splitter(bad)


def test_truth_available_is_a_bool_and_the_reason_is_separate():
    class Finite:
        name = "finite"

        def evaluation_set(self, dtype=float):
            return np.zeros((2, 1)), np.zeros(2)

    class Predicts:
        name = "predicts"

        def predict_features(self, model, X):
            return np.zeros(len(X))

    class Opaque:
        name = "opaque"

    assert truth_available(Finite(), Predicts()) is True and missing_truth(Finite(), Predicts()) == ""
    assert truth_available(Finite(), Opaque()) is False
    assert "cannot predict arbitrary features" in missing_truth(Finite(), Opaque())
    assert truth_available(object(), Predicts()) is False
