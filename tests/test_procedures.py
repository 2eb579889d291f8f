"""The CV inference benchmark's procedures: designs, the protocol, the registry, every registered
procedure end to end, and the three checks of each new formula (conservative Z, leave-one-out
bootstrap with its delta-method SE, .632+, location-shifted bootstrap, Bayesian correlated t):
(a) theory or a hand-computed value, (b) an independent reference, (c) a Monte Carlo calibration
on the exact-truth testbed of ``procedure_testbed.py``, judged with 99.9% Wilson intervals or
z-scores (fixed seeds: the figures quoted in the docstrings are what these seeds give).
"""
from __future__ import annotations

import math
import warnings
import zlib

import numpy as np
import pytest
from procedure_testbed import Testbed, run

from simstudy.inference import repeated_kfold_t_test, wilson_bounds
from simstudy.inference.procedures import (
    ESTIMANDS, KINDS, PROCEDURES, Bootstrap, FiveByTwo, HoldOut, IntervalOutcome, KFold, KFoldHalves, LeaveOneOut,
    NestedCV, PairedSubsampling, PosteriorOutcome, Procedure, RepeatedKFold, RepeatedSplits, SplitLosses, SplitPlan,
    TestOutcome, no_information_error,
)
from simstudy.inference.procedures import catalog
from simstudy.inference.procedures.bayesian import correlated_posterior
from simstudy.inference.procedures.bootstrap import leave_one_out_bootstrap, location_shifted_interval, point632plus
from simstudy.inference.procedures.conservative_z import conservative_z

Z975 = 1.959963984540054
DESIGNS = [HoldOut(0.2), KFold(5), LeaveOneOut(), RepeatedKFold(4, 3), RepeatedSplits(6, 0.2), FiveByTwo(),
           Bootstrap(8), NestedCV(3, 2), PairedSubsampling(3, 2, 0.2), KFoldHalves(3, 2)]
NEW = {"conservative_z", "bootstrap_oob", "bootstrap_632plus", "bootstrap_location_shifted", "bayesian_correlated_t"}


def wilson(k, n, level=0.999):
    return wilson_bounds(int(k), int(n), level)


def interval_of(outcome):
    return outcome if isinstance(outcome, IntervalOutcome) else outcome.interval


# ----------------------------------------------------------------------------- designs and protocol

@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: type(d).__name__)
def test_a_design_draws_a_plan_of_its_own_layout(design):
    n = 25
    plan = design.plan(n, np.random.default_rng(0))
    assert plan.splits == design.fits(n)
    assert np.all((plan.train == 0) | ~plan.test)                     # a split never tests a training point
    assert np.all(plan.test.sum(axis=1) > 0) or isinstance(design, Bootstrap)
    design.validate(plan)
    # a plan whose rows are shuffled no longer follows the layout (except designs without order)
    if type(design) in (KFold, RepeatedSplits, HoldOut, LeaveOneOut):
        return
    order = np.random.default_rng(1).permutation(plan.splits)
    with pytest.raises(ValueError, match="layout"):
        SplitPlan(design, n, plan.train[order], plan.test[order], plan.evaluate[order])


def test_designs_refuse_bad_parameters_and_sizes():
    for make, match in ((lambda: KFold(1), "K must be"), (lambda: HoldOut(1.5), "test_fraction"),
                        (lambda: RepeatedSplits(1), "J must be"), (lambda: NestedCV(2), "K must be"),
                        (lambda: Bootstrap(B=1), "B must be")):
        with pytest.raises(ValueError, match=match):
            make()
    with pytest.raises(ValueError, match="2K"):
        NestedCV(5).plan(8, np.random.default_rng(0))
    with pytest.raises(ValueError, match="no training point"):
        PairedSubsampling(test_fraction=0.6).plan(20, np.random.default_rng(0))
    plan = KFold(3).plan(9, np.random.default_rng(0))
    with pytest.raises(ValueError, match="layout of KFold"):        # a K=3 plan is not a K=4 design
        SplitPlan(KFold(4), 9, plan.train, plan.test)


def test_split_losses_refuse_missing_losses_and_wrong_shapes():
    plan = KFold(3).plan(9, np.random.default_rng(0))
    losses = np.where(plan.test, 1.0, np.nan)
    SplitLosses(plan, losses)
    bad = losses.copy()
    bad[np.nonzero(plan.test)[0][0], np.nonzero(plan.test)[1][0]] = np.nan
    with pytest.raises(ValueError, match="missing"):
        SplitLosses(plan, bad)
    with pytest.raises(ValueError, match="shape"):
        SplitLosses(plan, losses[:, :5])


