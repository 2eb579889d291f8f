"""What a cross-validation of the user's model produced: per-point losses, fold labels, fold
estimates (and optionally the fold models), plus what is needed to refit (5x2, nested CV)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from simstudy.cv.losses import Loss

__all__ = ["CVLosses", "compare", "difference_bounds"]

#: Designs: "kfold" (each round a partition of the n points into K test folds, training on the
#: rest) or "splits" (each round one train/validation split, e.g. ShuffleSplit).
DESIGNS = ("kfold", "splits")


def difference_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """Range of a difference of two losses with range (low, high): (low - high, high - low)."""
    low, high = bounds
    return (low - high, high - low)


@dataclass(frozen=True)
class Refit:
    """How to fit again on other splits (5x2, nested CV): per model, a callable
    ``fitter(train_rows, test_rows) -> per-point test losses``; ``grouped``: the rows form groups."""

    fitters: tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], ...]
    grouped: bool = False


@dataclass(frozen=True)
class CVLosses:
    """Per-point losses of one model (or loss differences of two) over one or more CV rounds.

    Built by :func:`~simstudy.evaluate.cross_validate_losses`,
    :func:`~simstudy.evaluate.from_predictions`, :func:`~simstudy.evaluate.from_cross_validate`
    or :func:`compare`; :meth:`infer` turns it into every interval and test of the package.

    Attributes
    ----------
    losses : ndarray, shape (rounds, n)
        ``losses[s, i]``: loss of point i predicted by the model of round s that did not train
        on it; NaN where round s does not test point i (train/validation splits).
    folds : ndarray of int, shape (rounds, n)
        Fold of point i in round s (0..K-1), -1 where not tested.
    train_sizes : ndarray of int, shape (rounds, K)
        Training-set size of each fold's model.
    design : {"kfold", "splits"}
        "kfold": every round tests each point once (K-fold, repeated K-fold, stratified or
        grouped); "splits": one train/validation split per round (ShuffleSplit and the like).
    loss : Loss
    bounds : (float, float)
        Range of a mean loss (the loss's bounds; for a comparison (low - high, high - low)).
    name : str
    kind : {"model", "comparison"}
    models : list or None
        The fitted fold models (round-major), when kept.
    parts : tuple of two CVLosses or None
        For a comparison: the two models' results.
    """

    losses: np.ndarray
    folds: np.ndarray
    train_sizes: np.ndarray
    design: str
    loss: Loss
    bounds: tuple[float, float]
    name: str = "model"
    kind: str = "model"
    models: list | None = field(default=None, repr=False)
    parts: tuple[Any, Any] | None = field(default=None, repr=False)
    refit: Refit | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {DESIGNS}; got {self.design!r}.")
        if self.losses.shape != self.folds.shape or self.losses.ndim != 2:
            raise ValueError(f"losses and folds must both have shape (rounds, n); got {self.losses.shape} and "
                             f"{self.folds.shape}.")

    @property
    def n(self) -> int:
        return int(self.losses.shape[1])

    @property
    def rounds(self) -> int:
        """Repetitions of K-fold CV, or number of train/validation splits."""
        return int(self.losses.shape[0])

    @property
    def K(self) -> int:
        """Folds per round (1 for train/validation splits)."""
        return int(self.train_sizes.shape[1])

    @property
    def fold_sizes(self) -> np.ndarray:
        """(rounds, K) number of test points of each fold."""
        return np.stack([np.bincount(f[f >= 0], minlength=self.K) for f in self.folds])

    @property
    def fold_estimates(self) -> np.ndarray:
        """(rounds, K) mean loss of each fold model on its test fold."""
        out = np.empty((self.rounds, self.K))
        for s in range(self.rounds):
            for k in range(self.K):
                out[s, k] = self.losses[s, self.folds[s] == k].mean()
        return out

    @property
    def estimate(self) -> float:
        """The CV estimate of round 0: the mean of its tested losses."""
        tested = self.folds[0] >= 0
        return float(self.losses[0, tested].mean())

    def _repr_html_(self) -> str:
        """What Jupyter shows: what was run, the estimate and every interval."""
        from simstudy.report.notebook import cv_losses_html

        return cv_losses_html(self)

    def infer(self, **options):
        """Every interval and test as one tidy DataFrame; see :func:`simstudy.evaluate.infer`."""
        from simstudy.evaluate.table import infer

        return infer(self, **options)


def compare(a: CVLosses, b: CVLosses) -> CVLosses:
    """Paired comparison of two models run on the same folds: losses of ``a`` minus those of ``b``.

    Every procedure of :meth:`CVLosses.infer` then tests H0: equal expected loss (mu0 = 0), and
    the intervals are for the difference. Both results must come from the same rows, the same
    splits (pass the same splitter with a fixed ``random_state``) and the same loss.
    """
    if not (isinstance(a, CVLosses) and isinstance(b, CVLosses)):
        raise TypeError("compare(a, b) takes two CVLosses (from cross_validate_losses, from_predictions or "
                        "from_cross_validate).")
    if a.kind != "model" or b.kind != "model":
        raise ValueError("compare(a, b) takes two models' results, not comparisons.")
    if a.losses.shape != b.losses.shape or not np.array_equal(a.folds, b.folds) or a.design != b.design:
        raise ValueError(f"{a.name!r} and {b.name!r} were not evaluated on the same splits (rounds x n: "
                         f"{a.losses.shape} vs {b.losses.shape}); run both with the same splitter and a fixed "
                         "random_state, e.g. cv=KFold(10, shuffle=True, random_state=0).")
    if a.loss.name != b.loss.name:
        raise ValueError(f"the two results use different losses ({a.loss.name!r} and {b.loss.name!r}).")
    refit = None
    if a.refit is not None and b.refit is not None:
        refit = Refit(a.refit.fitters + b.refit.fitters, a.refit.grouped or b.refit.grouped)
    return replace(a, losses=a.losses - b.losses, bounds=difference_bounds(a.loss.bounds),
                   name=f"{a.name} - {b.name}", kind="comparison", models=None, parts=(a, b), refit=refit)
