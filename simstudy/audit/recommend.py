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
Requiring the upper bound below alpha + slack puts the burden of proof on the procedure: a
procedure whose real size exceeds alpha + slack passes one setting with probability at most
about 2.5% (the Wilson interval's one-sided error), both settings more rarely.

The price, stated plainly: with R replicates the upper bound is at least about
p + 1.96 sqrt(p (1 - p) / R), so a procedure that is exactly at its level (5%) is trusted only
with thousands of replicates (about 1,800 for a 50% chance at slack 1 point). With 200
replicates only procedures measuring <= 5 rejections (2.5%) in both settings pass, with the
audit's default 1,000 those measuring <= 45 (4.5%): the rule then often recommends a
*conservative* procedure (Nadeau-Bengio, the Satterthwaite subsample t, rho_hat = 0.7...), whose
interval is wider than necessary but keeps its level; more ``replicates`` let it recommend a
more powerful one. Checked against the full calibration study on Letter (README, "Auditing your
own CV"; ``results/audit/check.md``): the recommended procedure's size there was 2.0-5.5%. The level of the evidence (``confidence``)
and the tolerance (``slack``) are the rule's two named options; a lower ``confidence`` trades
safety for power (at 0.80 a procedure 1 point too liberal passes a setting ~10% of the time).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from simstudy.errors import ConfigError
from simstudy.inference.distributions import norm_ppf
from simstudy.inference.proportions import wilson_bounds

__all__ = ["Recommendation", "check_rule", "recommend"]

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
    """

    procedure: str
    trusted: bool
    text: str
    table: pd.DataFrame
    slack: float = 0.01
    confidence: float = 0.95


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
              confidence: float) -> pd.DataFrame:
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
    trusted = (a_high <= limit) & (b_high <= limit)
    liberal = (a_low > limit) | (b_low > limit)
    table["verdict"] = np.where(trusted, "trusted", np.where(liberal, "liberal", "undecided"))
    table["trusted"] = trusted
    return table.reset_index(drop=True)


def recommend(tests_n: pd.DataFrame, tests_half: pd.DataFrame, alpha: float, slack: float = 0.01,
              confidence: float = 0.95) -> Recommendation:
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
        Level of the Wilson interval whose upper end must be <= alpha + slack.

    Returns
    -------
    Recommendation
    """
    slack, confidence = check_rule(slack, confidence)
    table = _verdicts(tests_n, tests_half, alpha, slack, confidence)
    limit, level = 100 * (alpha + slack), f"{100 * confidence:g}%"
    trusted = table[table["trusted"]]
    if len(trusted):
        best = trusted.sort_values(["power_n", "width_n"], ascending=[False, True]).iloc[0]
        text = (f"Use **{best['procedure']}**: in data like yours its test of the expected CV error rejected a "
                f"true value {100 * best['size_n']:.1f}% of the time at your n and {100 * best['size_half']:.1f}% at "
                f"n/2 (nominal {100 * alpha:g}%; the upper ends of the {level} Wilson intervals, "
                f"{100 * best['upper_n']:.1f}% and {100 * best['upper_half']:.1f}%, are at most {limit:g}%), and it had "
                f"the highest power ({100 * best['power_n']:.1f}%) among the procedures shown to keep their level "
                "in both settings.")
        return Recommendation(str(best["procedure"]), True, text, table, slack, confidence)
    worst = table[["upper_n", "upper_half"]].max(axis=1)
    best = table.loc[worst.idxmin()]
    text = (f"No procedure was shown to keep its level (upper end of the {level} Wilson interval of its size at "
            f"most {limit:g}%) in both settings. The least doubtful is **{best['procedure']}** (size "
            f"{100 * best['size_n']:.1f}% at your n, {100 * best['size_half']:.1f}% at n/2, nominal {100 * alpha:g}%): "
            "treat its interval with caution, or rerun with more replicates.")
    fewest = int(min(best["replicates_n"], best["replicates_half"]))
    if float(wilson_bounds(0, fewest, confidence)[1]) > alpha + slack:   # even 0 rejections would not do
        z2 = float(norm_ppf(0.5 + confidence / 2)) ** 2
        needed = int(np.ceil(z2 * (1 - alpha - slack) / (alpha + slack)))   # z^2 / (R + z^2) <= limit
        text += (f" With {fewest} replicates no procedure can pass (0 rejections leave an upper bound above "
                 f"{limit:g}%): use at least {needed}.")
    return Recommendation(str(best["procedure"]), False, text, table, slack, confidence)
