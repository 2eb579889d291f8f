"""Measure the same thing in this checkout and in another one, side by side (``--against DIR``).

Used by the per-replicate CPU benchmarks (:mod:`cv_clt_learners`, :mod:`table2_sizes`): the script
measures in this process, then runs itself with ``--json`` in a subprocess whose ``PYTHONPATH`` is
the other checkout, and appends one JSON line per checkout to a ``results/benchmarks`` file.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from machine import machine


def compare(script: str, measure: Callable[[], Any], json_args: list[str], against: str | None,
            output: str, replicates: int) -> dict[str, tuple[str, float, Any]]:
    """{"this": (root, load, numbers), "against": (...)}: ``measure()`` here, and
    ``python script --json *json_args`` in the checkout ``against`` (its numbers from its last
    stdout line, JSON keys as strings); both appended to ``output`` as JSON lines."""
    root = Path(script).resolve().parents[1]
    results = {"this": (str(root), os.getloadavg()[0], measure())}
    if against:
        other = Path(against).resolve()
        load = os.getloadavg()[0]
        done = subprocess.run([sys.executable, script, "--json", *json_args], env=dict(os.environ, PYTHONPATH=str(other)),
                              cwd=other, capture_output=True, text=True, check=True)
        results["against"] = (str(other), load, json.loads(done.stdout.splitlines()[-1]))
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with open(output, "a") as fh:
        for tag, (checkout, load, numbers) in results.items():
            fh.write(json.dumps({"checkout": checkout, "load_average": load, "replicates": replicates,
                                 "ms_cpu_per_replicate": numbers, **machine(),
                                 "date": time.strftime("%Y-%m-%d %H:%M:%S")}) + "\n")
    print(f"CPU ms per replicate (mean of {replicates}); load average at start: "
          + ", ".join(f"{tag} {load:.1f}" for tag, (_, load, _) in results.items()))
    return results


def cell(results: dict, path: list) -> str:
    """One table cell: this checkout's number at ``path`` (keys), as ``before->now`` with another."""
    now = results["this"][2]
    for key in path:
        now = now[key]
    if "against" not in results:
        return f"{now:.1f}"
    before = results["against"][2]
    for key in path:
        before = before[str(key)] if isinstance(before, dict) and str(key) in before else before[key]
    return f"{before:.1f}->{now:.1f}"
