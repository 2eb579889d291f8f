"""Every committed ``experiments/*.sh`` composes: each simstudy command line a script would run
is recorded by a stand-in ``simstudy`` on PATH, then composed and validated as the CLI does
(no replicate runs); a ``simstudy benchmark`` line is parsed and its grid resolved and checked. A preset change that makes a script's override invalid fails here, not
forty minutes into ``experiments/all.sh``."""
from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import validate

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "letter-recognition.data"
SCRIPTS = sorted(p for p in (ROOT / "experiments").glob("*.sh") if p.name != "all.sh")

RECORDER = """#!/usr/bin/env bash
printf '%s\\0' "$@" >> "$SIMSTUDY_ARGV_LOG"
printf '\\n\\0' >> "$SIMSTUDY_ARGV_LOG"
"""


def _command_lines(script: Path, tmp_path: Path) -> list[list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    recorder = bin_dir / "simstudy"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    log = tmp_path / f"{script.stem}.argv"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SIMSTUDY_ARGV_LOG": str(log),
           "PYTHON": "true", "DATA": str(DATA), "OUT": str(tmp_path / "out")}
    env.pop("SIMSTUDY", None)
    # experiments/all.sh gives the benchmark its folder as OUT, the others theirs as hydra.run.dir
    extra = [] if script.stem == "benchmark" else [f"hydra.run.dir={tmp_path / 'out'}"]
    subprocess.run(["bash", str(script), *extra], cwd=ROOT, env=env, check=True, capture_output=True, timeout=60)
    fields = log.read_text().split("\0")[:-1] if log.exists() else []
    lines, line = [], []
    for field in fields:
        if field == "\n":
            lines.append(line)
            line = []
        else:
            line.append(field)
    return lines


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_every_experiment_script_composes_and_validates(script, tmp_path, compose_config):
    lines = _command_lines(script, tmp_path)
    assert lines, f"{script.name} ran no simstudy command"
    for argv in lines:
        if argv[:1] == ["benchmark"]:
            _check_benchmark_line(argv[1:], tmp_path)
            continue
        overrides = [a for a in argv if not a.startswith("hydra.")]
        cfg = compose_config(*overrides)
        if DATA.exists() or "letter" not in shlex.join(overrides):
            validate(cfg)


def _check_benchmark_line(argv: list[str], tmp_path: Path) -> None:
    """Parse a ``simstudy benchmark`` line as the CLI does and resolve and check its grid."""
    from simstudy.benchmark.run import benchmark_params
    from simstudy.cli.benchmark import benchmark_parser
    from simstudy.studies.benchmark.study import BenchmarkStudy

    args = benchmark_parser().parse_args(argv)
    assert args.out == str(tmp_path / "out")
    data = dict(item.split("=", 1) for item in args.data)
    assert data == {"letter": str(DATA)}
    params = benchmark_params(args.scale, data=data)
    names = {field.name for field in dataclasses.fields(BenchmarkStudy.Config)}
    BenchmarkStudy(BenchmarkStudy.Config(**{k: v for k, v in params.items() if k in names})).check()
