"""The audit's recommendation rule: trust a procedure only when the simulations show it keeps its level.

Rule (``recommend``). In each simulated setting (the user's n with replacement, n/2 without)
every procedure's size is a binomial proportion: ``size_count`` rejections of a true H0 in
``replicates`` trials. A procedure is

- **trusted** when, in *both* settings, the upper end of the two-sided Wilson interval of its
  size (level ``confidence``, 95% by default: the bars of the report's figure) is at most
  alpha + ``slack`` (1 point by default): the evidence supports "size <= alpha + slack";
- **liberal** when, in either setting, the *lower* end exceeds alpha + slack: shown to reject
  a true H0 too often;
- **undecided** otherwise: the replicates cannot tell (more replicates would).

The most powerful trusted procedure at the user's n is recommended (ties: the narrower mean
interval). When none is trusted, the one with the smallest worst upper bound is named with a
warning. The oracle (true rho) is a reference, never recommended.

Why the upper bound and not the point estimate. A first version trusted a procedure when its
*measured* size was <= alpha + 1 point. At the audit's 200 replicates the Monte Carlo SE of a 5%
size is 1.5 points, so a procedure whose real size is 8% measures <= 6% about one time in
five per setting: on a 5,000-row Letter file with a tree it recommended the plain t
(rho_hat = 0), whose size on the 20,000-row population is 8.3% at n = 2000 (Table 2, 10,000
replicates). "Not shown to be liberal" (lower bound <= alpha + slack) is even more permissive.
Requiring the upper bound below alpha + slack puts the burden of proof on the procedure. A
procedure of size p passes one setting with probability P_p(upper bound <= alpha + slack), which
falls as p grows, so its worst case over p >= alpha + slack is at p = alpha + slack. Computed
exactly (binomial) it is 2.32% at 1,000 replicates and 0.61-2.567% at 100-5,000, above the Wilson
interval's nominal one-sided 2.5% at 325 of those counts (worst 2.567% at 258 and 427 replicates:
the Wilson interval is approximate); both settings are passed more rarely. The *liberal* verdict
errs more: a procedure of size exactly alpha + slack is called liberal in a setting with
probability up to 4.78% (104 replicates; 2.98% at 1,000; above 2.5% at 4,425 of the counts
100-5,000). The sequential rule (:mod:`.sequential`, the audit's default) bounds both errors by
(1 - confidence) / 2 exactly, at every count where it can stop (``tests/test_sequential_audit.py``
checks both rules at every count).

The price, stated plainly: with R replicates the upper bound is at least about
p + 1.96 sqrt(p (1 - p) / R), so a procedure that is exactly at its level (5%) is trusted only
with thousands of replicates: at slack 1 point it passes a setting with probability at least 50%
first at 2,052 replicates (and at every count from 2,216; both settings, were they independent,
from 3,314 and 3,474). With 200 replicates only procedures measuring <= 5 rejections (2.5%) in
both settings pass, with 1,000 those measuring <= 45 (4.5%): the rule then often recommends a
*conservative* procedure (Nadeau-Bengio, the Satterthwaite subsample t, rho_hat = 0.7...), whose
interval is wider than necessary but keeps its level; more ``replicates`` let it recommend a
more powerful one. Checked against the full calibration study on Letter (README, "Auditing your
own CV"; ``results/audit/check.md``): the recommended procedure's size there was 2.0-5.5%. The
level of the evidence (``confidence``) and the tolerance (``slack``) are the rule's two named
options; a lower ``confidence`` trades safety for power (at 0.80 a procedure 1 point too liberal
passes a setting with probability 10.1% at 1,000 replicates, 5.7-13.8% at 100-5,000).

The same table takes the sequential rule's verdicts (``states``): trusted when trusted in both
settings, liberal when liberal in either, undecided otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from simstudy.errors import ConfigError
from simstudy.inference.distributions import norm_ppf
from simstudy.inference.proportions import wilson_bounds

__all__ = ["Recommendation", "check_rule", "minimum_replicates", "recommend"]

#: The reference procedure that is reported but never recommended.
REFERENCE = "oracle_rho"


@dataclass(frozen=True)
class Recommendation:
    """The recommended procedure and why.

    Attributes
    ----------
    procedure : str
    trusted : bool
        Whether it met the rule in both settings (False: the least bad, with a warning).
    text : str
        The recommendation in plain words.
    table : DataFrame
        Per procedure: size at n and n/2, the rule's upper (and lower) Wilson bounds of each,
        power and mean width at n, replicates per setting, ``verdict`` (trusted / undecided /
        liberal) and ``trusted`` (bool).
    slack, confidence : float
        The rule's options.
    rule : str
        "fixed" (Wilson bounds at the run's count) or "sequential" (:mod:`.sequential`; the table then
        also has ``stopped_n`` / ``stopped_half``, the replicates at which each setting's verdict was reached,
        and ``how_n`` / ``how_half``, how: see :class:`~simstudy.audit.sequential.SequentialState`).
    """

    procedure: str
    trusted: bool
    text: str
    table: pd.DataFrame
    slack: float = 0.01
    confidence: float = 0.95
    rule: str = "fixed"


def check_rule(slack: float, confidence: float) -> tuple[float, float]:
    """Validate the rule's options (ConfigError naming the field, the value and the fix)."""
    for name, value, low, high, fix in (("slack", slack, 0.0, 0.5, "a tolerance above alpha in [0, 0.5), e.g. 0.01"),
                                        ("confidence", confidence, 0.5, 1.0, "a level in (0.5, 1), e.g. 0.95")):
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and np.isfinite(value)
        if not ok or not (low <= value < high if name == "slack" else low < value < high):
            raise ConfigError(f"{name}={value!r} is invalid: use {fix}.")
    return float(slack), float(confidence)


