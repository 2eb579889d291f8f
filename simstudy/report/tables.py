"""Plain Markdown tables (no extra dependency)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

__all__ = ["format_value", "markdown_table", "frame_to_markdown", "with_error", "rate_with_interval"]


def format_value(value: Any, digits: int = 4) -> str:
    """Format a cell: integers as is, floats with ``digits`` significant digits, NaN as ''."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer() and abs(value) < 1e12:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table; numeric columns are right-aligned."""
    cells = [[format_value(v, digits) for v in row] for row in rows]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines) + "\n"


def frame_to_markdown(frame: pd.DataFrame, digits: int = 4) -> str:
    """A DataFrame as a Markdown table (index dropped)."""
    rows = [[v.item() if hasattr(v, "item") else v for v in row] for row in frame.itertuples(index=False)]
    return markdown_table([str(c) for c in frame.columns], rows, digits)


# ----------------------------------------------------------------------------- values with their errors
#: The two-sided 95% normal quantile of every "+-" in the tables (the figures' convention).
_Z95 = 1.959963984540054


def with_error(mean: float, se: float, scale: float = 1.0, decimals: int = 2) -> str:
    """A Monte Carlo mean and its 95% half-width, ``"52.42 ± 1.37"`` (``± 1.96 SE``)."""
    if mean is None or not math.isfinite(float(mean)):
        return ""
    if se is None or not math.isfinite(float(se)):
        return f"{scale * mean:.{decimals}f}"
    return f"{scale * mean:.{decimals}f} ± {_Z95 * scale * se:.{decimals}f}"


def rate_with_interval(successes: float, trials: float, low: float, high: float, decimals: int = 1) -> str:
    """A rate in percent with its 95% Wilson interval and its count, ``"11.1 [5.7, 20.4] (8/72)"``."""
    if not trials or not math.isfinite(float(trials)) or not math.isfinite(float(low)):
        return f"- (0/{int(trials or 0)})"
    rate = 100 * successes / trials
    return f"{rate:.{decimals}f} [{100 * low:.{decimals}f}, {100 * high:.{decimals}f}] ({int(successes)}/{int(trials)})"
