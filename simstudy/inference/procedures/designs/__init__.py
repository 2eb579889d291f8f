"""Split designs: what a procedure needs fitted, declared as small frozen dataclasses.

A design says which models are fitted on which points and where their losses are needed; its
:meth:`Design.plan` draws one instance of it for a sample of size n as a :class:`SplitPlan`:
S splits, each with the multiplicity of every point in its training set (0 or 1, or the
bootstrap count) and the points it tests. The fitting side fits one model per split, evaluates
it where ``plan.evaluate`` is True and passes the losses on (:class:`~.losses.SplitLosses`).

The order of the splits is part of each design (its docstring says it): procedures read the
blocks they need from it (the K folds of a repetition, the halves of a split into halves, the
pair fits of nested CV). A plan built elsewhere (another tool's splits) is accepted when
:meth:`Design.validate` finds it follows that layout.

Sizes. A test fraction f gives n_test = floor(f n + 1/2) points (at least 1); K folds of n
points have sizes floor(n/K) and ceil(n/K) (:class:`simstudy.cv.splits.KFold`); halves of n have
floor(n/2) points (one point is left out when n is odd).

- :mod:`.base`: :class:`Design`, :class:`SplitPlan`, :func:`test_size` and the layout checks;
- :mod:`.kfold`: K-fold CV, leave-one-out, repeated K-fold and nested CV;
- :mod:`.random_splits`: hold-out, repeated train/validation splits, 5x2 and the bootstrap;
- :mod:`.halves`: the designs that repeat their splits inside random halves of the sample
  (the conservative Z's paired subsampling, the K-fold CVs of halves of rho_hat).
"""
from simstudy.inference.procedures.designs.base import Design, SplitPlan, test_size
from simstudy.inference.procedures.designs.halves import KFoldHalvesDesign, PairedSubsamplingDesign
from simstudy.inference.procedures.designs.kfold import (
    KFoldDesign, LeaveOneOutDesign, NestedCVDesign, RepeatedKFoldDesign,
)
from simstudy.inference.procedures.designs.random_splits import (
    BootstrapDesign, FiveByTwoDesign, HoldOutDesign, RepeatedSplitsDesign,
)

__all__ = ["BootstrapDesign", "Design", "FiveByTwoDesign", "HoldOutDesign", "KFoldDesign", "KFoldHalvesDesign",
           "LeaveOneOutDesign", "NestedCVDesign", "PairedSubsamplingDesign", "RepeatedKFoldDesign",
           "RepeatedSplitsDesign", "SplitPlan", "test_size"]