def _bounds(t: pd.DataFrame, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson (low, high) of each row's size from its rejection count and replicates."""
    low, high = wilson_bounds(t["size_count"].to_numpy(), t["replicates"].to_numpy(), confidence)
    return np.atleast_1d(low), np.atleast_1d(high)


def _verdicts(tests_n: pd.DataFrame, tests_half: pd.DataFrame, alpha: float, slack: float,
              confidence: float, states: dict | None = None) -> pd.DataFrame:
    """One row per procedure present in both settings (oracle excluded), with the rule's verdict."""
    a = tests_n[tests_n["procedure"] != REFERENCE].set_index("procedure")
    b = tests_half.set_index("procedure").reindex(a.index).dropna(subset=["size"])
    a = a.loc[b.index]
    limit = alpha + slack
    a_low, a_high = _bounds(a, confidence)
    b_low, b_high = _bounds(b, confidence)
    table = pd.DataFrame({
        "procedure": a.index, "size_n": a["size"].to_numpy(), "upper_n": a_high,
        "size_half": b["size"].to_numpy(), "upper_half": b_high, "power_n": a["power"].to_numpy(),
        "width_n": a["mean_width"].to_numpy(), "replicates_n": a["replicates"].astype(int).to_numpy(),
        "replicates_half": b["replicates"].astype(int).to_numpy()})
    if states is None:
        trusted = (a_high <= limit) & (b_high <= limit)
        liberal = (a_low > limit) | (b_low > limit)
    else:
        at_n, at_half = ([states[k][p] for p in a.index] for k in ("n", "n/2"))
        trusted = np.array([x.verdict == y.verdict == "trusted" for x, y in zip(at_n, at_half)], dtype=bool)
        liberal = np.array(["liberal" in (x.verdict, y.verdict) for x, y in zip(at_n, at_half)], dtype=bool)
        for key, states_here in (("n", at_n), ("half", at_half)):
            table[f"stopped_{key}"] = [x.replicates for x in states_here]
            table[f"how_{key}"] = [x.reason for x in states_here]
    table["verdict"] = np.where(trusted, "trusted", np.where(liberal, "liberal", "undecided"))
    table["trusted"] = trusted
    return table.reset_index(drop=True)


def _trusted_text(best: pd.Series, alpha: float, limit: float, level: str, rule: str) -> str:
    if rule == "fixed":
        evidence = (f"the upper ends of the {level} Wilson intervals, {100 * best['upper_n']:.1f}% and "
                    f"{100 * best['upper_half']:.1f}%, are at most {limit:g}%")
    else:
        evidence = (f"the sequential rule showed its size to be at most {limit:g}% in both settings, after "
                    f"{best['stopped_n']} and {best['stopped_half']} replicates")
    return (f"Use **{best['procedure']}**: in data like yours its test of the expected CV error rejected a "
            f"true value {100 * best['size_n']:.1f}% of the time at your n and {100 * best['size_half']:.1f}% at "
            f"n/2 (nominal {100 * alpha:g}%; {evidence}), and it had the highest power ({100 * best['power_n']:.1f}%) "
            "among the procedures shown to keep their level in both settings.")


def recommend(tests_n: pd.DataFrame, tests_half: pd.DataFrame, alpha: float, slack: float = 0.01,
              confidence: float = 0.95, states: dict | None = None) -> Recommendation:
    """Apply the rule of the module docstring to the tests tables of the two settings.

    Parameters
    ----------
    tests_n, tests_half : DataFrame
        The rho_hat study's tests tables at the user's n and at n/2 (columns ``procedure``,
        ``size``, ``size_count``, ``replicates``, ``power``, ``mean_width``).
    alpha : float
        Nominal level.
    slack : float
        Tolerance above alpha (0.01: 1 point).
    confidence : float
        Level of the Wilson interval whose upper end must be <= alpha + slack (fixed rule); the
        sequential rule's errors are bounded by (1 - confidence) / 2.
    states : dict, optional
        The sequential rule's final states, {"n": {procedure: SequentialState}, "n/2": {...}}
        (:mod:`.rounds`); None: the fixed rule.

    Returns
    -------
    Recommendation
    """
    slack, confidence = check_rule(slack, confidence)
    rule = "fixed" if states is None else "sequential"
    table = _verdicts(tests_n, tests_half, alpha, slack, confidence, states)
    limit, level = 100 * (alpha + slack), f"{100 * confidence:g}%"
    trusted = table[table["trusted"]]
    if len(trusted):
        best = trusted.sort_values(["power_n", "width_n"], ascending=[False, True]).iloc[0]
        text = _trusted_text(best, alpha, limit, level, rule)
        return Recommendation(str(best["procedure"]), True, text, table, slack, confidence, rule)
    worst = table[["upper_n", "upper_half"]].max(axis=1)
    best = table.loc[worst.idxmin()]
    shown = (f"upper end of the {level} Wilson interval of its size at most {limit:g}%" if rule == "fixed"
             else f"size shown by the sequential rule to be at most {limit:g}%")
    text = (f"No procedure was shown to keep its level ({shown}) in both settings. The least doubtful is "
            f"**{best['procedure']}** (size {100 * best['size_n']:.1f}% at your n, {100 * best['size_half']:.1f}% "
            f"at n/2, nominal {100 * alpha:g}%): treat its interval with caution, or rerun with more replicates.")
    text += _too_few_text(int(min(best["replicates_n"], best["replicates_half"])), alpha + slack, confidence, rule)
    return Recommendation(str(best["procedure"]), False, text, table, slack, confidence, rule)


def minimum_replicates(limit: float, confidence: float, rule: str) -> int:
    """The fewest replicates with which a procedure can be trusted at all (0 rejections).

    Fixed rule: the upper Wilson bound of 0 of R, z^2 / (R + z^2), is at most L. Sequential rule:
    P_L(0 rejections in R) = (1 - L)^R is at most (1 - confidence) / 2.
    """
    if rule == "fixed":
        z2 = float(norm_ppf(0.5 + confidence / 2)) ** 2
        return int(np.ceil(z2 * (1 - limit) / limit))
    return int(np.ceil(np.log((1 - confidence) / 2) / np.log1p(-limit)))


def _too_few_text(fewest: int, limit: float, confidence: float, rule: str) -> str:
    needed = minimum_replicates(limit, confidence, rule)
    if fewest >= needed:
        return ""
    return (f" With {fewest} replicates no procedure can pass (even 0 rejections would not show a size of at most "
            f"{100 * limit:g}%): use at least {needed}.")