def test_apply_checks_its_design_alpha_and_alternative():
    proc = PROCEDURES["cv_clt_all_pairs"].load()
    rng = np.random.default_rng(0)
    folds = run(Testbed(), "mean", KFold(5).plan(20, rng), 1, rng).losses
    assert proc.apply(folds).interval.confidence_level == 0.95            # any K: KFold(5) for a KFold(10) default
    splits = run(Testbed(), "mean", RepeatedSplits(5).plan(20, rng), 1, rng).losses
    with pytest.raises(ValueError, match="needs a KFold design"):
        proc.apply(splits)
    with pytest.raises(ValueError, match="alpha"):
        proc.apply(folds, alpha=1.5)
    with pytest.raises(ValueError, match="alternative"):
        PROCEDURES["cv_clt_all_pairs"].load().apply(folds, alternative="sideways")
    assert proc.with_design(KFold(5)).fits(20) == 5
    with pytest.raises(ValueError, match="needs a KFold"):
        proc.with_design(Bootstrap())


def test_the_registry_holds_at_least_16_procedures_with_their_metadata():
    assert len(PROCEDURES) >= 16 and len(PROCEDURES) == len(catalog.ALL)
    for entry, proc in zip(PROCEDURES.values(), catalog.ALL):
        loaded = entry.load()
        assert isinstance(loaded, Procedure) and loaded is proc and loaded.name == entry.name
        assert entry.description == proc.description
        assert proc.kind in KINDS and proc.estimand in ESTIMANDS and proc.reference
        assert proc.fits(100) == proc.design.fits(100) >= 1
        assert proc.new == (proc.name in NEW)


# ----------------------------------------------------------------------------- every procedure end to end

def _run(proc, learners, replicates, rng, n=40, loss="squared"):
    design = proc.design
    if isinstance(design, (PairedSubsampling, RepeatedKFold)):       # smaller instances of the defaults: speed
        design = type(design)(**{**design.__dict__, **({"J": 5, "M": 4} if isinstance(design, PairedSubsampling)
                                                        else {"repeats": 3})})
    plan = design.plan(n, rng)
    return run(Testbed(loss=loss), learners, plan, replicates, rng, no_information=isinstance(design, Bootstrap))


@pytest.mark.parametrize("name", list(PROCEDURES))
def test_every_procedure_runs_end_to_end_on_the_testbed(name):
    """Valid outcomes on one model's losses, on loss differences, on 0-1 losses (ties) and on
    constant losses (zero spread: a point interval, no warning), and a batch equals its replicates."""
    proc = PROCEDURES[name].load()
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = _run(proc, "slope0", 6, rng)
        zero_one = SplitLosses(one.losses.plan, np.where(one.losses.plan.evaluate, one.losses.losses > 1.5, np.nan)
                               .astype(float), no_information=0.5)
        constant = SplitLosses(one.losses.plan, np.where(one.losses.plan.evaluate, 0.25, np.nan),
                               no_information=0.25)
        if name == "holdout_wilson":
            constant = SplitLosses(one.losses.plan, np.where(one.losses.plan.evaluate, 0.0, np.nan))
        for losses in (one.losses, zero_one, constant):
            if name == "holdout_wilson" and losses is one.losses:
                with pytest.raises(ValueError, match="0-1 losses"):
                    proc.apply(losses)
                continue
            out = proc.apply(losses, 0.1)
            assert isinstance(out, {"interval": IntervalOutcome}.get(proc.kind, (TestOutcome, PosteriorOutcome)))
            ci = interval_of(out)
            if ci is None:                                    # Alpaydin's F: a test without interval
                assert np.all((0 <= out.pvalue) & (out.pvalue <= 1))
                continue
            assert ci.procedure == name and ci.estimand == proc.estimand and ci.confidence_level == 0.9
            assert np.all(np.isfinite(ci.lower) & np.isfinite(ci.upper) & (ci.lower <= ci.upper))
            if losses is constant and name != "holdout_wilson":     # Wilson: never a point interval
                assert np.allclose(ci.lower, 0.25, rtol=1e-12) and np.allclose(ci.upper, 0.25, rtol=1e-12)
        if proc.kind != "interval":
            diff = _run(proc, ("slope0", "slope1"), 6, rng).losses
            out = proc.apply(diff, 0.05, alternative="two-sided")
            assert np.all(np.isfinite(out.pvalue if isinstance(out, TestOutcome) else out.p_left))
            zeros = SplitLosses(diff.plan, np.where(diff.plan.evaluate, 0.0, np.nan))
            assert not np.any(proc.apply(zeros, 0.05).reject)          # no difference at all: never a rejection
        batch = proc.apply(zero_one, 0.05)
        single = proc.apply(SplitLosses(zero_one.plan, zero_one.losses[2], 0.5), 0.05)
    if interval_of(single) is not None:
        assert interval_of(single).lower == pytest.approx(np.asarray(interval_of(batch).lower)[2], rel=1e-12)
        assert interval_of(single).upper == pytest.approx(np.asarray(interval_of(batch).upper)[2], rel=1e-12)
    else:
        assert single.pvalue == pytest.approx(np.asarray(batch.pvalue)[2], rel=1e-12)
