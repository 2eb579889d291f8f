"""Published numbers shipped with simstudy, and side-by-side comparisons with them."""
from __future__ import annotations

from importlib import resources

import pandas as pd

from simstudy.report.tables import markdown_table

__all__ = ["grandvalet_bengio_table2", "table2_markdown"]


def grandvalet_bengio_table2(dataset: str | None = None) -> pd.DataFrame:
    """Table 2 of Grandvalet & Bengio (2006): rho (%) and type-I errors (%) per n.

    Columns: dataset, n, rho_percent, type1_rho_hat_0_percent, type1_rho_hat_0.7_percent.
    """
    with resources.files("simstudy.report").joinpath("data/grandvalet_bengio_2006_table2.csv").open() as fh:
        table = pd.read_csv(fh)
    if dataset is not None:
        table = table[table["dataset"] == dataset].reset_index(drop=True)
    return table


def _tests_at(tests: pd.DataFrame, rho_hat: float) -> pd.DataFrame:
    sel = tests[(tests["test"] == "cv_t") & ((tests["rho_hat"] - rho_hat).abs() < 1e-9)]
    return sel.set_index("n")


def table2_markdown(summary: pd.DataFrame, tests: pd.DataFrame, dataset: str | None) -> str:
    """Table 2 in the paper's layout (one column per n), ours beside the paper's values.

    Rows: rho (%) ours +- standard error, paper, difference; the same for the type-I errors
    (%) with rho_hat = 0 and 0.7 (ours with a 95% Wilson interval). The paper's columns are
    matched on n; n values the paper does not have show blanks.
    """
    ns = list(summary["n"])
    paper = grandvalet_bengio_table2(dataset).set_index("n") if dataset else None

    def paper_value(col, n):
        return float(paper.loc[n, col]) if paper is not None and n in paper.index else float("nan")

    s = summary.set_index("n")
    rows = []
    rows.append(["rho (%) ours"] + [f"{100 * s.loc[n, 'rho']:.2f} ± {100 * s.loc[n, 'rho_se']:.2f}" for n in ns])
    if paper is not None:
        rows.append(["rho (%) paper"] + [paper_value("rho_percent", n) for n in ns])
        rows.append(["rho (%) ours - paper"] + [f"{100 * s.loc[n, 'rho'] - paper_value('rho_percent', n):+.2f}" for n in ns])
    for rho_hat, col in ((0.0, "type1_rho_hat_0_percent"), (0.7, "type1_rho_hat_0.7_percent")):
        t = _tests_at(tests, rho_hat)
        if t.empty:
            continue
        label = f"Type-I error, rho_hat = {rho_hat:g} (%)"
        rows.append([f"{label} ours [95% CI]"] + [
            f"{100 * t.loc[n, 'rejection_rate']:.1f} [{100 * t.loc[n, 'ci_low']:.1f}, {100 * t.loc[n, 'ci_high']:.1f}]"
            for n in ns])
        if paper is not None:
            rows.append([f"{label} paper"] + [paper_value(col, n) for n in ns])
            rows.append([f"{label} ours - paper"] + [
                f"{100 * t.loc[n, 'rejection_rate'] - paper_value(col, n):+.1f}" for n in ns])
    header = ["n"] + [str(n) for n in ns]
    title = f"Table 2 of Grandvalet & Bengio (2006), {dataset or 'this population'}: ours beside the paper's\n\n"
    return title + markdown_table(header, rows)
