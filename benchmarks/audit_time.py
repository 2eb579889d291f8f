"""Time of ``simstudy audit`` on a 5,000-row Letter file with a tree: the sequential rule against the fixed rule.

Usage (from the project root, with ../shared/data beside it):

    python benchmarks/audit_time.py                       # seeds 0-4 sequential, 2 fixed runs
    python benchmarks/audit_time.py --seeds 0,1 --fixed-repeats 1

The user file is the first 5,000 rows of Letter (the README's ``head -5000`` example; A-M against
N-Z). Each run is the command a user types, started as a new process with the numba cache warm
(one discarded run first): ``simstudy audit FILE --positive A ... M --no-progress -o DIR --rule R
--seed S``. Per run: the wall time, the CPU time of the process and its workers (user + system,
from ``getrusage(RUSAGE_CHILDREN)``: the workers are reaped before the command exits), the 1-minute
load average before and after (the machine is shared: a load above the core count means the wall
time is not the audit's alone, and CPU / cores is the better guide), the replicates each setting
ran, the recommended procedure and the trusted ones. The rules alternate so that load drifts hit
both. Records are appended to ``results/benchmarks/audit_time.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
LETTER = ROOT.parent / "shared" / "data" / "letter-recognition.data"
POSITIVE = list("ABCDEFGHIJKLM")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_audit(data: Path, rule: str, seed: int) -> dict:
    """One ``simstudy audit`` command: timings, load, replicates run, recommendation."""
    out = Path(tempfile.mkdtemp(prefix="simstudy-audit-bench-")) / "audit"
    command = [sys.executable, "-m", "simstudy.cli", "audit", str(data), "--positive", *POSITIVE, "--no-progress",
               "-o", str(out), "--rule", rule, "--seed", str(seed)]
    try:
        load_before, cpu_before = os.getloadavg()[0], _children_cpu()
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - start
        cpu = _children_cpu() - cpu_before
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{proc.stderr}")
        calibration = pd.read_csv(out / "calibration.csv")
        ran = {k: int(g["replicates"].max()) for k, g in calibration.groupby("setting")}
        report = (out / "report.md").read_text()
        table = report.split("| procedure | verdict |")[1].split("\n\n")[0]
        trusted = sorted(line.split("|")[1].strip() for line in table.splitlines() if "| trusted |" in line)
        return {"rule": rule, "seed": seed, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
                "replicates_run": ran, "recommended": pd.read_csv(out / "intervals.csv")["procedure"].iloc[0],
                "trusted": trusted}
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


def _commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return proc.stdout.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0,1,2,3,4", help="seeds of the sequential runs")
    parser.add_argument("--fixed-repeats", type=int, default=2, help="fixed-rule runs (seeds 0, 1, ...)")
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "audit_time.jsonl"))
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="simstudy-audit-data-"))
    data = folder / "letter5000.data"
    data.write_text("".join(LETTER.read_text().splitlines(keepends=True)[:5000]))
    try:
        run_audit(data, "sequential", 0)   # warm: numba cache, file system cache
        plan = [("sequential", s) for s in seeds] + [("fixed", s) for s in range(args.fixed_repeats)]
        plan.sort(key=lambda item: (item[1], item[0] != "fixed"))   # alternate the rules
        runs = []
        for rule, seed in plan:
            runs.append(run_audit(data, rule, seed))
            print(json.dumps(runs[-1]), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    row = {"workload": "audit-letter5000-tree", "command": "simstudy audit letter5000.data --positive A..M",
           "runs": runs, "cores": os.cpu_count(), **machine(), "python": platform.python_version(),
           "commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    for rule in ("sequential", "fixed"):
        mine = [r for r in runs if r["rule"] == rule]
        if mine:
            row[f"median_wall_s_{rule}"] = statistics.median(r["wall_s"] for r in mine)
            row[f"median_cpu_s_{rule}"] = statistics.median(r["cpu_s"] for r in mine)
            print(f"{rule:10s} wall median {row[f'median_wall_s_{rule}']:6.1f} s   CPU median "
                  f"{row[f'median_cpu_s_{rule}']:6.1f} s   ({len(mine)} runs)")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a") as fh:
        fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
