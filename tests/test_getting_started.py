"""Getting started runs as written: the pages of docs/getting_started/, in their table of contents'
order, in one empty folder, as a new user would follow them; every shell command is executed or
excused (``NOT_EXECUTED``) and every image they show exists."""
from __future__ import annotations

import re
import sys

import pytest

from conftest import ROOT
from test_readme import NOT_EXECUTED as README_NOT_EXECUTED
from test_readme import _shell

sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
from codeblocks import code_blocks, shell_commands  # noqa: E402

PAGES = ROOT / "docs" / "getting_started"

#: Commands the pages show but the test does not run, by prefix, with the reason.
NOT_EXECUTED = {
    **README_NOT_EXECUTED,
    "simstudy -m sweep=": "a sweep launcher from an optional extra, named only to say what the extra is for",
}


def _pages() -> list:
    """The pages in the order of the toctree of ``index.rst``."""
    index = (PAGES / "index.rst").read_text()
    names = re.findall(r"^   (\w+)\s*$", index.split(".. toctree::")[1], re.M)
    return [PAGES / f"{name}.rst" for name in names]


def _excused(command: str) -> str | None:
    return next((reason for prefix, reason in NOT_EXECUTED.items() if command.startswith(prefix)), None)


def test_getting_started_from_a_fresh_clone(tmp_path, monkeypatch):
    """Every page's blocks in order, Python blocks sharing one namespace, in an empty folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path / "cache"))
    pages = _pages()
    assert [p.stem for p in pages] == ["install", "first_study", "first_figure", "first_audit"]
    namespace: dict = {"__name__": "__getting_started__"}
    for page in pages:
        for block in code_blocks(page):
            if block.language == "python":
                code = "\n" * (block.line - 1) + block.code        # tracebacks point at the page's lines
                exec(compile(code, str(page), "exec"), namespace)
            elif block.language == "bash":
                for command in shell_commands(block.code):
                    if not _excused(command):
                        _shell(command, tmp_path, block.where)
            else:
                assert block.language == "text", f"{block.where}: a {block.language!r} block is neither run nor text"
    for made in ("runs/first/report.html", "runs/first_python/summary.csv", "runs/mydata/figures/rho_vs_n.png",
                 "my_figure.png", "rho_vs_n.png", "audit_mydata/report.html", "audit_mydata/intervals.csv"):
        assert (tmp_path / made).is_file(), made


def _inline_commands(text: str) -> list[str]:
    return [c for c in re.findall(r"``([^`]+)``", text) if re.match(r"(simstudy|bash|python3?|pip)\s", c)]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.stem)
def test_getting_started_commands_and_images(page):
    """Inline commands are excused or begin a command a block runs; images exist."""
    text = page.read_text()
    executed = [c for p in _pages() for b in code_blocks(p, "bash") for c in shell_commands(b.code)
                if not _excused(c)]
    for command in _inline_commands(text):
        assert _excused(command) or any(e.startswith(command.rstrip(". ")) for e in executed), \
            f"{page.name}: inline command {command!r} is neither run by a block nor listed in NOT_EXECUTED"
    for image in re.findall(r"^\.\. (?:image|figure):: (\S+)", text, re.M):
        assert (page.parent / image).resolve().is_file(), f"{page.name}: {image} does not exist"
