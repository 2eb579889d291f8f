"""The numba CART as a simstudy learner.

The kernels' modules (and numba with them) are imported when a method first needs them, not
with this module: the ``simstudy`` command's main process builds the learner and checks it, and
only its workers grow trees.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from simstudy.contracts import GuaranteedOutputs
from simstudy.lazy import LazyModule
from simstudy.learners.base import Folds
from simstudy.learners.cart.params import TIE_RULES, supported_tree_params, supported_tree_settings

if TYPE_CHECKING:
    from simstudy.learners.cart.ranking import RankedFeatures
    from simstudy.learners.cart.tree import CartTree

_bitsets = LazyModule("simstudy.learners.cart.bitsets")
_crossval = LazyModule("simstudy.learners.cart.crossval")
_grow = LazyModule("simstudy.learners.cart.grow")
_ranking = LazyModule("simstudy.learners.cart.ranking")
_tree = LazyModule("simstudy.learners.cart.tree")


class CartLearner(GuaranteedOutputs):
    """The numba tree behind the learner protocol (:mod:`simstudy.learners.base`).

    Parameters
    ----------
    estimator : DecisionTreeClassifier
        Its parameters are reproduced (see :func:`supported_tree_params`); its ``random_state``
        seeds the tie-breaking when set, otherwise each fit draws a seed from the replicate's
        generator.
    ties : {"draw", "shuffle"}
        How ties between features are broken (:data:`simstudy.learners.cart.params.TIE_RULES`):
        both choose uniformly among the tied features, as scikit-learn does; "shuffle" reproduces
        the random streams of simstudy before the change of default.
    """

    dtype = np.float32

    def __init__(self, estimator, name: str = "tree", ties: str = "draw"):
        ok, why = supported_tree_params(estimator)
        if not ok:
            raise ValueError(f"the numba tree cannot reproduce this estimator: {why}")
        self._configure(estimator.get_params(deep=False), name, ties)
        self.template = estimator

    @classmethod
    def from_params(cls, params: dict[str, Any], name: str = "tree", ties: str = "draw") -> "CartLearner":
        """The learner of a DecisionTreeClassifier with these parameters (its whole
        ``get_params(deep=False)``, e.g. as remembered by :mod:`simstudy.learners.accepted`),
        without scikit-learn: the same learner, and the same ``describe()``, as
        ``CartLearner(DecisionTreeClassifier(**params))``."""
        ok, why = supported_tree_settings(params)
        if not ok:
            raise ValueError(f"the numba tree cannot reproduce this estimator: {why}")
        learner = cls.__new__(cls)
        learner._configure(dict(params), name, ties)
        learner.template = None
        return learner

    def _configure(self, params: dict[str, Any], name: str, ties: str) -> None:
        self.name = name
        self.criterion = params["criterion"]
        self.max_depth = params["max_depth"]
        self.min_samples_split = int(params["min_samples_split"])
        self.min_samples_leaf = int(params["min_samples_leaf"])
        self.random_state = params["random_state"]
        if ties not in TIE_RULES:
            raise ValueError(f"ties={ties!r} is invalid: choose one of {', '.join(TIE_RULES)}.")
        self.ties = ties
        self.params = {k: repr(v) for k, v in params.items()}
        self.fast_path = True

    def describe(self) -> dict[str, Any]:
        """What the run identity records; ``ties="shuffle"`` is not named in it, so that the run
        identities written with that rule keep their hash (and those runs can be resumed)."""
        out = {"name": self.name, "estimator": "DecisionTreeClassifier", "engine": "simstudy numba CART",
               "params": dict(self.params)}
        if self.ties != "shuffle":
            out["ties"] = self.ties
        return out

    def __getstate__(self) -> dict[str, Any]:
        # workers get the parameters, not the scikit-learn estimator (no scikit-learn import there)
        return {k: v for k, v in self.__dict__.items() if k != "template"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, template=None)

    task = "classification"

    def start(self, sample) -> "CartState":
        """Rank the sample's features once; fits are row subsets of the result."""
        return CartState(_ranking.RankedFeatures.from_array(sample.X), np.asarray(sample.y))

    def start_subset(self, state: "CartState", rows: np.ndarray) -> "CartState":
        """The state of the sample's rows ``rows``, keeping the sample's ranks (no ranking again).

        Every tree grown on it equals the tree of ``start`` on those rows: a rank whose value is
        absent from the rows is an empty bin, which holds no split candidate, and a threshold lies
        between two values present in the node either way (:class:`RankedFeatures`)."""
        rows = np.asarray(rows)
        return CartState(state.ranked[rows], state.y[rows])

    def _seed(self, rng: np.random.Generator) -> int:
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state)
        return int(rng.integers(0, 2**31 - 1))

    def fit(self, state: "CartState", rows: np.ndarray, rng: np.random.Generator) -> CartTree:
        """The tree grown on the sample's rows ``rows`` (one seed drawn from ``rng``)."""
        return self._fit_seeded(state, rows, self._seed(rng))

    def _fit_seeded(self, state: "CartState", rows: np.ndarray, seed: int) -> CartTree:
        return _grow.fit_cart(state.ranked[rows], state.y[rows], seed, self.criterion, self.max_depth,
                              self.min_samples_split, self.min_samples_leaf, self.ties)

    def split_predictions(self, state: "CartState", trains, tests, rng: np.random.Generator) -> list[np.ndarray]:
        """Predictions of one tree per train/test split, the trees grown in one compiled call: the
        same trees, seeds (one per split, in order) and predictions as :meth:`fit` and
        :meth:`predict` split by split. With more than two classes, a training set that lacks a
        class is grown by :meth:`fit`'s path (its class encoding differs from the sample's)."""
        seeds = [self._seed(rng) for _ in trains]
        classes = np.unique(state.y)
        if classes.size > 2 and any(np.unique(state.y[rows]).size < classes.size for rows in trains):
            return [self.predict(state, self._fit_seeded(state, rows, seed), test)
                    for rows, test, seed in zip(trains, tests, seeds)]
        return _crossval.predict_splits_cart(state.ranked, state.y, trains, tests, seeds, self.criterion,
                                             self.max_depth, self.min_samples_split, self.min_samples_leaf, self.ties)

    def predict(self, state: "CartState", model: CartTree, rows: np.ndarray) -> np.ndarray:
        return _tree.predict_cart(model, state.ranked.X[rows])

    def predict_features(self, model: CartTree, X: np.ndarray) -> np.ndarray:
        """Predicted labels of features X (cast to float32, the dtype the tree was grown on)."""
        return _tree.predict_cart(model, X)

    def cross_validate(self, state: "CartState", labels: np.ndarray, K: int, rng: np.random.Generator,
                       keep_models: bool = True) -> Folds:
        """K-fold CV in one compiled call; the same trees, seeds and predictions as :meth:`fit` and
        :meth:`predict` fold by fold (one seed drawn from ``rng`` per fold, in fold order)."""
        seeds = [self._seed(rng) for _ in range(K)]
        folds = _crossval.cross_validate_cart(state.ranked, state.y, labels, K, seeds, self.criterion,
                                              self.max_depth, self.min_samples_split, self.min_samples_leaf,
                                              keep_models, self.ties)
        return Folds(folds.predictions, folds.models)

    def population_errors(self, models: list[CartTree], population) -> np.ndarray:
        """Exact error rates of fitted trees on a finite population, in one pass (row bitsets)."""
        X, y = population.finite_data(np.float32)
        return _bitsets.population_errors(models, X, y)


@dataclass(frozen=True)
class CartState:
    """A sample prepared for the tree: its ranked features and labels."""

    ranked: RankedFeatures
    y: np.ndarray
