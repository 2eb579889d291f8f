"""The sequential rule's operating characteristics, exactly: the probability of each verdict at a true size.

The guarantee of :mod:`simstudy.audit.sequential` bounds P_p(trusted) and P_p(liberal) by their
values at p = L; :func:`operating_characteristics` computes those (and the expected replicates
until a verdict) by the same dynamic programme over the count that built the boundaries.
:func:`fixed_rule_errors` gives the fixed rule's errors at p = L for comparison.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from simstudy.audit.sequential import SequentialDesign, binomial_pmf

__all__ = ["OperatingCharacteristics", "fixed_rule_errors", "operating_characteristics", "operating_table"]


@dataclass(frozen=True)
class OperatingCharacteristics:
    """Exact probabilities of the rule's outcomes at a true size p.

    Attributes
    ----------
    p : float
    trusted, liberal, undecided : float
    expected_count : float
        E[replicates at which the procedure stops].
    stop : ndarray
        P(stop at look j), j = 1..J.
    """

    p: float
    trusted: float
    liberal: float
    undecided: float
    expected_count: float
    stop: np.ndarray


def operating_characteristics(d: SequentialDesign, p: float) -> OperatingCharacteristics:
    """P(trusted), P(liberal), P(undecided) and the expected stopping count at size p, by dynamic programming.

    States per count: both questions open, only the trust question open, only the liberal one.
    """
    both, only_trust, only_liberal = np.ones(1), np.zeros(1), np.zeros(1)
    trusted = liberal = undecided = 0.0
    stop = np.zeros(len(d.looks))
    previous = 0
    for j, n in enumerate(d.looks):
        pmf = binomial_pmf(n - previous, p) if 0 < p < 1 else _degenerate_pmf(n - previous, p)
        both, only_trust, only_liberal = (np.convolve(x, pmf) for x in (both, only_trust, only_liberal))
        s = np.arange(n + 1)
        is_trust, is_liberal = s <= d.trust[j], s >= d.liberal[j]
        trust_stays, liberal_stays = s < d.trust_closed[j], s > d.liberal_closed[j]
        t_here = both[is_trust].sum() + only_trust[is_trust].sum()
        l_here = both[is_liberal].sum() + only_liberal[is_liberal].sum()
        both = np.where(is_trust | is_liberal, 0.0, both)            # a closed question gives no verdict
        only_trust = np.where(is_trust, 0.0, only_trust)
        only_liberal = np.where(is_liberal, 0.0, only_liberal)
        u_here = (both[~trust_stays & ~liberal_stays].sum() + only_trust[~trust_stays].sum()
                  + only_liberal[~liberal_stays].sum())
        both, only_trust, only_liberal = (
            np.where(trust_stays & liberal_stays, both, 0.0),
            np.where(trust_stays, only_trust + np.where(~liberal_stays, both, 0.0), 0.0),
            np.where(liberal_stays, only_liberal + np.where(~trust_stays, both, 0.0), 0.0))
        trusted, liberal, undecided = trusted + t_here, liberal + l_here, undecided + u_here
        stop[j] = t_here + l_here + u_here
        previous = n
    leftover = both.sum() + only_trust.sum() + only_liberal.sum()   # zero: the last look closes everything
    undecided += leftover
    stop[-1] += leftover
    return OperatingCharacteristics(float(p), float(trusted), float(liberal), float(undecided),
                                    float(np.dot(stop, d.looks)), stop)


def operating_table(d: SequentialDesign, sizes: Sequence[float] | None = None):
    """Exact P(trusted), P(liberal) and expected replicates per setting at true sizes (by default L times
    1/6, 1/3, ..., 5/3: 1-10% at L = 6%), as a DataFrame with sizes in %."""
    import pandas as pd

    if sizes is None:
        sizes = [d.limit * f for f in (1 / 6, 1 / 3, 1 / 2, 2 / 3, 5 / 6, 1, 7 / 6, 4 / 3, 5 / 3)]
    rows = [operating_characteristics(d, p) for p in sizes]
    return pd.DataFrame({"true size (%)": [round(100 * o.p, 2) for o in rows],
                         "P(trusted) (%)": [round(100 * o.trusted, 2) for o in rows],
                         "P(liberal) (%)": [round(100 * o.liberal, 2) for o in rows],
                         "expected replicates": [round(o.expected_count) for o in rows]})


def _degenerate_pmf(m: int, p: float) -> np.ndarray:
    out = np.zeros(m + 1)
    out[0 if p <= 0 else m] = 1.0
    return out


def fixed_rule_errors(replicates: Sequence[int], limit: float, confidence: float = 0.95):
    """The fixed rule's exact errors at p = L: P(upper Wilson bound <= L) and P(lower Wilson bound > L) per count.

    Returns
    -------
    (ndarray, ndarray)
        P_L(trusted) and P_L(liberal) for each replicate count.
    """
    from simstudy.inference.proportions import wilson_bounds

    trust, liberal = [], []
    for R in replicates:
        k = np.arange(R + 1)
        low, high = wilson_bounds(k, np.full(k.size, R), confidence)
        pmf = binomial_pmf(int(R), limit)
        trust.append(pmf[high <= limit].sum())
        liberal.append(pmf[low > limit].sum())
    return np.asarray(trust), np.asarray(liberal)
