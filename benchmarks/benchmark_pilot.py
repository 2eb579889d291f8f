"""CPU time of a benchmark scale, predicted per data cell by a pilot run of the real cells.

Usage (from the project root):

    python benchmarks/benchmark_pilot.py --scale full                      # pilot every cell, record
    python benchmarks/benchmark_pilot.py --scale full --validate RUN_DIR   # ... and compare with a run's shards
    python benchmarks/benchmark_pilot.py --scale full --cell-seconds 2 --max-replicates 8   # a closer pilot
    python benchmarks/benchmark_pilot.py --validate-only RUN_DIR --from results/benchmarks/benchmark_pilot.jsonl

Every data cell of the scale (its blocks applied, :func:`simstudy.studies.benchmark.study.build_cells`)
is run by the engine's own workers (:class:`~simstudy.studies.benchmark.worker.BenchmarkWorker`,
:class:`~simstudy.studies.benchmark.truth_worker.TruthWorker`) on the cell's real procedures, loss
and learners, one process per job (``--jobs``, default 2), one thread each (n_jobs = 1). So the
prediction measures whatever the code costs (sklearn or fast kernels, true risks on the evaluation
sets, the R_n weights of every design), not a model of it. Per cell:

1. warm-up, discarded: the first cell of each learner in a process runs one replicate (index
   ``replicates``, outside the run's range: compiled kernels, imports), the first of each
   (mechanism, learner, loss) one truth replicate (evaluation sets, caches);
2. replicates 0, 1, ... (the run's own indices, so the run's own samples) in one chunk of 1, then
   one chunk of k more, k chosen so that the cell's pilot stays near ``--cell-seconds`` CPU
   seconds (at least ``--min-replicates``, at most ``--max-replicates`` in all);
3. as many truth replicates (Err_n phase), scaled the same way.

The cell's predicted CPU seconds are ``replicates x c_rep + truth_replicates x c_truth`` (CPU
seconds per replicate, measured with ``time.process_time`` in the worker process: independent of
the machine's load, up to cache and memory contention). The estimate ignores the engine's
per-chunk overhead outside the workers (writing shards) and the run's start (building
populations), each a few seconds. Wall time on C cores is CPU / C (the engine keeps both busy
while cells remain).

``--validate RUN_DIR`` compares each cell's prediction with the CPU time its chunks recorded in
``RUN_DIR/shards/{replicates,truth}/*.json`` (``cpu_time``, per replicate, matched by cell key),
and reports the ratio predicted / measured (median, quartiles, extremes, and the CPU-weighted
total). Records are appended to ``results/benchmarks/benchmark_pilot.jsonl`` (one line per run:
the summary, the CPU per block of the scale, the top cells, the validation) and the per-cell
estimates written to ``results/benchmarks/benchmark_<scale>_estimate.jsonl`` (replaced).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "results" / "benchmarks" / "benchmark_pilot.jsonl"
LETTER_FILE = ROOT.parent / "shared" / "data" / "letter-recognition.data"

_STUDY = None            # the built study and its phases, inherited by the forked pilot processes
_PHASES: dict = {}
_WARMED: set = set()     # learners and (mechanism, learner, loss) warmed up in this process


def build_study(scale: str, data: dict):
    """The benchmark study of ``scale`` as ``simstudy benchmark --scale`` builds it (checked)."""
    from simstudy.studies.benchmark.config import BenchmarkConfig
    from simstudy.studies.benchmark.scales import SCALES
    from simstudy.studies.benchmark.study import BenchmarkStudy

    grid = SCALES[scale]
    config = BenchmarkConfig(scale=scale, procedures=list(grid.procedures), mechanisms=list(grid.mechanisms),
                             learners=list(grid.learners + grid.comparisons), losses=list(grid.losses),
                             sizes=list(grid.sizes), replicates=grid.replicates,
                             truth_replicates=grid.truth_replicates, data=data)
    study = BenchmarkStudy(config)
    study.check()
    return study


def _timed(worker, chunk) -> float:
    start = time.process_time()
    frame = worker(chunk)
    seconds = time.process_time() - start
    if "error" in frame and (frame["error"].astype(str) != "").any():
        raise RuntimeError(f"pilot chunk {chunk} failed: {frame['error'][frame['error'] != ''].iloc[0]}")
    return seconds


def _measure(worker, index: int, replicates: int, budget: float, low: int, high: int) -> tuple[float, int]:
    """CPU seconds per replicate of condition ``index``: 1 replicate, then k more within ``budget``."""
    from simstudy.studies.base import Chunk

    first = _timed(worker, Chunk(index, 0, 1))
    more = int(np.clip(budget / max(first, 1e-4) - 1, low - 1, min(high, replicates) - 1))
    rest = _timed(worker, Chunk(index, 1, 1 + more)) if more > 0 else 0.0
    return (first + rest) / (1 + more), 1 + more


def pilot_cell(index: int, budget: float, low: int, high: int) -> dict:
    """The pilot of data cell ``index`` of the study (see the module docstring)."""
    from simstudy.studies.base import Chunk

    study, phases = _STUDY, _PHASES
    replicates_phase, truth_phase = phases["replicates"], phases["truth"]
    cell = study.cells[index]
    c = study.config
    if cell.learner not in _WARMED:            # compiled kernels, imports: once per learner and process
        _timed(replicates_phase.worker, Chunk(index, int(c.replicates), int(c.replicates) + 1))
        _WARMED.add(cell.learner)
    group = (cell.mechanism, cell.learner, cell.loss)
    if group not in _WARMED:                   # the population's evaluation set, the learner's start
        _timed(truth_phase.worker, Chunk(index, int(c.truth_replicates), int(c.truth_replicates) + 1))
        _WARMED.add(group)
    per_rep, reps = _measure(replicates_phase.worker, index, int(c.replicates), budget, low, high)
    per_truth, truths = _measure(truth_phase.worker, index, int(c.truth_replicates), budget / 4, low, high)
    return {"key": cell.key, "mechanism": cell.mechanism, "learner": cell.learner, "loss": cell.loss, "n": cell.n,
            "procedures": len(cell.procedures) or len(c.procedures), "pilot_replicates": reps,
            "pilot_truth_replicates": truths, "cpu_s_per_replicate": round(per_rep, 6),
            "cpu_s_per_truth_replicate": round(per_truth, 6),
            "cpu_s": round(int(c.replicates) * per_rep + int(c.truth_replicates) * per_truth, 2),
            "replicates_cpu_s": round(int(c.replicates) * per_rep, 2),
            "truth_cpu_s": round(int(c.truth_replicates) * per_truth, 2)}


def _group_task(args) -> tuple[list[dict], float]:
    indices, budget, low, high = args
    start = time.process_time()
    rows = [pilot_cell(i, budget, low, high) for i in indices]
    return rows, time.process_time() - start


def run_pilot(study, jobs: int, budget: float, low: int, high: int) -> tuple[list[dict], float]:
    """Per-cell estimates of every cell of ``study`` and the pilot's own CPU seconds (its processes)."""
    global _STUDY, _PHASES
    _STUDY, _PHASES = study, {phase.name: phase for phase in study.phases()}
    groups: dict[tuple, list[int]] = {}
    for i, cell in enumerate(study.cells):
        groups.setdefault((cell.mechanism, cell.learner, cell.loss), []).append(i)
    tasks = [(sorted(v, key=lambda i: study.cells[i].n), budget, low, high) for v in groups.values()]
    rows, cpu, done = [], 0.0, 0
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=None) as pool:
        for part, seconds in pool.imap_unordered(_group_task, tasks):
            rows += part
            cpu += seconds
            done += 1
            print(f"[{done}/{len(tasks)}] {part[0]['mechanism']} {part[0]['learner']} {part[0]['loss']}: "
                  f"{sum(r['cpu_s'] for r in part):.0f} CPU s predicted, pilot {seconds:.1f} s", flush=True)
    return rows, cpu


