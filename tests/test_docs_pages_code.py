"""The code of the Statistics and Reproductions pages runs as written: every Python block in a
scratch folder (blocks of one page share a namespace), every shell command run or excused
(:data:`test_readme.NOT_EXECUTED`: the reproductions name full-scale runs)."""
from __future__ import annotations

import sys

import pytest

from conftest import ROOT
from test_readme import _shell
from test_getting_started import _excused

sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
from codeblocks import code_blocks, shell_commands  # noqa: E402

PAGES = sorted((ROOT / "docs" / "statistics").glob("*.rst")) + sorted((ROOT / "docs" / "reproductions").glob("*.rst"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_page_code_runs_as_written(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs_page__"}
    for block in code_blocks(page):
        if block.language == "python":
            exec(compile("\n" * (block.line - 1) + block.code, str(page), "exec"), namespace)
        elif block.language == "bash":
            for command in shell_commands(block.code):
                if not _excused(command):
                    _shell(command, tmp_path, block.where)
        else:
            assert block.language == "text", f"{block.where}: a {block.language!r} block is neither run nor text"
