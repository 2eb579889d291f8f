"""What a procedure reads: the per-split, per-point losses of one design instance.

:class:`SplitLosses` holds a :class:`~.designs.SplitPlan` (which points each split trains on and
tests) and the losses of each split's model at the points the plan evaluates; leading axes of
``losses`` are replicates (a batch of samples sharing one plan: for i.i.d. samples the plan's
distribution does not depend on the data, so a shared plan is an instance like any other).
For a comparison of two learners the losses are the differences (learner 1 minus learner 2)
of the two learners' losses on the same splits.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.inference.procedures.designs import Design, SplitPlan

__all__ = ["SplitLosses"]


@dataclass(frozen=True, eq=False)
class SplitLosses:
    """Losses of the models of one split plan (leading axes: replicates).

    Attributes
    ----------
    plan : SplitPlan
    losses : ndarray, shape (..., S, n)
        ``losses[..., s, i]``: loss at point i of the model of split s; finite wherever
        ``plan.evaluate`` is True, ignored (e.g. NaN) elsewhere.
    no_information : float or ndarray (...), optional
        The no-information error gamma = (1/n^2) sum_i sum_j L(y_i, f(x_j)) of the model trained
        on all n points (f, split 0 of :class:`~.designs.Bootstrap`): the error when features
        and labels are independent (Efron & Tibshirani 1997, Section 3); the .632+ needs it.
        :func:`~.bootstrap.no_information_error` computes it from labels and predictions.
    name : str
        What the losses are of (a learner, or "A - B" for a comparison).
    """

    plan: SplitPlan
    losses: np.ndarray
    no_information: np.ndarray | float | None = None
    name: str = ""

    def __post_init__(self):
        if not isinstance(self.plan, SplitPlan):
            raise TypeError(f"plan must be a SplitPlan (from design.plan(n, rng)); got {type(self.plan).__name__}.")
        losses = np.asarray(self.losses, dtype=float)
        if losses.ndim < 2 or losses.shape[-2:] != self.plan.train.shape:
            raise ValueError(f"losses must have shape (..., splits, n) = (..., {self.plan.splits}, {self.plan.n}) "
                             f"to match the plan; got {losses.shape}.")
        missing = ~np.isfinite(losses) & self.plan.evaluate
        if np.any(missing):
            raise ValueError(f"{int(missing.sum())} loss(es) are missing (NaN or infinite) where the plan evaluates "
                             f"its models (plan.evaluate); compute every test loss (and, for the bootstrap, every "
                             f"in-sample loss).")
        object.__setattr__(self, "losses", losses)
        if self.no_information is not None:
            gamma = np.asarray(self.no_information, dtype=float)
            if gamma.shape not in ((), self.batch_shape) or not np.all(np.isfinite(gamma)):
                raise ValueError(f"no_information must be finite, one value per replicate (shape "
                                 f"{self.batch_shape}); got {gamma!r}.")

    @property
    def design(self) -> Design:
        return self.plan.design

    @property
    def n(self) -> int:
        return self.plan.n

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.losses.shape[:-2]

    def split_means(self, rows=slice(None)) -> np.ndarray:
        """Mean test loss of each split in ``rows``: shape (..., S_rows)."""
        test = self.plan.test[rows]
        return np.where(test, self.losses[..., rows, :], 0.0).sum(axis=-1) / test.sum(axis=-1)

    def residuals(self, rows=slice(None)) -> np.ndarray:
        """The loss of each point under the split of ``rows`` that tests it: shape (..., n).

        ``rows`` must be a block testing each point at most once (a K-fold block, leave-one-out);
        points the block does not test get NaN.
        """
        test = self.plan.test[rows]
        if np.any(test.sum(axis=0) > 1):
            raise ValueError("residuals() needs a block of splits testing each point at most once.")
        tested = test.any(axis=0)
        e = np.where(test, self.losses[..., rows, :], 0.0).sum(axis=-2)
        return np.where(tested, e, np.nan)

    def fold_labels(self, rows=slice(None)) -> np.ndarray:
        """Fold label (0..K-1, the position of the split in ``rows``) of each point a block tests; -1 elsewhere."""
        test = self.plan.test[rows]
        return np.where(test.any(axis=0), np.argmax(test, axis=0), -1)

    def in_sample_means(self, rows=slice(None)) -> np.ndarray:
        """Apparent error of each split in ``rows``: sum_i N_i L_i / sum_i N_i over its training points (with
        multiplicities N_i); needs the in-sample losses (``plan.evaluate`` on the training points)."""
        train = self.plan.train[rows]
        if np.any(~self.plan.evaluate[rows] & (train > 0)):
            raise ValueError("the apparent errors need the in-sample losses of every split (the bootstrap design "
                             "evaluates every point).")
        inside = np.where(train > 0, self.losses[..., rows, :], 0.0)
        return np.einsum("...sn,sn->...s", inside, train) / train.sum(axis=1)
