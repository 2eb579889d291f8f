"""Time of the CV inference benchmark's ``quick`` scale, measured as a user runs it.

Usage (from the project root):

    python benchmarks/benchmark_scales.py                             # run and record the quick scale
    python benchmarks/benchmark_scales.py --quick-from quick.json     # record an earlier quick measurement

The quick scale runs as a user types it, ``simstudy benchmark --scale quick --n-jobs 2 --out DIR``,
in a new process: its wall time, CPU time (the process and its workers) and the 1-minute load
average before and after (the machine is shared; a load above the core count means the wall time
is not the benchmark's alone). Records are appended to ``results/benchmarks/benchmark_quick.jsonl``.
The ``full`` scale is not run here: ``benchmarks/benchmark_pilot.py`` predicts its CPU time cell
by cell from a pilot of its real cells.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "results" / "benchmarks" / "benchmark_quick.jsonl"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_quick() -> dict:
    out = Path(tempfile.mkdtemp(prefix="simstudy-benchmark-quick-")) / "run"
    command = [sys.executable, "-m", "simstudy.cli", "benchmark", "--scale", "quick", "--n-jobs", "2", "--out",
               str(out)]
    load_before, cpu_before = os.getloadavg()[0], _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{proc.stderr}")
    import pandas as pd

    cells = pd.read_parquet(out / "cells.parquet")
    manifest = json.loads((out / "manifest.json").read_text())
    return {"command": "simstudy benchmark --scale quick --n-jobs 2", "wall_s": round(wall, 1),
            "cpu_s": round(_children_cpu() - cpu_before, 1), "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2), "cell_rows": int(len(cells)),
            "data_cells": int(manifest.get("cells", 0)), "replicates_failed": int(manifest["replicates_failed"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick-from", default=None,
                        help="a JSON file holding an earlier run_quick() measurement (with its commit) to record")
    args = parser.parse_args()
    record = {"workload": "benchmark-scales", "date": time.strftime("%Y-%m-%d %H:%M:%S"), **machine(),
              "cores": os.cpu_count(), "python": sys.version.split()[0],
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=ROOT).stdout.strip()}
    record["quick"] = json.loads(Path(args.quick_from).read_text()) if args.quick_from else run_quick()
    RECORDS.parent.mkdir(parents=True, exist_ok=True)
    with RECORDS.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(json.dumps(record["quick"]))


if __name__ == "__main__":
    main()
