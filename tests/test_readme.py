"""README.md runs as written: every Python block is executed, every shell command is executed or
listed in :data:`NOT_EXECUTED` with the reason, and the README stays a front door (short, no
measurement history)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
from codeblocks import CodeBlock, code_blocks, shell_commands  # noqa: E402

README = ROOT / "README.md"

#: Commands of the README that the tests do not run, by prefix, with the reason.
NOT_EXECUTED = {
    "python3 -m venv": "creates the environment the tests already run in",
    "pip install -e": "installs the package the tests already import",
    "python -m pytest": "the test suite itself",
    "python -m sphinx": "tests/test_docs.py builds the same documentation (-W, gallery executed)",
    "bash experiments/": "a committed full-scale run (minutes to an hour): results/ holds its output",
    "PYTHONPATH=. python experiments/": "a committed full-scale run (minutes to an hour): results/ holds its output",
    "simstudy experiment=table2_letter": "downloads Letter from OpenML and runs the full-scale Table 2 row",
    "simstudy benchmark --scale quick": "minutes of simulation; tests/test_benchmark_study.py runs the same command "
                                        "at the ci scale",
    "simstudy certify package.module:function": "a placeholder path; tests/test_certify.py certifies real procedures",
}

#: What each section's blocks must leave behind in the scratch folder.
PRODUCES = {
    "Quickstart": ["runs/first/report.html", "runs/first/figures/type1_vs_n.png", "type1_vs_n.png",
                   "runs/first_python/summary.csv"],
    "Your own model": ["audit_mine/report.html", "audit_mine/intervals.csv"],
    "Extending: your own parts": ["runs/custom/summary.csv"],
}


def _sections() -> dict[str, list[CodeBlock]]:
    out: dict[str, list[CodeBlock]] = {}
    for block in code_blocks(README):
        if block.language in ("python", "bash"):
            out.setdefault(block.heading, []).append(block)
    return out


def _not_executed(command: str) -> str | None:
    return next((reason for prefix, reason in NOT_EXECUTED.items() if command.startswith(prefix)), None)


def _shell(command: str, cwd: Path, where: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "MPLBACKEND": "Agg"}
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{where}: {command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def _executed_commands(blocks: list[CodeBlock]) -> list[str]:
    return [c for b in blocks if b.language == "bash" for c in shell_commands(b.code) if not _not_executed(c)]


@pytest.mark.parametrize("heading", [h for h, blocks in _sections().items() if _executed_commands(blocks)
                                     or any(b.language == "python" for b in blocks)])
def test_readme_section_runs_as_written(heading, tmp_path, monkeypatch):
    """The section's blocks, in order, in a scratch folder (Python blocks share one namespace)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))             # examples/ importable, as from the project root
    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path / "cache"))
    namespace: dict = {"__name__": "__readme__"}
    for block in _sections()[heading]:
        if block.language == "python":
            code = "\n" * (block.line - 1) + block.code      # tracebacks point at README.md's lines
            exec(compile(code, str(README), "exec"), namespace)
        else:
            for command in shell_commands(block.code):
                if not _not_executed(command):
                    _shell(command, tmp_path, block.where)
    for path in PRODUCES.get(heading, []):
        assert (tmp_path / path).is_file(), f"README section {heading!r} did not produce {path}"


def _inline_commands(text: str) -> list[str]:
    """Commands quoted inline (`simstudy ...`, `bash ...`, `python ...`, `pip ...`) outside code blocks."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [c for c in re.findall(r"`([^`]+)`", text)
            if re.match(r"(simstudy|bash|python3?|pip|PYTHONPATH=\S+ python)\s", c)]


def test_every_readme_command_is_run_or_excused():
    """Block commands run unless excused (above); an inline command is excused or begins a command a
    block runs; every script a command names exists."""
    text = README.read_text()
    executed = [c for blocks in _sections().values() for c in _executed_commands(blocks)]
    assert executed
    for command in _inline_commands(text):
        assert _not_executed(command) or any(e.startswith(command) for e in executed), \
            f"README command {command!r} is neither run by a README block nor listed in NOT_EXECUTED"
    for script in re.findall(r"\b(experiments/\w+\.(?:sh|py))", text):
        assert (ROOT / script).is_file(), f"README names {script}, which does not exist"


def test_readme_is_a_front_door():
    """Short, and free of measurement history (measurements live in results/benchmarks/)."""
    text = README.read_text()
    assert len(text.splitlines()) <= 260
    assert not re.search(r"\bsessions?\b", text, re.I)
    assert not re.search(r"\b\d+ tests\b|\bfresh-clone\b", text), "test counts and CI times belong to CI logs"
    for target in re.findall(r"\]\(([^)#]+)\)", text):     # images and links into the repository
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"
