"""Read simstudy's docstrings as the plain text they partly are.

The docstrings are numpydoc, but their formulas are written the way a reader types them:
``|z|`` for an absolute value, ``coef_`` for scikit-learn's attributes. In reStructuredText
those are a substitution and a link target. This hook escapes them before the docstring is
parsed (outside inline literals, literal blocks and doctests, and not on table or line-block
lines), so the API pages show
the formulas as written.
"""
from __future__ import annotations

import re

_LITERAL = re.compile(r"(``.*?``|`[^`]*`_?_?|:\w+:`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w\\])([A-Za-z][\w.]*?[A-Za-z0-9])_(?=[\s.,;:)\]]|$)")


def _escape_text(text: str) -> str:
    text = text.replace("|", "\\|")
    return _TRAILING_UNDERSCORE.sub(r"\1\\_", text)


def escape_line(line: str) -> str:
    """``|`` and a word's trailing ``_`` escaped outside inline literals and roles."""
    stripped = line.lstrip()
    if stripped.startswith(("|", "+-", "+=")):      # a line block or a grid table
        return line
    parts = _LITERAL.split(line)
    return "".join(part if i % 2 else _escape_text(part) for i, part in enumerate(parts))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_lines(lines: list[str]) -> list[str]:
    """:func:`escape_line` on every line outside literal blocks (after ``::``) and doctests."""
    out, literal_indent = [], None
    for line in lines:
        if literal_indent is not None and line.strip() and _indent(line) <= literal_indent:
            literal_indent = None
        if literal_indent is not None or line.lstrip().startswith(">>>"):
            out.append(line)
            continue
        out.append(escape_line(line))
        if line.rstrip().endswith("::"):
            literal_indent = _indent(line)
    return out


def process_docstring(app, what, name, obj, options, lines) -> None:
    lines[:] = escape_lines(lines)


def setup(app):
    app.connect("autodoc-process-docstring", process_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
