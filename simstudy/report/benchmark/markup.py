"""Small HTML helpers of the benchmark site: escaped text, formatted numbers, tables, the page frame."""
from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

import pandas as pd

__all__ = ["esc", "number", "html_table", "page_frame", "SITE_CSS_FILE", "SITE_JS_FILE"]

SITE_CSS_FILE = "site.css"
SITE_JS_FILE = "site.js"


def esc(text: Any) -> str:
    """``text`` as HTML-escaped text."""
    return html.escape(str(text), quote=True)


def number(value: Any, spec: str = ".3f") -> str:
    """``value`` in the format ``spec`` (``"d"``: an integer); "" for None or NaN; text as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, str):
        return esc(value)
    if spec == "d":
        return str(int(value))
    if spec.endswith("%"):
        return format(float(value), spec).replace("%", " %")
    return format(float(value), spec)


def html_table(frame: pd.DataFrame, formats: Mapping[str, str], headers: Mapping[str, str] | None = None,
               table_id: str = "", classes: str = "", links: Mapping[str, Sequence[str]] | None = None,
               raw: Sequence[str] = ()) -> str:
    """``frame`` as an HTML table: columns of ``formats`` in that order, headers renamed by ``headers``,
    cells of a column in ``links`` wrapped in ``<a href=...>`` (one href per row), columns in ``raw``
    inserted as HTML (not escaped)."""
    headers = headers or {}
    links = links or {}
    first = frame.iloc[0] if len(frame) else {}
    text_class = ' class="t"'
    head = "".join(f'<th data-col="{esc(c)}"{text_class if isinstance(first.get(c), str) else ""}>'
                   f"{esc(headers.get(c, c))}</th>" for c in formats)
    body = []
    for i, values in enumerate(frame.to_dict("records")):
        cells = []
        for column, spec in formats.items():
            text = str(values[column]) if column in raw else number(values[column], spec)
            if column in links and links[column][i]:
                text = f'<a href="{esc(links[column][i])}">{text}</a>'
            cells.append(f'<td class="t">{text}</td>' if isinstance(values[column], str) else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return (f'<table{ident} class="{esc(classes)}"><thead><tr>{head}</tr></thead><tbody>' + "\n".join(body)
            + "</tbody></table>")


def page_frame(title: str, body: str, depth: int = 0, script: bool = False) -> str:
    """A whole HTML page: the site's stylesheet (and script) by relative path, no external URL."""
    up = "../" * depth
    js = f'<script src="{up}data.js"></script><script src="{up}{SITE_JS_FILE}"></script>' if script else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><link rel=\"stylesheet\" href=\"{up}{SITE_CSS_FILE}\"></head>\n"
            f"<body>\n{body}\n{js}</body></html>\n")
