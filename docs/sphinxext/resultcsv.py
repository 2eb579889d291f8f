"""``.. results-csv::``: a table computed at build time from a committed result's CSV file.

The reproductions set our numbers beside the papers'; reading them from ``results/`` when the
page is built means a regenerated run updates the page and no number is typed twice::

    .. results-csv:: results/table2_letter/table2_comparison.csv
       :assign: half = 1.96 * ours_se
       :format: ours={ours:.2f} ± {half:.2f}, paper=.2f, z=+.1f
       :pivot: n, quantity, ours paper z
       :columns: n, ours:rho, paper:rho, z:rho
       :rename: ours:rho=rho (%) ± 1.96 SE, paper:rho=paper, z:rho=z

The options apply in this order:

``:query:``
    a :meth:`pandas.DataFrame.query` filter;
``:assign:``
    new columns, ``name = expression`` (:meth:`pandas.DataFrame.eval`), separated by ``;``;
``:format:``
    ``column=spec`` pairs: a format spec for a number (``.2f``, ``+.1f``, ``.1%``) or a template
    of the row's columns (``{rate:.1%} [{low:.1%}, {high:.1%}]``), which may name a new column;
``:pivot: index, columns, values``
    one row per ``index``, one column per value of ``columns``; several (space-separated)
    ``values`` give columns named ``value:column``;
``:columns:``
    the columns to keep, in this order;
``:scale:``, ``:digits:``
    a factor and the decimals (default 3) of the float columns not formatted yet;
``:rename:``
    ``old=new`` pairs for the headers; ``:caption:`` (default: the file it came from).
"""
from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = ("query", "assign", "format", "pivot", "columns", "scale", "digits", "rename", "caption")


def _pairs(text: str) -> list[tuple[str, str]]:
    """``a=x, b={c} [{d}, {e}]`` as pairs; a comma inside braces or brackets does not split."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"{": 1, "}": -1, "[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    return [tuple(part.strip() for part in item.split("=", 1)) for item in items if "=" in item]


def _names(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _formatted(frame, specs: list[tuple[str, str]]):
    for column, spec in specs:
        if "{" in spec:
            frame[column] = [spec.format(**row) for row in frame.to_dict("records")]
        else:
            frame[column] = [format(value, spec) if value == value else "" for value in frame[column]]
    return frame


def _pivoted(frame, spec: str):
    index, columns, values = _names(spec)
    values = values.split()
    wide = frame.pivot(index=index, columns=columns, values=values if len(values) > 1 else values[0])
    if len(values) > 1:
        wide.columns = [f"{value}:{column}" for value, column in wide.columns]
    return wide.reset_index().rename(columns=str)


def csv_table(path: Path, options: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows (as text) of the CSV ``path`` after the directive's options."""
    import pandas as pd

    frame = pd.read_csv(path)
    if options.get("query"):
        frame = frame.query(options["query"])
    for expression in filter(str.strip, options.get("assign", "").split(";")):
        frame = frame.eval(expression.strip())
    frame = _formatted(frame.copy(), _pairs(options.get("format", "")))
    if options.get("pivot"):
        frame = _pivoted(frame, options["pivot"])
    if options.get("columns"):
        frame = frame[_names(options["columns"])]
    if frame.empty:
        raise ValueError(f"no row left after the options {options}")
    scale, digits = float(options.get("scale", 1)), int(options.get("digits", 3))
    index = _names(options.get("pivot", ""))[:1]
    rows = []
    for record in frame.to_dict("records"):
        cells = []
        for column, value in record.items():
            if isinstance(value, float) and value != value:          # NaN: nothing in this cell
                cells.append("")
            elif isinstance(value, float) and column not in index:
                cells.append(f"{scale * value:.{digits}f}")
            else:
                cells.append(f"{value:g}" if isinstance(value, float) else str(value))
        rows.append(cells)
    rename = dict(_pairs(options.get("rename", "")))
    return [rename.get(str(c), str(c)) for c in frame.columns], rows


def _cell(text: str) -> str:
    """A cell as reStructuredText inline text (``|`` and ``*`` literal)."""
    return re.sub(r"([|*`])", r"\\\1", text) or " "


class ResultsCSV(SphinxDirective):
    """A table computed from a committed CSV file of ``results/``."""

    required_arguments = 1
    option_spec = {name: directives.unchanged for name in OPTIONS}

    def run(self) -> list[nodes.Node]:
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        if not path.is_file():
            raise self.error(f"results-csv: {self.arguments[0]} does not exist")
        try:
            header, rows = csv_table(path, self.options)
        except (KeyError, ValueError, SyntaxError) as exc:
            raise self.error(f"results-csv: {self.arguments[0]}: {exc}") from None
        caption = self.options.get("caption", f"From ``{self.arguments[0]}``.")
        lines = [f".. list-table:: {caption}", "   :header-rows: 1", "   :class: results-table", ""]
        for row in [header] + rows:
            lines += [f"   {'* -' if j == 0 else '  -'} {_cell(cell)}" for j, cell in enumerate(row)]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=str(path)), self.content_offset, container)
        return container.children


def setup(app):
    app.add_directive("results-csv", ResultsCSV)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
