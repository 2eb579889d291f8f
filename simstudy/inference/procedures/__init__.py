"""The CV inference benchmark's procedures, behind one protocol (pure code: no fitting, no simulation).

- :mod:`.designs`: the split designs (frozen dataclasses) and the :class:`SplitPlan` a design
  draws for a sample of n points;
- :mod:`.losses`: :class:`SplitLosses`, the per-split, per-point losses of a plan's models;
- :mod:`.protocol`: :class:`Procedure` (name, kind, design, estimand, ``apply(losses, alpha)``);
- :mod:`.outcomes`: :class:`IntervalOutcome`, :class:`TestOutcome`, :class:`PosteriorOutcome`;
- :mod:`.catalog` and :mod:`.registry`: the registered procedures (:data:`PROCEDURES`);
- new formulas: :mod:`.conservative_z`, :mod:`.bootstrap`, :mod:`.bayesian`; the others reuse
  :mod:`simstudy.inference` (:mod:`.adapters` reads the losses for them).

Example::

    import numpy as np
    from simstudy.inference.procedures import PROCEDURES, SplitLosses

    proc = PROCEDURES["cv_clt_all_pairs"].load()
    plan = proc.design.plan(100, np.random.default_rng(0))   # which model trains on what
    losses = ...                                             # fit one model per split, shape (S, n)
    proc.apply(SplitLosses(plan, losses), alpha=0.05)        # a TestOutcome with .interval
"""
from simstudy.inference.procedures.designs import (
    BootstrapDesign, Design, FiveByTwoDesign, HoldOutDesign, KFoldDesign, KFoldHalvesDesign, LeaveOneOutDesign,
    NestedCVDesign, PairedSubsamplingDesign, RepeatedKFoldDesign, RepeatedSplitsDesign, SplitPlan, test_size,
)
from simstudy.inference.procedures.losses import SplitLosses
from simstudy.inference.procedures.outcomes import IntervalOutcome, PosteriorOutcome, TestOutcome
from simstudy.inference.procedures.protocol import ESTIMANDS, KINDS, Procedure
from simstudy.inference.procedures.bootstrap import no_information_error
from simstudy.inference.procedures.registry import PROCEDURES

__all__ = ["BootstrapDesign", "Design", "ESTIMANDS", "FiveByTwoDesign", "HoldOutDesign", "IntervalOutcome",
           "KFoldDesign", "KFoldHalvesDesign", "KINDS", "LeaveOneOutDesign", "NestedCVDesign", "PROCEDURES",
           "PairedSubsamplingDesign", "PosteriorOutcome", "Procedure", "RepeatedKFoldDesign", "RepeatedSplitsDesign",
           "SplitLosses", "SplitPlan", "TestOutcome", "no_information_error", "test_size"]
