"""The user guide's code is right: every Python block runs as written (the blocks of one page share
a namespace, in a scratch folder), and every ``simstudy`` command it shows composes: its config
groups and fields exist and its values have the right types (Hydra's composition, as the command
does it first, without running the study: many of the guide's commands are full-scale runs or
need a cluster)."""
from __future__ import annotations

import shlex
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
from codeblocks import code_blocks, shell_commands  # noqa: E402

PAGES = sorted((ROOT / "docs" / "user_guide").glob("*.rst"))
#: Programs the guide's shell blocks may call; only ``simstudy`` commands are composed.
PROGRAMS = ("simstudy", "simstudy-report", "simstudy-collect", "pip", "python", "bash", "RESULTS=")


#: Pages whose blocks refit models many times (the audit, nested CV): the longer checks.
SLOW_PAGES = ("own_model",)


@pytest.mark.parametrize("page", [pytest.param(p, marks=[pytest.mark.slow] if p.stem in SLOW_PAGES else [])
                                  for p in PAGES if code_blocks(p, "python")], ids=lambda p: p.stem)
def test_python_blocks_run_as_written(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))              # examples/ importable, as from the project root
    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path / "cache"))
    namespace: dict = {"__name__": "__user_guide__"}
    for block in code_blocks(page, "python"):
        exec(compile("\n" * (block.line - 1) + block.code, str(page), "exec"), namespace)


def _overrides(command: str) -> list[str]:
    """The config overrides of a ``simstudy`` command: the first value of a swept list, no Hydra
    or launcher settings, ``+`` additions kept."""
    out = []
    for token in shlex.split(command.split(" #")[0])[1:]:
        if token.startswith("-") or "=" not in token:
            continue
        key, value = token.split("=", 1)
        if key.lstrip("+").startswith(("hydra.", "sweep")) or key.startswith("~"):
            continue
        if "," in value and not value.startswith(("[", "{")):
            value = value.split(",")[0]
        out.append(f"{key}={value}")
    return out


def _commands():
    for page in PAGES:
        for block in code_blocks(page, "bash"):
            for command in shell_commands(block.code):
                yield pytest.param(command, id=f"{page.stem}:{block.line}:{command[:40]}")


@pytest.mark.parametrize("command", list(_commands()))
def test_shell_commands_name_real_programs_and_compose(command, compose_config):
    assert command.startswith(PROGRAMS), f"unknown program in {command!r}"
    if command.split()[0] != "simstudy" or command.split()[1:2] == ["audit"]:
        return
    compose_config(*_overrides(command))
