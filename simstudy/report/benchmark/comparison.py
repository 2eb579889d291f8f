"""Point by point: does our cell table agree with Schulz-Kuempel et al.'s verifiable statements?

Each :class:`~.schulz_kuempel.Claim` names a check; :func:`compare_with_schulz_kuempel` runs it on
the interval cells of the first of the claim's estimands present in the table and says "agrees",
"disagrees" or "not measured" (a procedure or estimand the run does not have), with the numbers it
used and why our setting differs from theirs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from simstudy.report.benchmark.schulz_kuempel import CLAIMS, THEIR_SETTING, THEIR_UNDERCOVERAGE_CUTOFF, Claim
from simstudy.report.benchmark.scores import DATA_CELL, scored_cells

__all__ = ["compare_with_schulz_kuempel", "setting_differences", "CHECK_RULES"]

#: How each check decides "agrees" (shown under the comparison table).
CHECK_RULES = {
    "among the robust": f"their screen on our cells: mean under-coverage, mean of max(0, nominal − coverage), at most "
                        f"{THEIR_UNDERCOVERAGE_CUTOFF:.2f}",
    "the subset they recommend": "each of the three in the better half of our interval leaderboard (share of cells "
                                 "within nominal ± 2 MCSE₀)",
    "liberal / too liberal": "median of coverage − nominal below 0 over our cells",
    "conservative": "median of coverage − nominal above 0",
    "asymptotically exact": "at our largest n, median coverage − nominal within ± 2 MCSE₀",
    "very similar": "median |difference of the two coverages| over common cells within 2 MCSE₀",
}


def setting_differences(cells: pd.DataFrame, config: dict) -> str:
    """Our grid against theirs, in one sentence (sizes, replicates, learners, truths)."""
    sizes = sorted(set(cells["n"]))
    theirs = THEIR_SETTING["sizes"]
    learners = ", ".join(sorted(set(cells.loc[cells["kind"] == "interval", "learner"])))
    replicates = int(config.get("replicates") or cells["replicates"].max() or 0)
    mcse = cells["truth_mcse"].max()
    truths = "exact truths" if not mcse > 0 else f"exact or Monte Carlo truths (error <= {mcse:.2g})"
    return (f"Our n = {_span(sizes)} (theirs {theirs[0]}-{theirs[-1]}); {replicates} replicates per cell "
            f"(theirs {THEIR_SETTING['replicates']}); our learners {learners} (theirs {THEIR_SETTING['learners']}); "
            f"{truths} (theirs: {THEIR_SETTING['data']}).")


def _span(sizes) -> str:
    """``"50-400"``, or ``"40"`` for one size."""
    if not sizes:
        return "none"
    return str(sizes[0]) if sizes[0] == sizes[-1] else f"{sizes[0]}-{sizes[-1]}"


#: Their target for each of our estimands.
_THEIR_TARGET = {"R_n": "their proxy quantity (error of the models at hand)", "Err_n": "their expected risk",
                 "Err_XY": "their risk (model fitted on all n points)"}


def compare_with_schulz_kuempel(cells: pd.DataFrame, config: dict) -> pd.DataFrame:
    """One row per claim: theirs (method, verdict, setting, source), ours (procedures, estimand, finding),
    ``agrees`` and ``why``."""
    frame = scored_cells(cells)
    frame = frame[(frame["kind"] == "interval") & frame["within"].notna()]
    sizes = sorted(set(frame["n"]))
    span = f"our n = {_span(sizes)} vs theirs 100-10,000"
    rows = []
    for claim in CLAIMS:
        estimand = next((e for e in claim.estimands if (frame["estimand"] == e).any()), None)
        part = frame[frame["procedure"].isin(claim.ours) & (frame["estimand"] == estimand)]
        if estimand is None or part.empty or not set(claim.ours) <= set(part["procedure"]):
            finding, agrees = "not in this run", "not measured"
        else:
            check = _CHECKS[claim.check]
            finding, agrees = check(part, claim, frame) if claim.check == "top_half" else check(part, claim)
        rows.append({"their method": claim.their_method, "their verdict": claim.verdict,
                     "their setting": claim.setting, "source": claim.source, "ours": ", ".join(claim.ours),
                     "estimand": estimand or ", ".join(claim.estimands), "our finding": finding, "agrees": agrees,
                     "why": f"{claim.why} {_target_sentence(estimand)}{span}."})
    return pd.DataFrame(rows)


def _target_sentence(estimand) -> str:
    """``"Our Err_n = their expected risk; "`` (nothing for an estimand the run lacks)."""
    return f"Our {estimand} = {_THEIR_TARGET[estimand]}; " if estimand in _THEIR_TARGET else ""


def _screen(part: pd.DataFrame, claim: Claim):
    values = {p: np.maximum(0.0, -g["gap"]).mean() for p, g in part.groupby("procedure")}
    passed = all(v <= THEIR_UNDERCOVERAGE_CUTOFF for v in values.values())
    text = "; ".join(f"{p}: mean under-coverage {v:.3f}, within ±2 MCSE₀ in "
                     f"{part.loc[part['procedure'] == p, 'within'].mean():.0%} of {int((part['procedure'] == p).sum())}"
                     " cells" for p, v in values.items())
    return f"{text} (their cut-off {THEIR_UNDERCOVERAGE_CUTOFF:.2f})", "agrees" if passed else "disagrees"


def _median_gap(part: pd.DataFrame):
    return {p: g["gap"].median() for p, g in part.groupby("procedure")}


def _liberal(part: pd.DataFrame, claim: Claim):
    gaps = _median_gap(part)
    text = "; ".join(f"{p}: median coverage − nominal {v:+.3f}" for p, v in gaps.items())
    return text, "agrees" if all(v < 0 for v in gaps.values()) else "disagrees"


def _conservative(part: pd.DataFrame, claim: Claim):
    gaps = _median_gap(part)
    text = "; ".join(f"{p}: median coverage − nominal {v:+.3f}" for p, v in gaps.items())
    return text, "agrees" if all(v > 0 for v in gaps.values()) else "disagrees"


def _exact_at_largest_n(part: pd.DataFrame, claim: Claim):
    largest = part[part["n"] == part["n"].max()]
    gaps = {p: (g["gap"].median(), g["band"].median()) for p, g in largest.groupby("procedure")}
    text = "; ".join(f"{p} at n = {int(largest['n'].iloc[0])}: median coverage − nominal {v:+.3f} "
                     f"(2 MCSE₀ = {b:.3f})" for p, (v, b) in gaps.items())
    return text, "agrees" if all(abs(v) <= b for v, b in gaps.values()) else "disagrees"


def _similar(part: pd.DataFrame, claim: Claim):
    first, second = claim.ours
    keyed = part.set_index([*DATA_CELL, "procedure"])["rate"].unstack("procedure").dropna()
    difference = (keyed[first] - keyed[second]).abs()
    band = part["band"].median()
    text = (f"median |{first} − {second}| = {difference.median():.4f} over {len(difference)} cells "
            f"(2 MCSE₀ = {band:.3f}); largest {difference.max():.4f}")
    return text, "agrees" if difference.median() <= band else "disagrees"


def _top_half(part: pd.DataFrame, claim: Claim, frame: pd.DataFrame):
    everyone = frame[frame["estimand"] == part["estimand"].iloc[0]].groupby("procedure")["within"].mean()
    ranks = everyone.rank(ascending=False, method="min")
    half = len(everyone) / 2
    text = "; ".join(f"{p}: rank {int(ranks[p])} of {len(everyone)} (within in {everyone[p]:.0%} of cells)"
                     for p in claim.ours)
    return text, "agrees" if all(ranks[p] <= half for p in claim.ours) else "disagrees"


_CHECKS = {"screen": _screen, "liberal": _liberal, "conservative": _conservative,
           "exact_at_largest_n": _exact_at_largest_n, "similar": _similar, "top_half": _top_half}