def block_of(scale: str, cell: dict) -> str:
    """The first block of ``scale`` holding the cell ("b<i>: learners @ sizes"), or "no block"."""
    from simstudy.studies.benchmark.scales import SCALES

    for i, block in enumerate(SCALES[scale].blocks):
        if block.holds(cell["mechanism"], cell["learner"], cell["loss"], cell["n"]):
            return f"b{i}: {'/'.join(block.learners)} n={','.join(map(str, block.sizes))}"
    return "no block"


def summarize(rows: list[dict], scale: str, cores: int = 2, top: int = 15) -> dict:
    """Total CPU, wall on ``cores`` cores, CPU per block and per loss, and the ``top`` costliest cells."""
    total = sum(r["cpu_s"] for r in rows)
    by_block: dict[str, list] = {}
    by_loss: dict[str, float] = {}
    for r in rows:
        entry = by_block.setdefault(block_of(scale, r), [0, 0.0])
        entry[0] += 1
        entry[1] += r["cpu_s"]
        by_loss[r["loss"]] = by_loss.get(r["loss"], 0.0) + r["cpu_s"]
    costly = sorted(rows, key=lambda r: -r["cpu_s"])[:top]
    return {"cells": len(rows), "cpu_s": round(total), "wall_h": round(total / cores / 3600, 2), "cores": cores,
            "truth_cpu_s": round(sum(r["truth_cpu_s"] for r in rows)),
            "by_block": {k: {"cells": v[0], "cpu_s": round(v[1])} for k, v in sorted(by_block.items())},
            "by_loss": {k: round(v) for k, v in sorted(by_loss.items())},
            "top_cells": [{k: r[k] for k in ("mechanism", "learner", "loss", "n", "procedures", "cpu_s",
                                             "truth_cpu_s")} for r in costly]}


