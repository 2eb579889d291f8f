"""Plain Markdown tables (no extra dependency)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

__all__ = ["format_value", "markdown_table", "frame_to_markdown"]


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
