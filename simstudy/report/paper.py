"""Published numbers shipped with simstudy, and side-by-side comparisons with them."""
from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd

from simstudy.report.tables import markdown_table, rate_with_interval, with_error

__all__ = ["grandvalet_bengio_table2", "table2_markdown", "table2_comparison", "table2_frame", "PAPER_REPLICATES"]


def grandvalet_bengio_table2(dataset: str | None = None) -> pd.DataFrame:
    """Table 2 of Grandvalet & Bengio (2006): rho (%) and type-I errors (%) per n.

    Columns: dataset, n, rho_percent, type1_rho_hat_0_percent, type1_rho_hat_0.7_percent.
    """
    with resources.files("simstudy.report").joinpath("data/grandvalet_bengio_2006_table2.csv").open() as fh:
        table = pd.read_csv(fh)
    if dataset is not None:
        table = table[table["dataset"] == dataset].reset_index(drop=True)
    return table


#: Independent training sets behind every number of the paper's Table 2 (section 5: "10 000
#: independent trainings").
PAPER_REPLICATES = 10_000
_QUANTITIES = (("rho", "rho_percent", None), ("type1_rho_hat_0", "type1_rho_hat_0_percent", 0.0),
               ("type1_rho_hat_0.7", "type1_rho_hat_0.7_percent", 0.7))


def _tests_at(tests: pd.DataFrame, rho_hat: float) -> pd.DataFrame:
    sel = tests[(tests["test"] == "cv_t") & ((tests["rho_hat"] - rho_hat).abs() < 1e-9)]
    return sel.set_index("n")


def table2_comparison(summary: pd.DataFrame, tests: pd.DataFrame, dataset: str | None,
                      paper_replicates: int = PAPER_REPLICATES) -> pd.DataFrame:
    """Ours minus the paper's Table 2 per (quantity, n), with a combined standard error and z.

    The paper publishes no standard errors. Its numbers come from ``paper_replicates``
    independent training sets of the same design as ours, so its Monte Carlo standard error is
    taken as ours scaled by sqrt(R_ours / R_paper) for rho (the same per-replicate spread), and as
    the binomial sqrt(p (1 - p) / R_paper) at the paper's rate p for the type-I errors. The
    combined SE is sqrt(SE_ours^2 + SE_paper^2) and z = (ours - paper) / combined SE; abs(z) > 2 is
    a difference the Monte Carlo error alone hardly explains.

    Returns
    -------
    DataFrame with columns quantity, n, ours, ours_se, paper, paper_se, difference, combined_se, z,
    replicates (ours), rejections (ours, type-I rows); values in percent.
    """
    paper = grandvalet_bengio_table2(dataset).set_index("n") if dataset else None
    s = summary.set_index("n")
    rows = []
    for quantity, column, rho_hat in _QUANTITIES:
        t = None if rho_hat is None else _tests_at(tests, rho_hat)
        if t is not None and t.empty:
            continue
        for n in s.index:
            R = int(s.loc[n, "replicates"])
            if rho_hat is None:
                ours, ours_se, count = 100 * s.loc[n, "rho"], 100 * s.loc[n, "rho_se"], float("nan")
            else:
                p, R = float(t.loc[n, "rejection_rate"]), int(t.loc[n, "replicates"])
                ours, ours_se, count = 100 * p, 100 * np.sqrt(p * (1 - p) / R), int(t.loc[n, "rejections"])
            value = float(paper.loc[n, column]) if paper is not None and n in paper.index else float("nan")
            if rho_hat is None:
                paper_se = ours_se * np.sqrt(R / paper_replicates)
            else:
                paper_se = 100 * np.sqrt((value / 100) * (1 - value / 100) / paper_replicates)
            combined = float(np.hypot(ours_se, paper_se))
            diff = ours - value
            rows.append({"quantity": quantity, "n": int(n), "ours": float(ours), "ours_se": float(ours_se),
                         "paper": value, "paper_se": float(paper_se), "difference": float(diff),
                         "combined_se": combined, "z": diff / combined if combined > 0 else float("nan"),
                         "replicates": R, "rejections": count})
    return pd.DataFrame(rows)


def table2_frame(summary: pd.DataFrame, tests: pd.DataFrame, dataset: str | None) -> pd.DataFrame:
    """Table 2 in the paper's layout (one column per n, cells as text), ours beside the paper's.

    Rows: rho (%) ours +- 1.96 standard errors, paper, difference with its z (see
    :func:`table2_comparison`); the same for the type-I errors (%) with rho_hat = 0 and 0.7
    (ours with a 95% Wilson interval and the count of rejections). The paper's columns are
    matched on n; n values the paper does not have show blanks.
    """
    ns = list(summary["n"])
    comparison = table2_comparison(summary, tests, dataset)
    has_paper = dataset is not None and comparison["paper"].notna().any()
    rows = []
    for quantity, _, rho_hat in _QUANTITIES:
        c = comparison[comparison["quantity"] == quantity].set_index("n")
        if c.empty:
            continue
        if rho_hat is None:
            label = "rho (%)"
            s = summary.set_index("n")
            rows.append([f"{label} ours ± 1.96 SE"] + [with_error(s.loc[n, "rho"], s.loc[n, "rho_se"], 100) for n in ns])
        else:
            label = f"Type-I error, rho_hat = {rho_hat:g} (%)"
            t = _tests_at(tests, rho_hat)
            rows.append([f"{label} ours [95% CI] (rejections/R)"] + [
                rate_with_interval(t.loc[n, "rejections"], t.loc[n, "replicates"], t.loc[n, "ci_low"],
                                   t.loc[n, "ci_high"]) for n in ns])
        if has_paper:
            digits = 2 if rho_hat is None else 1
            rows.append([f"{label} paper"] + [c.loc[n, "paper"] for n in ns])
            rows.append([f"{label} ours - paper (z)"] + [
                f"{c.loc[n, 'difference']:+.{digits}f} ({c.loc[n, 'z']:+.1f})" if np.isfinite(c.loc[n, "paper"]) else ""
                for n in ns])
    return pd.DataFrame(rows, columns=["n"] + [str(n) for n in ns]).fillna("")


def table2_markdown(summary: pd.DataFrame, tests: pd.DataFrame, dataset: str | None) -> str:
    """:func:`table2_frame` as Markdown, with a title and a note on the errors."""
    frame = table2_frame(summary, tests, dataset)
    has_paper = dataset is not None and table2_comparison(summary, tests, dataset)["paper"].notna().any()
    header = list(frame.columns)
    rows = frame.values.tolist()
    title = (f"Table 2 of Grandvalet & Bengio (2006), {dataset}: ours beside the paper's\n\n" if has_paper else
             "The quantities of Table 2 of Grandvalet & Bengio (2006) on this population\n\n")
    note = ("\n± is 1.96 Monte Carlo standard errors (a 95% interval), as in the figures; z = (ours - paper) / "
            "sqrt(SE_ours^2 + SE_paper^2), the paper's SE taken from its 10,000 replicates (see table2_comparison.csv "
            "for every SE).\n" if has_paper else "")
    return title + markdown_table(header, rows) + note