def measured_cells(run: Path) -> dict[str, dict]:
    """CPU seconds per replicate each cell's chunks recorded in ``run/shards`` (by cell key / truth key)."""
    out: dict[str, dict] = {}
    for phase in ("replicates", "truth"):
        for path in (run / "shards" / phase).glob("*.json"):
            chunk = json.loads(path.read_text())
            entry = out.setdefault(f"{phase}:{chunk['condition_key']}", {"cpu_s": 0.0, "replicates": 0})
            entry["cpu_s"] += float(chunk["cpu_time"])
            entry["replicates"] += int(chunk["stop"]) - int(chunk["start"])
    return out


def _ratios(pairs: list[tuple[float, float]]) -> dict:
    if not pairs:
        return {"cells": 0}
    predicted, measured = np.array(pairs).T
    ratio = predicted / measured
    q = np.quantile(ratio, [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1])
    return {"cells": len(ratio), "ratio_quantiles_0_10_25_50_75_90_100": [round(float(x), 2) for x in q],
            "within_x1.5": int(np.sum((ratio > 1 / 1.5) & (ratio < 1.5))),
            "within_x2": int(np.sum((ratio > 0.5) & (ratio < 2))),
            "predicted_cpu_s": round(float(predicted.sum()), 1), "measured_cpu_s": round(float(measured.sum()), 1),
            "total_ratio": round(float(predicted.sum() / measured.sum()), 3)}


