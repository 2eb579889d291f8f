"""What starting fresh workers for every run costs: two ``run_study`` calls in one script, n_jobs=2.

Usage (from the project root):

    python benchmarks/worker_pool_reuse.py                # fork and loky, 5 repeats each
    python benchmarks/worker_pool_reuse.py --backends fork --repeats 3

Each repeat is a new Python process that runs the same small study twice (cv_variance, logistic
population, tree, sizes [20, 40], 100 replicates, chunks of 10, two workers) and times both calls.
``fresh``: the workers are stopped at the end of every run, so the second run starts its own and
sees the user's modules as they are then (what the engine does for a run whose parts reference a
module of the user's). ``kept``: the workers of the first run compute the second
(``execute(..., release_workers=False)``), which could run stale user code. ``rule``: the
engine's default (``release_workers=None``) for these parts, all presets: kept. The difference of
the second calls' medians, fresh - kept, is what fresh workers cost a run. Records
are appended to ``results/benchmarks/worker_pool_reuse.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, time
import simstudy
from simstudy.engine.execution import execute
from simstudy.engine.plan import make_runner, prepare

def once():
    runner = make_runner(None, n_jobs=2, chunk_size=10, progress=False, backend={backend!r})
    plan = prepare("cv_variance", "logistic", "tree", runner, sizes=[20, 40], replicates=100)
    start = time.perf_counter()
    execute(plan, release_workers={release})
    return time.perf_counter() - start

print("TIMES", json.dumps([once(), once()]))
"""


def one_process(backend: str, policy: str) -> list[float]:
    code = SCRIPT.format(backend=backend, release={"fresh": True, "kept": False, "rule": None}[policy])
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.split("TIMES")[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="fork,loky")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    out = ROOT / "results" / "benchmarks" / "worker_pool_reuse.jsonl"
    for backend in args.backends.split(","):
        times: dict[str, list[list[float]]] = {"fresh": [], "kept": [], "rule": []}
        for _ in range(args.repeats):
            for policy in times:  # alternated, so that load drifts hit both
                times[policy].append(one_process(backend, policy))
        second = {p: statistics.median(t[1] for t in ts) for p, ts in times.items()}
        first = {p: statistics.median(t[0] for t in ts) for p, ts in times.items()}
        record = {"benchmark": "worker_pool_reuse", "backend": backend, "n_jobs": 2, "repeats": args.repeats,
                  "study": "cv_variance logistic tree sizes=[20,40] replicates=100 chunk_size=10",
                  "times_s": times, "median_first_s": first, "median_second_s": second,
                  "cost_of_fresh_workers_s": second["fresh"] - second["kept"],
                  "date": time.strftime("%Y-%m-%d %H:%M:%S"), "python": sys.version.split()[0], **machine()}
        print(json.dumps({k: record[k] for k in ("backend", "median_first_s", "median_second_s",
                                                 "cost_of_fresh_workers_s")}))
        with out.open("a") as fh:
            fh.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
