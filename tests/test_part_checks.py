"""The checks of user parts' outputs (populations/checks.py, cv/checks.py), the kernels' input
contracts (learners/contracts.py) and the declared finite-population capability."""
import numpy as np
import pytest

from simstudy.cv.checks import check_predictions, checked_fold_predictions, checked_losses, scored_losses
from simstudy.cv.losses import squared, zero_one
from simstudy.errors import PartOutputError, UserError
from simstudy.learners.base import finite_population_data
from simstudy.learners.contracts import KernelInputError
from simstudy.populations.base import Population, Sample, finite_data
from simstudy.populations.checks import checked_sample
from simstudy.populations.finite import TabularPopulation

RNG = np.random.default_rng(0)
X = RNG.standard_normal((12, 3))
Y = RNG.integers(0, 3, 12)


def test_a_valid_sample_passes_unchanged():
    sample = Sample(X=X, y=Y)
    assert checked_sample(sample, 12, "classification") is sample


def test_lists_become_arrays_with_the_same_values():
    out = checked_sample(Sample(X=X.tolist(), y=Y.tolist()), 12, "classification")
    np.testing.assert_array_equal(out.X, X)
    np.testing.assert_array_equal(out.y, Y)


@pytest.mark.parametrize("sample, words", [
    (None, "None"), ((X, Y), "tuple"), (Sample(X=X[:-1], y=Y), "11 rows"), (Sample(X=X[:, 0], y=Y), "1-D"),
    (Sample(X=np.where(X > 1, np.nan, X), y=Y), "NaN"), (Sample(X=X, y=Y + 0.5), "whole numbers"),
    (Sample(X=X.astype(str), y=Y), "dtype"), (Sample(X=X, y=Y.astype(float) * np.nan), "non-finite"),
])
def test_a_broken_sample_names_the_part_and_what_it_returned(sample, words):
    with pytest.raises(PartOutputError) as excinfo:
        checked_sample(sample, 12, "classification")
    assert "population.sample" in str(excinfo.value) and words in str(excinfo.value)
    assert isinstance(excinfo.value, UserError)


@pytest.mark.parametrize("pred, words", [
    (np.zeros(11, int), "shape (11,)"), (0, "a scalar"), (np.zeros((12, 1), int), "column"),
    (Y.astype(str), "dtype"), (np.full(12, 7), "no class label"), (np.full(12, 0.4), "probabilities"),
])
def test_wrong_predictions_are_refused(pred, words):
    with pytest.raises(PartOutputError) as excinfo:
        check_predictions(pred, Y, "classification")
    assert "learner.predict" in str(excinfo.value) and words in str(excinfo.value)


def test_valid_predictions_pass_whatever_the_labels():
    check_predictions(Y[::-1], Y, "classification")
    huge = np.where(Y > 0, 10**9, -5)
    check_predictions(huge[::-1], huge, "classification")                 # the table-free exact path
    check_predictions(np.linspace(0, 1, 12), RNG.standard_normal(12), "regression")
    with pytest.raises(PartOutputError, match="non-finite"):
        check_predictions(np.full(12, np.inf), RNG.standard_normal(12), "regression")
    assert checked_fold_predictions([1, 2], 2).shape == (2,)


def test_loss_values_are_checked_on_every_call():
    assert scored_losses(zero_one, Y, Y).sum() == 0
    with pytest.raises(PartOutputError, match="loss 'x' returned a scalar"):
        checked_losses(0.5, (12,), "x")
    with pytest.raises(PartOutputError, match="NaN"):
        squared(np.array([1.0, np.nan]), np.array([1.0, 2.0]))


class _WithX(Population):
    name = "with_x"
    X = ("a", "b")
    y = "label"

    def sample(self, n, rng):
        return Sample(X=rng.standard_normal((n, 2)), y=rng.integers(0, 2, n))

    def seed_params(self):
        return {}