def validate(rows: list[dict], run: Path) -> dict:
    """Predicted vs measured CPU seconds of the cells ``run`` computed, per phase (see the module docstring)."""
    from simstudy.rng import condition_key

    measured = measured_cells(run)
    replicates, truth, worst = [], [], []
    for r in rows:
        got = measured.get(f"replicates:{r['key']}")
        if got and got["replicates"]:
            m = got["cpu_s"] / got["replicates"]
            replicates.append((r["cpu_s_per_replicate"], m))
            worst.append((r["cpu_s_per_replicate"] / m, r["mechanism"], r["learner"], r["loss"], r["n"],
                          round(400 * m, 1)))
        got = measured.get(f"truth:{condition_key({'truth': r['key']})}")
        if got and got["replicates"]:
            truth.append((r["cpu_s_per_truth_replicate"], got["cpu_s"] / got["replicates"]))
    worst.sort()
    return {"run": str(run), "replicates": _ratios(replicates), "truth": _ratios(truth),
            "lowest_ratios": [list(w) for w in worst[:5]], "highest_ratios": [list(w) for w in worst[-5:]]}


def main() -> None:
    from simstudy.studies.benchmark.scales import SCALES

    def positive(text: str) -> int:
        value = int(text)
        if value < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
        return value

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="full", choices=sorted(SCALES))
    parser.add_argument("--jobs", type=positive, default=2, help="pilot processes (each one thread)")
    parser.add_argument("--cell-seconds", type=float, default=0.75, help="target pilot CPU seconds per cell")
    parser.add_argument("--min-replicates", type=int, default=2)
    parser.add_argument("--max-replicates", type=int, default=4)
    parser.add_argument("--cores", type=positive, default=2, help="cores of the wall-time prediction")
    parser.add_argument("--data", action="append", default=[], metavar="MECHANISM=PATH",
                        help="a local file of a data-backed mechanism (default: letter from ../shared/data if there)")
    parser.add_argument("--validate", default=None, metavar="RUN_DIR", help="compare with a run's measured shards")
    parser.add_argument("--validate-only", default=None, metavar="RUN_DIR",
                        help="no pilot: validate the per-cell estimates of --from against RUN_DIR")
    parser.add_argument("--from", dest="source", default=None, help="per-cell estimates JSONL (with --validate-only)")
    args = parser.parse_args()
    estimates = ROOT / "results" / "benchmarks" / f"benchmark_{args.scale}_estimate.jsonl"
    if args.validate_only:
        rows = [json.loads(line) for line in Path(args.source or estimates).read_text().splitlines()]
        print(json.dumps(validate(rows, Path(args.validate_only)), indent=1))
        return
    data = dict(item.split("=", 1) for item in args.data)
    if not data and LETTER_FILE.is_file():
        data = {"letter": str(LETTER_FILE)}
    load_before, wall_start = os.getloadavg(), time.perf_counter()
    build_start = time.process_time()
    study = build_study(args.scale, data)
    build_cpu = time.process_time() - build_start
    rows, pilot_cpu = run_pilot(study, args.jobs, args.cell_seconds, args.min_replicates, args.max_replicates)
    rows.sort(key=lambda r: (r["mechanism"], r["learner"], r["loss"], r["n"]))
    record = {"workload": "benchmark-pilot", "date": time.strftime("%Y-%m-%d %H:%M:%S"), **machine(),
              "cores": os.cpu_count(), "python": sys.version.split()[0],
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=ROOT).stdout.strip(),
              "scale": args.scale, "replicates": int(study.config.replicates),
              "truth_replicates": int(study.config.truth_replicates),
              "pilot": {"jobs": args.jobs, "cell_seconds": args.cell_seconds, "min_replicates": args.min_replicates,
                        "max_replicates": args.max_replicates, "cpu_s": round(pilot_cpu + build_cpu, 1),
                        "wall_s": round(time.perf_counter() - wall_start, 1),
                        "load_before": [round(x, 2) for x in load_before],
                        "load_after": [round(x, 2) for x in os.getloadavg()]},
              "estimate": summarize(rows, args.scale, args.cores)}
    if args.validate:
        record["validation"] = validate(rows, Path(args.validate))
    estimates.parent.mkdir(parents=True, exist_ok=True)
    estimates.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with RECORDS.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
