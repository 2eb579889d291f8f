"""The sequential audit's stopping rule: exact group-sequential binomial boundaries and their operating characteristics.

Each procedure's size in a setting is a binomial proportion p: at the looks n_1 < ... < n_J
(cumulative replicates; n_J the cap) the count S_j of rejections of a true H0 is seen. With
L = alpha + slack and e = (1 - confidence) / 2 the rule answers two one-sided questions at once:

- **trusted** (p <= L shown) at the first look where S_j <= a_j;
- **liberal** (p > L shown) at the first look where S_j >= b_j;
- **undecided** when both questions are closed without an answer: at the cap, or earlier by
  curtailment (below).

Boundaries (exact, by dynamic programming over the count at each look). Under p = L the
sub-distribution of S_j over the paths that crossed neither boundary is carried from look to
look (a binomial(n_j - n_{j-1}, L) increment convolved in). a_j is the largest count whose
cumulative trust probability, P_L(trusted at a look <= j), stays within the spending function
e * f(n_j / n_J); b_j likewise for the liberal side (Lan & DeMets 1983 error spending; f the
Hwang, Shih & DeCani 1990 family, f(t) = (1 - exp(-g t)) / (1 - exp(-g)), g = 1 close to Pocock's
boundaries). At the cap f = 1, so P_L(trusted) <= e and P_L(liberal) <= e.

Curtailment (Lan, Simon & Halperin 1982). After look j the trust question is closed when the
conditional probability of a later trust, were the size the nominal alpha (the case one hopes to
trust), is below ``futility``; the liberal question likewise under alpha + 2 slack. A closed
question stays closed; the count at which both are closed is the procedure's stopping count. A
count from which a later verdict is impossible is always closed (deterministic curtailment).

The guarantee. Closing a question only removes verdicts, and under a coupling of the Bernoulli
sequences (one uniform per replicate) a larger p gives a larger S_j at every look; the rule's
regions (trust: S_j <= a_j with the trust question still open; the trust question closes for
S_j >= f_j) make the event "trusted" shrink as p grows and "liberal" grow. Hence for every p,
P_p(trusted) <= P_L(trusted) when p >= L and P_p(liberal) <= P_L(liberal) when p <= L, and both
right-hand sides are computed exactly by :func:`simstudy.audit.operating.operating_characteristics` (and checked on a grid
of p in the tests). The design is built so that they are at most e; the audit reports them.

The fixed rule (:mod:`simstudy.audit.recommend`: one look, Wilson bounds) has no such bound: its
P_L(trusted) exceeds 2.5% at 325 replicate counts in 100..5,000 (:func:`~simstudy.audit.operating.fixed_rule_errors`).

The audit's default (cap 1,000; a look every 50 replicates from 100 to 900, then 1,000; futility 15%):
P_L(trusted) = 1.69% and P_L(liberal) = 1.54% per setting; the expected replicates until a
procedure's verdict are 161, 235, 311, 321, 257, 224, 290 and 256 at true sizes 1, 2, 3, 4, 5, 6,
8 and 10% (:func:`~simstudy.audit.operating.operating_table`; the fixed rule runs 1,000). Looks every
50 stop each procedure nearer its crossing than looks at 100, 200, 300, 400, 500, 650, 800 and 1,000
would: 9-19% fewer expected replicates at each of those sizes, for a few points of P(trusted) at
sizes of 3-4% (81% and 42% against 85% and 48%).

What "exact" covers. The probabilities are computed in floating point by the dynamic programme
(binomial pmf from log-gamma, relative error about 1e-12; boundaries keep a relative margin of
1e-9 below the spending), and the default designs are checked in exact rational arithmetic in the
tests. They are exact for the binomial model of the counts; in the audit each count comes from
tests of H0: mu = mu_true with mu_true itself the mean of the replicates run so far (as in the
fixed rule), which moves each statistic by at most 1/sqrt(n_j) standard deviations. Replicates
without a result count as rejections for the trust question and as none for the liberal one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from simstudy.lazy import LazyModule

special = LazyModule("scipy.special")

__all__ = ["LOOKS", "SequentialDesign", "SequentialState", "audit_design", "binomial_pmf", "design", "look_schedule",
           "spending"]

#: Cumulative replicate counts at which the audit looks (the cap is always the last look): every 50 up to 1,000, then
#: by factors of about 1.25.
LOOKS = tuple(range(100, 1001, 50)) + (1250, 1600, 2000, 2500, 3200, 4000, 5000)
#: Hwang-Shih-DeCani parameter of the spending function (1: Pocock-like, early stopping).
SPENDING_SHAPE = 1.0
#: A question is closed when its conditional probability of a later verdict falls below this. The trade-off (cap
#: 1,000, per setting, exact): P(trusted) at sizes 2% / 3% / 4% is 0.99 / 0.90 / 0.52 at 0.10, 0.97 / 0.81 / 0.42
#: at 0.15, 0.93 / 0.70 / 0.33 at 0.20 (the fixed rule at 1,000: 1.00 / 1.00 / 0.81), for expected replicates at
#: 3% / 4% of 350 / 412, 311 / 321 and 265 / 248.
FUTILITY = 0.15
#: Safety margin of the boundary search against rounding (boundaries spend at most e (1 - margin)).
_MARGIN = 1e-9


def spending(t: np.ndarray | float, error: float, shape: float = SPENDING_SHAPE) -> np.ndarray:
    """Error spent by information time t = n_j / n_J: e (1 - exp(-g t)) / (1 - exp(-g)) (g = 0: e t)."""
    t = np.asarray(t, dtype=float)
    if shape == 0:
        return error * t
    return error * np.expm1(-shape * t) / np.expm1(-shape)


def look_schedule(cap: int, looks: Sequence[int] = LOOKS) -> tuple[int, ...]:
    """The looks for a cap: the schedule's counts up to 90% of the cap (continued by factors of 1.25 past its
    end), then the cap."""
    schedule = list(looks)
    while schedule[-1] < cap:
        grown = 1.25 * schedule[-1]
        schedule.append(max(schedule[-1] + 1, int(round(grown, -2) if grown >= 500 else round(grown))))
    return tuple(n for n in schedule if n <= 0.9 * cap) + (int(cap),)


def binomial_pmf(m: int, p: float) -> np.ndarray:
    """P(Bin(m, p) = k), k = 0..m (log-gamma form; 0 < p < 1)."""
    k = np.arange(m + 1)
    log = (special.gammaln(m + 1) - special.gammaln(k + 1) - special.gammaln(m - k + 1)
           + k * math.log(p) + (m - k) * math.log1p(-p))
    return np.exp(log)


@dataclass(frozen=True)
class SequentialDesign:
    """Boundaries of the rule at each look (module docstring).

    Attributes
    ----------
    looks : tuple of int
        Cumulative replicate counts n_1 < ... < n_J.
    limit, error : float
        L = alpha + slack and the bound e on each error at p = L.
    trust, liberal : tuple of int
        a_j (trusted when S_j <= a_j; -1: impossible at that look) and b_j (liberal when S_j >= b_j;
        n_j + 1: impossible).
    trust_closed, liberal_closed : tuple of int
        f_j (the trust question closes when S_j >= f_j) and g_j (the liberal one when S_j <= g_j).
    alternatives : tuple of float
        The sizes under which the conditional probabilities of curtailment are computed.
    futility, shape : float
    """

    looks: tuple[int, ...]
    limit: float
    error: float
    trust: tuple[int, ...]
    liberal: tuple[int, ...]
    trust_closed: tuple[int, ...]
    liberal_closed: tuple[int, ...]
    alternatives: tuple[float, float]
    futility: float = FUTILITY
    shape: float = SPENDING_SHAPE

    @property
    def cap(self) -> int:
        return self.looks[-1]

    def table(self):
        """One row per look: n, a_j, b_j, f_j, g_j."""
        import pandas as pd

        return pd.DataFrame({"look": np.arange(1, len(self.looks) + 1), "replicates": self.looks,
                             "trusted_if_at_most": self.trust, "liberal_if_at_least": self.liberal,
                             "trust_closed_from": self.trust_closed, "liberal_closed_up_to": self.liberal_closed})


def _efficacy_boundaries(looks: Sequence[int], limit: float, error: float, shape: float):
    """a_j and b_j by error spending at p = L over the paths that crossed neither boundary."""
    cont = np.ones(1)
    spent_trust = spent_liberal = 0.0
    trust, liberal, previous = [], [], 0
    budget = spending(np.asarray(looks) / looks[-1], error, shape) * (1 - _MARGIN)
    for n, allowed in zip(looks, budget):
        cont = np.convolve(cont, binomial_pmf(n - previous, limit))
        low = spent_trust + np.cumsum(cont)                     # P(trusted by this look) if a_j = s
        high = spent_liberal + np.cumsum(cont[::-1])[::-1]     # P(liberal by this look) if b_j = s
        a = int(np.flatnonzero(low <= allowed)[-1]) if low[0] <= allowed else -1
        fits = np.flatnonzero(high <= allowed)
        b = int(fits[0]) if fits.size else n + 1
        b = max(b, a + 1)
        spent_trust += cont[:a + 1].sum()
        spent_liberal += cont[b:].sum()
        cont[:a + 1] = 0.0
        cont[b:] = 0.0
        trust.append(a)
        liberal.append(b)
        previous = n
    return tuple(trust), tuple(liberal)


def _later_verdict(looks, trust, liberal, p: float, side: str) -> list[np.ndarray]:
    """For each look j < J and count s (0..n_j, no verdict at j): P_p(a later look gives the verdict ``side``)."""
    J = len(looks)
    n_last = looks[-1]
    s = np.arange(n_last + 1)
    # value after the last look: 1 where that look gives the verdict
    reach = (s <= trust[-1]) if side == "trust" else (s >= liberal[-1])
    reach = reach.astype(float)
    out: list[np.ndarray] = [np.zeros(0)] * J
    for j in range(J - 2, -1, -1):
        m = looks[j + 1] - looks[j]
        pmf = binomial_pmf(m, p)
        # continuation value at look j: E[reach_{j+1}(s + K)], K ~ Bin(m, p)
        cont = np.correlate(reach[: looks[j + 1] + 1], pmf, mode="valid")[: looks[j] + 1]
        out[j] = cont
        s_j = np.arange(looks[j] + 1)
        here = np.where(s_j <= trust[j], 1.0 if side == "trust" else 0.0,
                        np.where(s_j >= liberal[j], 1.0 if side == "liberal" else 0.0, cont))
        reach = here
    return out


def _closing_counts(looks, trust, liberal, alternatives, futility: float):
    """f_j and g_j: where the conditional probability of a later trust (liberal) verdict is below ``futility``
    or zero; at the last look every open question closes (f_J = a_J + 1, g_J = b_J - 1)."""
    later_trust = _later_verdict(looks, trust, liberal, alternatives[0], "trust")
    later_liberal = _later_verdict(looks, trust, liberal, alternatives[1], "liberal")
    f, g = [], []
    for j, n in enumerate(looks):
        if j == len(looks) - 1:
            f.append(trust[j] + 1)
            g.append(liberal[j] - 1)
            continue
        s = np.arange(n + 1)
        can_trust = s <= max(trust[j + 1:])
        can_liberal = s >= min(liberal[k] - (looks[k] - n) for k in range(j + 1, len(looks)))
        closed = (later_trust[j] < futility) | ~can_trust
        f.append(int(np.flatnonzero(closed & (s > trust[j]))[0]) if (closed & (s > trust[j])).any() else n + 1)
        closed = (later_liberal[j] < futility) | ~can_liberal
        below = closed & (s < liberal[j])
        g.append(int(np.flatnonzero(below)[-1]) if below.any() else -1)
    return tuple(f), tuple(g)


def design(cap: int, limit: float, error: float, alternatives: tuple[float, float] | None = None,
           futility: float = FUTILITY, shape: float = SPENDING_SHAPE,
           looks: Sequence[int] = LOOKS) -> SequentialDesign:
    """The rule's boundaries for a cap (module docstring).

    Parameters
    ----------
    cap : int
        Most replicates (the last look).
    limit : float
        L = alpha + slack.
    error : float
        Bound e on P_L(trusted) and on P_L(liberal) ((1 - confidence) / 2).
    alternatives : (float, float), optional
        Sizes under which the conditional probabilities of a later trust and a later liberal
        verdict are computed for curtailment; None: deterministic curtailment only.
    futility : float
        Close a question when its conditional probability of a later verdict is below this.
    shape : float
        Hwang-Shih-DeCani parameter of the spending function.
    looks : sequence of int
        The look schedule (see :func:`look_schedule`).
    """
    schedule = look_schedule(cap, looks)
    trust, liberal = _efficacy_boundaries(schedule, limit, error, shape)
    if alternatives is None:
        alternatives, futility = (limit, limit), 0.0
    f, g = _closing_counts(schedule, trust, liberal, alternatives, futility)
    return SequentialDesign(schedule, limit, error, trust, liberal, f, g, tuple(alternatives), futility, shape)


def audit_design(cap: int, alpha: float, slack: float, confidence: float, futility: float | None = None
                 ) -> SequentialDesign:
    """The audit's design: L = alpha + slack, e = (1 - confidence) / 2, curtailment judged at the sizes alpha
    (trust side: a procedure exactly at its level) and alpha + 2 slack (liberal side); with slack = 0,
    deterministic curtailment only."""
    alternatives = (alpha, alpha + 2 * slack) if slack > 0 else None
    return design(int(cap), alpha + slack, (1 - confidence) / 2, alternatives,
                  FUTILITY if futility is None else futility)


@dataclass(frozen=True)
class SequentialState:
    """One procedure's progress through the rule in one setting.

    Attributes
    ----------
    verdict : str
        "trusted", "liberal", "undecided" (settled) or "open".
    trust_open, liberal_open : bool
        Whether each question can still be answered.
    look : int
        Looks seen (0 before the first).
    replicates, rejections : int
        The look's count and the rejections seen there (the last look seen).
    reason : str
        How the verdict was reached: "boundary" (trusted or liberal), "curtailed" (both questions
        closed), "cap" (the last look), or the reason given to :meth:`close` (undecided).
    """

    verdict: str = "open"
    trust_open: bool = True
    liberal_open: bool = True
    look: int = 0
    replicates: int = 0
    rejections: int = 0
    reason: str = ""

    @property
    def settled(self) -> bool:
        return self.verdict != "open"

    def advance(self, d: SequentialDesign, rejections: int, failed: int = 0) -> "SequentialState":
        """The state after the next look, where ``rejections`` of the look's n_j replicates rejected.

        ``failed`` replicates (no result) count as rejections for the trust question and as
        non-rejections for the liberal one: each error can only shrink.
        """
        if self.settled:
            return self
        j = self.look
        high, low = rejections + failed, rejections
        trust_open = self.trust_open and high < d.trust_closed[j]
        liberal_open = self.liberal_open and low > d.liberal_closed[j]
        verdict, reason = "open", ""
        if self.trust_open and high <= d.trust[j]:
            verdict, reason = "trusted", "boundary"
        elif self.liberal_open and low >= d.liberal[j]:
            verdict, reason = "liberal", "boundary"
        elif j == len(d.looks) - 1:
            verdict, reason = "undecided", "cap"
        elif not (trust_open or liberal_open):
            verdict, reason = "undecided", "curtailed"
        return SequentialState(verdict, trust_open, liberal_open, j + 1, d.looks[j], int(rejections), reason)

    def close_trust(self, reason: str) -> "SequentialState":
        """Drop the trust question (e.g. the other setting has shown the procedure cannot be trusted)."""
        if self.settled or not self.trust_open:
            return self
        if self.liberal_open:
            return replace(self, trust_open=False)
        return replace(self, trust_open=False, verdict="undecided", reason=reason)

    def close(self, reason: str) -> "SequentialState":
        """Drop both questions: undecided here, for ``reason``."""
        if self.settled:
            return self
        return replace(self, trust_open=False, liberal_open=False, verdict="undecided", reason=reason)
