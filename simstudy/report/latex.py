"""LaTeX export of tables (booktabs), for users writing papers.

No dependency beyond pandas: :func:`frame_to_latex` writes a ``table`` environment with
``\\toprule``/``\\midrule``/``\\bottomrule`` (``\\usepackage{booktabs}`` in the preamble),
escaping LaTeX's special characters and typesetting ``±`` as ``$\\pm$``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import pandas as pd

from simstudy.report.tables import format_value
from simstudy.files import write_text_atomic

__all__ = ["latex_escape", "frame_to_latex", "write_latex_tables"]

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SYMBOLS = {"±": r"$\pm$", "≥": r"$\geq$", "≤": r"$\leq$", "−": "-"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped and ``±`` as ``$\\pm$``."""
    out = "".join(_SPECIAL.get(ch, ch) for ch in str(text))
    for symbol, latex in _SYMBOLS.items():
        out = out.replace(symbol, latex)
    return out


def frame_to_latex(frame: pd.DataFrame, caption: str = "", label: str = "", digits: int = 4) -> str:
    """A DataFrame as a booktabs ``table`` (numbers right-aligned, text left-aligned).

    Parameters
    ----------
    caption, label : str
        ``\\caption`` and ``\\label`` of the table (omitted when empty).
    digits : int
        Significant digits of floats (see :func:`simstudy.report.tables.format_value`).
    """
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    spec = "".join("r" if num else "l" for num in numeric)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines += [r"\begin{tabular}{" + spec + "}", r"\toprule",
              " & ".join(latex_escape(c) for c in frame.columns) + r" \\", r"\midrule"]
    for row in frame.itertuples(index=False):
        cells = [latex_escape(format_value(v.item() if hasattr(v, "item") else v, digits)) for v in row]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_latex_tables(tables: Mapping[str, pd.DataFrame], path: Path, prefix: str = "tab") -> Path:
    """All ``tables`` (title -> frame) into one ``.tex`` file, each a booktabs table whose caption
    is its title and whose label is ``prefix:<n>``; ``\\input`` it from a paper."""
    parts = ["% simstudy tables; needs \\usepackage{booktabs} in the preamble\n"]
    for i, (title, frame) in enumerate(tables.items(), 1):
        parts.append(frame_to_latex(frame, title, f"{prefix}:{i}"))
    path = Path(path)
    return write_text_atomic(path, "\n".join(parts))