def test_finite_is_declared_not_guessed_from_attribute_names():
    tabular = TabularPopulation(X, Y, name="t")
    assert finite_data(_WithX()) is None and finite_population_data(_WithX()) is None
    assert finite_data(tabular)[0] is tabular.X and finite_population_data(tabular, np.float32)[0].dtype == np.float32


def test_the_kernels_refuse_out_of_contract_input():
    from simstudy.learners.cart.crossval import cross_validate_cart, predict_splits_cart
    from simstudy.learners.cart.grow import fit_cart
    from simstudy.learners.cart.tree import predict_cart

    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(KernelInputError, match="CART"):
        fit_cart(X[:-1], y, 1)
    with pytest.raises(KernelInputError, match="0..2"):
        cross_validate_cart(X, y, np.arange(12) % 3 + 1, 3, [1, 2, 3])
    with pytest.raises(KernelInputError, match="test rows"):
        predict_splits_cart(X, y, [np.arange(6)], [np.arange(6, 13)], [1])
    tree = fit_cart(X, y, 1, max_depth=3)
    if tree.feature.max() > 0:
        with pytest.raises(KernelInputError, match="features"):
            predict_cart(tree, X[:, :1])


def test_the_logistic_and_linear_kernels_refuse_bad_fold_labels():
    from sklearn.linear_model import LogisticRegression, RidgeClassifier

    from simstudy.learners.linear.batched import batched_linear_learner
    from simstudy.learners.logistic.learner import LogisticLearner

    y = (X[:, 0] > 0).astype(int)
    logistic = LogisticLearner(LogisticRegression(solver="newton-cholesky"), "logreg")
    state = logistic.start(Sample(X=X, y=y))
    with pytest.raises(KernelInputError, match="fold labels"):
        logistic.cross_validate(state, np.arange(12) % 4, 3, np.random.default_rng(0))
    ridge, _ = batched_linear_learner(RidgeClassifier(), "ridge")
    with pytest.raises(KernelInputError, match="X of shape"):
        ridge.cross_validate_batch(X[None], y[None, :-1], (np.arange(12) % 3)[None], 3)


def test_guaranteed_outputs_are_declared_by_built_in_parts_not_guessed():
    """The built-in tree and tabular population declare GuaranteedOutputs (their label checks are
    skipped); a user's part is checked in full, whatever attributes it has; the shape and dtype
    of a guaranteed part's predictions are still checked."""
    from simstudy.contracts import GuaranteedOutputs, guarantees_outputs
    from simstudy.learners.dispatch import build_learner

    assert guarantees_outputs(build_learner("tree"))
    assert guarantees_outputs(TabularPopulation(np.zeros((4, 1)), np.array([0, 1, 0, 1]), name="t"))
    assert not guarantees_outputs(build_learner("knn"))  # a scikit-learn estimator: checked

    class Mimic:  # names of the declaration as attributes: not a declaration
        GuaranteedOutputs = True
        guaranteed = True
        guarantees_outputs = True

    assert not guarantees_outputs(Mimic()) and not guarantees_outputs(GuaranteedOutputs)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(PartOutputError, match="no class label"):
        check_predictions(np.array([0, 1, 7, 1]), y)
    check_predictions(np.array([0, 1, 7, 1]), y, guaranteed=True)  # values not checked
    with pytest.raises(PartOutputError, match="shape"):
        check_predictions(np.array([0, 1, 0]), y, guaranteed=True)
    with pytest.raises(PartOutputError, match="dtype"):
        check_predictions(np.array(["a", "b", "a", "b"]), y, guaranteed=True)
    sample = Sample(X=np.zeros((4, 1)), y=np.array([0.5, 1, 0, 1]))
    with pytest.raises(PartOutputError, match="whole numbers"):
        checked_sample(sample, 4, "classification")
    assert checked_sample(sample, 4, "classification", guaranteed=True) is sample
    with pytest.raises(PartOutputError, match="rows"):
        checked_sample(sample, 5, "classification", guaranteed=True)
