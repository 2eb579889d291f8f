"""The audit's recommendation rule.

A procedure is *trusted* in a simulated setting when its measured size there is at most
alpha + ``slack`` (1 point by default). (Not "not shown to exceed": with 200 replicates the
Wilson interval of a 7.5% size still reaches below 6%, and that procedure should not be
recommended.) It is recommended when it is trusted in both settings (the user's n with
replacement, and n/2 without: a second, harder look, since rho is larger at smaller n); among
those, the one with the highest power at the user's n wins (ties: the narrower interval). When
no procedure is trusted in both, the one with the smallest worst-case size is named, with a
warning. The oracle (true rho) is a reference, never recommended.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["Recommendation", "recommend"]


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
        Per procedure: size at n and n/2 (%), power at n (%), trusted (bool).
    """

    procedure: str
    trusted: bool
    text: str
    table: pd.DataFrame


def recommend(tests_n: pd.DataFrame, tests_half: pd.DataFrame, alpha: float, slack: float = 0.01) -> Recommendation:
    """Apply the rule of the module docstring to the tests tables of the two settings."""
    a = tests_n.set_index("procedure")
    b = tests_half.set_index("procedure")
    rows = []
    for proc in a.index:
        if proc == "oracle_rho" or proc not in b.index:
            continue
        ok = bool(a.loc[proc, "size"] <= alpha + slack and b.loc[proc, "size"] <= alpha + slack)
        rows.append({"procedure": proc, "size_n": a.loc[proc, "size"], "size_half": b.loc[proc, "size"],
                     "power_n": a.loc[proc, "power"], "width_n": a.loc[proc, "mean_width"], "trusted": ok,
                     "replicates_n": int(a.loc[proc, "replicates"])})
    table = pd.DataFrame(rows)
    trusted = table[table["trusted"]]
    if len(trusted):
        best = trusted.sort_values(["power_n", "width_n"], ascending=[False, True]).iloc[0]
        text = (f"Use **{best['procedure']}**: in data like yours its test of the expected CV error rejected a "
                f"true value {100 * best['size_n']:.1f}% of the time at your n and {100 * best['size_half']:.1f}% at "
                f"n/2 (nominal {100 * alpha:g}%), and it had the highest power ({100 * best['power_n']:.1f}%) among "
                f"the procedures that kept their level in both settings.")
        return Recommendation(str(best["procedure"]), True, text, table)
    table["worst"] = table[["size_n", "size_half"]].max(axis=1)
    best = table.sort_values("worst").iloc[0]
    text = (f"No procedure kept its level in both settings. The least liberal is **{best['procedure']}** "
            f"(size {100 * best['size_n']:.1f}% at your n, {100 * best['size_half']:.1f}% at n/2, nominal "
            f"{100 * alpha:g}%): treat its interval as too narrow, or use a larger n.")
    return Recommendation(str(best["procedure"]), False, text, table.drop(columns="worst"))
