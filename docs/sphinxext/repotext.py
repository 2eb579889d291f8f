"""Directives that show the repository's own text in the docs, read at build time.

- ``.. results-table:: results/RUN/summary.md`` shows a Markdown table of a committed result
  (options: ``:section:`` a text of the heading above the table, ``:index:`` which table of that
  section, ``:rows:`` keep rows whose first cells start with these comma-separated values,
  ``:columns:`` keep these column numbers). The reproductions show our numbers exactly as the
  committed run wrote them, so a regenerated run updates the page.
- ``.. readme-blocks:: SECTION`` shows the code blocks of README.md's section ``SECTION``
  (read by :mod:`codeblocks`, the same reader the tests use), so the docs' quickstart is the
  README's.
"""
from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

import codeblocks

ROOT = Path(__file__).resolve().parents[2]


def markdown_tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """Every pipe table of a Markdown text with the last heading (or line of text) above it."""
    tables: list[tuple[str, list[list[str]]]] = []
    context, rows = "", []
    for line in text.splitlines() + [""]:
        stripped = line.strip()
        if stripped.startswith("|") and stripped.endswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", stripped[1:-1])]
            if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                rows.append(cells)
            continue
        if rows:
            tables.append((context, rows))
            rows = []
        if stripped:
            context = stripped.lstrip("#").strip()
    return tables


def _inline(cell: str) -> str:
    """A Markdown cell as reStructuredText inline text."""
    cell = cell.replace("\\|", "|")
    cell = re.sub(r"`([^`]+)`", r"``\1``", cell)
    cell = re.sub(r"\*\*([^*]+)\*\*", r"**\1**", cell)
    return cell.strip() or " "


class ResultsTable(SphinxDirective):
    """A table of a committed result's Markdown file."""

    required_arguments = 1
    option_spec = {"section": directives.unchanged, "index": directives.nonnegative_int,
                   "rows": directives.unchanged, "columns": directives.unchanged, "caption": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        if not path.is_file():
            raise self.error(f"results-table: {self.arguments[0]} does not exist")
        tables = markdown_tables(path.read_text(encoding="utf-8"))
        if "section" in self.options:
            tables = [t for t in tables if self.options["section"] in t[0]]
        index = self.options.get("index", 0)
        if index >= len(tables):
            raise self.error(f"results-table: no table {index} under {self.options.get('section', '')!r} "
                             f"in {self.arguments[0]} ({len(tables)} found)")
        header, *body = tables[index][1]
        if "rows" in self.options:
            keep = [k.strip() for k in self.options["rows"].split(",")]
            body = [r for r in body if any(r[0].startswith(k) for k in keep)]
        if "columns" in self.options:
            columns = [int(c) for c in self.options["columns"].split(",")]
            header, body = [header[c] for c in columns], [[r[c] for c in columns] for r in body]
        caption = self.options.get("caption", f"From ``{self.arguments[0]}``.")
        lines = [f".. list-table:: {caption}", "   :header-rows: 1", "   :class: results-table", ""]
        for row in [header] + body:
            for j, cell in enumerate(row):
                lines.append(f"   {'* -' if j == 0 else '  -'} {_inline(cell)}")
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=str(path)), self.content_offset, container)
        return container.children


class ReadmeBlocks(SphinxDirective):
    """The code blocks of one README section."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        readme = ROOT / "README.md"
        self.env.note_dependency(str(readme))
        try:
            found = codeblocks.under(codeblocks.code_blocks(readme), self.arguments[0])
        except KeyError as exc:
            raise self.error(f"readme-blocks: {exc}") from None
        out: list[nodes.Node] = []
        for block in found:
            node = nodes.literal_block(block.code, block.code)
            node["language"] = {"": "text", "console": "bash"}.get(block.language, block.language)
            out.append(node)
        return out


def setup(app):
    app.add_directive("results-table", ResultsTable)
    app.add_directive("readme-blocks", ReadmeBlocks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
