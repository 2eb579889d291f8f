"""The code blocks of README.md and of the documentation pages, by heading.

One parser for everyone who reads them: the tests execute every block (``tests/test_readme.py``,
``tests/test_getting_started.py``) and ``docs/conf.py`` shows the README's quickstart on the
documentation's front page (the ``readme-blocks`` directive), so the code a reader copies is the
code the tests ran.

Markdown files give their fenced blocks (```` ```python ````), reStructuredText files their
``.. code-block::`` directives; each block knows its language, the heading it sits under and its
line. :func:`shell_commands` splits a shell block into commands (continuation lines joined,
comments dropped).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CodeBlock", "code_blocks", "markdown_blocks", "rst_blocks", "shell_commands", "under"]

_FENCE = re.compile(r"^(```+)\s*([\w+-]*)\s*$")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>:.])\1{2,}\s*$")
_RST_CODE = re.compile(r"^(\s*)\.\.\s+code-block::\s*(\S*)\s*$")


@dataclass(frozen=True)
class CodeBlock:
    """One code block: its text, language, the heading above it and where it is."""

    code: str
    language: str
    heading: str
    path: Path
    line: int

    @property
    def where(self) -> str:
        """``file:line`` of the block's first line of code (for messages and tracebacks)."""
        return f"{self.path.name}:{self.line}"


def markdown_blocks(path: str | Path) -> list[CodeBlock]:
    """The fenced code blocks of a Markdown file, each under its nearest heading."""
    path = Path(path)
    blocks, heading, fence, start, body, language = [], "", None, 0, [], ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence, language, start, body = match.group(1), match.group(2).lower(), number + 1, []
            elif _MD_HEADING.match(line):
                heading = _plain(_MD_HEADING.match(line).group(2))
        elif match and match.group(1) == fence and not match.group(2):
            blocks.append(CodeBlock("\n".join(body) + "\n", language, heading, path, start))
            fence = None
        else:
            body.append(line)
    if fence is not None:
        raise ValueError(f"{path.name}:{start - 1}: a code fence is never closed")
    return blocks


def rst_blocks(path: str | Path) -> list[CodeBlock]:
    """The ``.. code-block::`` directives of a reStructuredText file, each under its nearest heading."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, heading, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and _RST_ADORNMENT.match(lines[i + 1]) \
                and len(lines[i + 1].rstrip()) >= len(line.rstrip()) and not _RST_ADORNMENT.match(line):
            heading = line.strip()
        match = _RST_CODE.match(line)
        if not match:
            i += 1
            continue
        indent, language = len(match.group(1)), (match.group(2) or "text").lower()
        i += 1
        while i < len(lines) and re.match(r"^\s+:[\w-]+:", lines[i]):      # the directive's options
            i += 1
        body, start = [], i + 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        while body and not body[0].strip():
            body.pop(0)
            start += 1
        while body and not body[-1].strip():
            body.pop()
        margin = min(len(b) - len(b.lstrip()) for b in body if b.strip()) if body else 0
        blocks.append(CodeBlock("\n".join(b[margin:] for b in body) + "\n", language, heading, path, start))
    return blocks


def code_blocks(path: str | Path, language: str | None = None) -> list[CodeBlock]:
    """The code blocks of a Markdown (``.md``) or reStructuredText (``.rst``) file, optionally of one language."""
    path = Path(path)
    blocks = markdown_blocks(path) if path.suffix == ".md" else rst_blocks(path)
    return [b for b in blocks if language is None or b.language == language]


def under(blocks: list[CodeBlock], heading: str) -> list[CodeBlock]:
    """The blocks under ``heading`` (matched without Markdown/reST markup); an unknown heading is an error."""
    found = [b for b in blocks if b.heading == _plain(heading)]
    if not found:
        known = sorted({b.heading for b in blocks})
        raise KeyError(f"no code block under the heading {heading!r}; headings with code: {known}")
    return found


def shell_commands(code: str) -> list[str]:
    """The commands of a shell block: ``\\``-continued lines joined, comments and blank lines dropped."""
    commands, current = [], ""
    for raw in code.splitlines():
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1].strip() + " "
            continue
        current += line.strip()
        commands.append(re.sub(r"\s+#\s.*$", "", current).strip())
        current = ""
    if current:
        commands.append(current.strip())
    return commands


def _plain(title: str) -> str:
    """A heading without inline markup (``code``, *emphasis*, links)."""
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
    return re.sub(r"[`*]", "", title).strip()
