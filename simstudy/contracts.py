"""What a part declares about its outputs: part of the learner and population protocols.

The engine checks every output of a part where it enters (:mod:`simstudy.cv.checks`,
:mod:`simstudy.populations.checks`). A part whose outputs meet their contract by construction
declares it by deriving from :class:`GuaranteedOutputs` (a declaration, never inferred from the
names of its attributes); the engine then skips the checks of the *values* it returns (the
label set of predicted classes, the finiteness of predictions, the class labels of a sample)
and keeps the cheap ones of shapes and dtypes. simstudy's own parts that declare it:
:class:`~simstudy.learners.cart.adapter.CartLearner` (predictions are majority labels of its
training rows) and :class:`~simstudy.populations.finite.TabularPopulation` (rows checked when
the population is built). A user's part is checked in full unless it declares the same.
"""
from __future__ import annotations

from typing import Any

__all__ = ["GuaranteedOutputs", "guarantees_outputs"]


class GuaranteedOutputs:
    """Declares that a part's outputs meet their contract by construction (see the module docstring):
    a learner's predictions are class labels of its training sample (classification) or finite
    numbers (regression); a population's samples hold finite features and whole-number class
    labels (or finite targets)."""

    __slots__ = ()


def guarantees_outputs(part: Any) -> bool:
    """Whether ``part`` declares :class:`GuaranteedOutputs`."""
    return isinstance(part, GuaranteedOutputs)
