"""How one cell is scored: its rate against the nominal, within +- 2 Monte Carlo errors or not.

A cell's rate is its coverage (intervals) or its rejection rate (tests; under a true null the
rejection rate is the size, and its nominal is alpha). The Monte Carlo error that judges it is the
binomial standard error *of the nominal* at the cell's replicate count R,

    MCSE_0 = sqrt(nominal (1 - nominal) / R),

the spread of the rate of an exactly calibrated procedure. A cell is *within* when
``|rate - nominal| <= 2 MCSE_0``: an exactly calibrated procedure lands there in about 95% of its
cells (normal approximation), so a share well below 95% is a sign of miscalibration.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["BAND_MCSE", "DATA_CELL", "nominal_mcse", "scored_cells", "cell_label", "cell_slug"]

#: The columns that name a data cell (one data design; every procedure is scored on it).
DATA_CELL = ("mechanism", "learner", "loss", "n")
#: The half-width of the band around the nominal, in Monte Carlo errors of the nominal.
BAND_MCSE = 2.0


def nominal_mcse(nominal, replicates):
    """``sqrt(nominal (1 - nominal) / replicates)``: NaN where there are no replicates."""
    nominal = np.asarray(nominal, dtype=float)
    replicates = np.asarray(replicates, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(replicates > 0, np.sqrt(nominal * (1 - nominal) / replicates), np.nan)


def scored_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The cell table with ``rate``, ``gap = rate - nominal``, ``band = 2 MCSE_0`` and ``within``.

    ``within`` is NaN (not False) for a cell without a rate (no replicate gave an outcome) and for
    a test's cell where the null is false (its rate is a power).
    """
    frame = cells.copy()
    frame["rate"] = np.where(frame["kind"] == "interval", frame["coverage"], frame["rejection_rate"])
    frame["gap"] = frame["rate"] - frame["nominal"]
    frame["band"] = BAND_MCSE * nominal_mcse(frame["nominal"], frame["replicates"])
    within = (frame["gap"].abs() <= frame["band"]).astype(float)
    # a test's rejection rate under a false null is its power: no nominal to be within
    judged = frame["rate"].notna() & frame["band"].notna() & ((frame["kind"] == "interval") | frame["null_true"])
    frame["within"] = within.where(judged)
    return frame


def cell_label(row) -> str:
    """``"friedman1 / tree / squared / n=200"``: the data cell of a row."""
    return f"{row['mechanism']} / {row['learner']} / {row['loss']} / n={int(row['n'])}"


def cell_slug(mechanism: str, learner: str, loss: str, n) -> str:
    """The file name stem of a data cell's page: ``friedman1__tree__squared__n200`` (safe characters only)."""
    text = f"{mechanism}__{learner}__{loss}__n{int(n)}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)
