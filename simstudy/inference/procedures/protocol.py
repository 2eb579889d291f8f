"""The one protocol of an inference procedure: design in, split losses in, an outcome out.

A :class:`Procedure` names what it needs (a split design: its type, and a default instance
giving the number of fits), what it is an interval or test for (its estimand), and how to
compute its outcome from the split losses: ``procedure.apply(losses, alpha)``.

Estimands (the truth a benchmark scores an interval against):

- ``"R_n"``: the error of the model(s) at hand, i.e. of the models fitted on the splits: the
  hold-out model's error; for K-fold CV, Bayle et al.'s k-fold test error
  R_n = (1/n) sum_k m_k Err(f_{-k});
- ``"Err_n"``: the expected error at size n, E[Err(f_D)] over samples D of n points (the designs
  train on fewer points, n - n/K for K-fold CV: the gap is part of each procedure's bias);
- ``"Err_XY"``: the error of the model fitted on all n points (Bates, Hastie & Tibshirani).

Kinds: ``"interval"`` gives an interval for one model's error (:class:`~.outcomes.IntervalOutcome`);
``"test"`` a test on loss differences of two learners (:class:`~.outcomes.TestOutcome` or
:class:`~.outcomes.PosteriorOutcome`); ``"both"`` a test whose interval also serves for one
model's error (a :class:`~.outcomes.TestOutcome`, with ``.interval``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from simstudy.errors import ConfigError
from simstudy.inference.procedures.designs import Design
from simstudy.inference.procedures.losses import SplitLosses

__all__ = ["ALTERNATIVES", "ESTIMANDS", "KINDS", "Procedure"]

#: The estimands, with what they are.
ESTIMANDS = {
    "R_n": "error of the model(s) at hand (the fold models; the hold-out model)",
    "Err_n": "expected error of the learner trained on n points",
    "Err_XY": "error of the model fitted on all n points",
}
KINDS = ("interval", "test", "both")
ALTERNATIVES = ("two-sided", "less", "greater")


@dataclass(frozen=True)
class Procedure:
    """A registered inference procedure.

    Attributes
    ----------
    name : str
        The registry name.
    kind : {"interval", "test", "both"}
    design : Design
        The default design; ``apply`` accepts any design of the same type (e.g. any K).
    estimand : {"R_n", "Err_n", "Err_XY"}
    method : callable ``(procedure, losses, alpha, mu0, alternative, **options) -> outcome``
    reference : str
        Paper (and equation) of the formula.
    description : str
        One line for tables and ``--help``.
    new : bool
        The formula is new in simstudy (its three checks are in ``tests/test_procedures.py``);
        False: it reuses a function of :mod:`simstudy.inference`.
    options : tuple of (key, value)
        Fixed keyword arguments of ``method`` (e.g. the rho of a CV t).
    alternatives : tuple of str
        The alternatives it supports (interval procedures: two-sided only).
    """

    name: str
    kind: str
    design: Design
    estimand: str
    method: Callable[..., Any]
    reference: str
    description: str
    new: bool = False
    options: tuple = ()
    alternatives: tuple = ALTERNATIVES

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}.")
        if self.estimand not in ESTIMANDS:
            raise ValueError(f"estimand must be one of {tuple(ESTIMANDS)}; got {self.estimand!r}.")
        if not isinstance(self.design, Design):
            raise TypeError(f"design must be a Design instance; got {self.design!r}.")

    def fits(self, n: int) -> int:
        """Model fits of the default design at sample size n."""
        return self.design.fits(n)

    def with_design(self, design: Design) -> "Procedure":
        """The same procedure with another design of its type (e.g. ``KFoldDesign(5)``)."""
        self._check_design(design)
        return replace(self, design=design)

    def _check_design(self, design) -> None:
        if type(design) is not type(self.design):
            raise ConfigError(f"procedure {self.name!r} needs a {type(self.design).__name__} (e.g. "
                             f"{self.design!r}); got {design!r}.")

    def apply(self, losses: SplitLosses, alpha: float = 0.05, *, mu0: float = 0.0, alternative: str = "two-sided"):
        """The procedure's outcome on ``losses`` at level alpha (interval level 1 - alpha).

        Parameters
        ----------
        losses : SplitLosses
            Of a plan of the procedure's design type (leading axes: replicates).
        alpha : float in (0, 1)
        mu0 : float
            Null value of tests (0 for loss differences); ignored by interval procedures.
        alternative : {"two-sided", "less", "greater"}
            ``"less"`` tests H1: estimand < mu0 (learner 1 better, on loss differences).
        """
        if not isinstance(losses, SplitLosses):
            raise TypeError(f"losses must be a SplitLosses; got {type(losses).__name__}.")
        self._check_design(losses.design)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
            raise ConfigError(f"alpha must lie in (0, 1), e.g. 0.05; got {alpha!r}.")
        if alternative not in self.alternatives:
            raise ConfigError(f"procedure {self.name!r} supports alternative in {self.alternatives}; got "
                             f"{alternative!r}.")
        return self.method(self, losses, float(alpha), float(mu0), alternative, **dict(self.options))
