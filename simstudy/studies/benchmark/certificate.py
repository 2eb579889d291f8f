"""A calibration certificate for one procedure (:func:`simstudy.benchmark.certify` runs it): its coverage (intervals) or size (tests) on the
benchmark's cells, with Monte Carlo errors and a verdict per cell and overall.

The rule (``family_error`` a, m cells scored): each cell's k successes in R replicates (intervals:
covering the procedure's own estimand; tests: rejecting in a cell whose null is true) get the
two-sided Clopper-Pearson interval [L, U] at level 1 - a/m. With nominal c (1 - alpha for
intervals, alpha for the size of tests) and tolerance t:

- intervals: *liberal* if U < c, *conservative* if L > c; tests: *liberal* if L > c,
  *conservative* if U < c;
- *calibrated* if neither and [L, U] lies within [c - t, c + t]; *undecided* otherwise (too few
  replicates to tell).

Overall: liberal if any cell is liberal; else conservative if any is; else calibrated if every
cell is; else undecided. Error rate: the m intervals hold together with probability >= 1 - a
(Bonferroni; Clopper-Pearson intervals are exact or conservative), so the probability that any
cell of a procedure whose true rate equals c in every cell is declared liberal or
conservative is at most a; the probability that a procedure whose coverage is >= c (size <= c)
in every cell is declared liberal is at most a/2. Coverage of Err_n is judged against the
estimated truth (its Monte Carlo error is ``truth_mcse`` in the table).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.errors import ConfigError

__all__ = ["Certificate", "certificate_table", "overall", "verdicts"]

VERDICTS = ("calibrated", "liberal", "conservative", "undecided")
@dataclass
class Certificate:
    """A procedure's calibration certificate.

    Attributes
    ----------
    procedure, kind, estimand : str
    verdict : {"calibrated", "liberal", "conservative", "undecided"}
    table : DataFrame
        One row per cell: mechanism, learner, loss, n, replicates, rate (coverage or size), mcse,
        cp_low, cp_high, nominal, truth_mcse, verdict.
    rule : str
        The decision rule and its error rate, in words.
    files : list of Path
    """

    procedure: str
    kind: str
    estimand: str
    verdict: str
    table: pd.DataFrame
    rule: str
    files: list = field(default_factory=list)

    def failing(self) -> pd.DataFrame:
        """The liberal cells."""
        return self.table[self.table["verdict"] == "liberal"]

    def markdown(self) -> str:
        from simstudy.report import frame_to_markdown

        measure = "coverage" if self.kind == "interval" else "size"
        counts = self.table["verdict"].value_counts().to_dict()
        lines = [f"# Calibration certificate: {self.procedure}", "",
                 f"- kind: {self.kind}; measure: {measure} of {self.estimand}",
                 f"- verdict: **{self.verdict}** ({', '.join(f'{v}: {counts.get(v, 0)}' for v in VERDICTS)} cells)",
                 f"- rule: {self.rule}", ""]
        shown = self.table.copy()
        for col in ("rate", "mcse", "cp_low", "cp_high", "nominal", "truth_mcse"):
            shown[col] = shown[col].map(lambda x: f"{x:.4f}")
        lines += [frame_to_markdown(shown), ""]
        return "\n".join(lines)

    def write(self, out: str | Path) -> list[Path]:
        from simstudy.files import write_csv_atomic, write_text_atomic

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.files = [write_text_atomic(out / "certificate.md", self.markdown()),
                      write_csv_atomic(self.table, out / "certificate.csv")]
        return self.files


def _rule(kind: str, family_error: float, tolerance: float, m: int) -> str:
    side = ("liberal if the upper bound U < nominal, conservative if the lower bound L > nominal" if kind == "interval"
            else "liberal if L > alpha (rejects too often), conservative if U < alpha")
    return (f"two-sided Clopper-Pearson interval [L, U] per cell at level 1 - {family_error:g}/{m} (Bonferroni over "
            f"{m} cells); {side}; calibrated if neither and [L, U] lies within nominal +- {tolerance:g}; undecided "
            f"otherwise. Overall: liberal if any cell is, else conservative if any is, else calibrated if all are, "
            f"else undecided. A procedure whose true rate equals the nominal one in every cell gets a liberal or "
            f"conservative cell with probability <= {family_error:g}.")


def verdicts(k: np.ndarray, R: np.ndarray, nominal: float, kind: str, family_error: float,
             tolerance: float) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Clopper-Pearson bounds (L, U) at level 1 - family_error / m and the verdict of each cell."""
    from simstudy.inference import binomial_test

    m = max(len(k), 1)
    low, high = np.empty(len(k)), np.empty(len(k))
    for i, (ki, Ri) in enumerate(zip(k, R)):
        if Ri == 0:
            low[i], high[i] = 0.0, 1.0
            continue
        ci = binomial_test(int(ki), int(Ri), method="clopper-pearson").confidence_interval(1 - family_error / m)
        low[i], high[i] = float(ci.low), float(ci.high)
    out = []
    for lo, hi in zip(low, high):
        under, over = hi < nominal, lo > nominal
        if under or over:
            out.append(("liberal" if under else "conservative") if kind == "interval"
                       else ("liberal" if over else "conservative"))
        else:
            out.append("calibrated" if lo >= nominal - tolerance and hi <= nominal + tolerance else "undecided")
    return low, high, out


def overall(cell_verdicts: Sequence[str]) -> str:
    found = set(cell_verdicts)
    for verdict in ("liberal", "conservative"):
        if verdict in found:
            return verdict
    return "calibrated" if found == {"calibrated"} else "undecided"


def certificate_table(cells: pd.DataFrame, procedure: str, kind: str, estimand: str, alpha: float,
                      family_error: float, tolerance: float) -> tuple[pd.DataFrame, str]:
    """The certificate's rows from a benchmark cell table."""
    rows = cells[(cells["procedure"] == procedure) & (cells["kind"] == kind) & (cells["estimand"] == estimand)]
    if kind == "test":
        rows = rows[rows["null_true"].astype(bool)]
    if not len(rows):
        raise ConfigError(f"procedure {procedure!r} has no {kind} cell for its estimand {estimand!r} on these "
                          "mechanisms" + (" with a true null (a comparison of a learner with itself)"
                                          if kind == "test" else "") + "; choose other mechanisms or learners.")
    rate = rows["coverage"] if kind == "interval" else rows["rejection_rate"]
    R = rows["replicates"].to_numpy()
    k = np.rint(rate.to_numpy() * R).astype(int)
    nominal = 1 - alpha if kind == "interval" else alpha
    low, high, verdict = verdicts(k, R, nominal, kind, family_error, tolerance)
    table = pd.DataFrame({"mechanism": rows["mechanism"].to_numpy(), "learner": rows["learner"].to_numpy(),
                          "loss": rows["loss"].to_numpy(), "n": rows["n"].to_numpy(), "replicates": R,
                          "failed": rows["failed"].to_numpy(), "rate": rate.to_numpy(),
                          "mcse": np.sqrt(rate.to_numpy() * (1 - rate.to_numpy()) / np.maximum(R, 1)),
                          "cp_low": low, "cp_high": high, "nominal": nominal,
                          "truth_mcse": rows["truth_mcse"].to_numpy(), "verdict": verdict})
    return table, _rule(kind, family_error, tolerance, len(table))
