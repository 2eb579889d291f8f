"""Time of the CV inference benchmark: the ``quick`` scale measured, the ``full`` scale estimated.

Usage (from the project root):

    python benchmarks/benchmark_scales.py                 # quick run + full estimate
    python benchmarks/benchmark_scales.py --skip-quick    # the full estimate only
    python benchmarks/benchmark_scales.py --quick-from quick.json   # record an earlier quick measurement
    python benchmarks/benchmark_scales.py --skip-quick --costs-record results/benchmarks/benchmark_quick.jsonl
                                                          # re-estimate from the recorded per-fit costs

The quick scale runs as a user types it, ``simstudy benchmark --scale quick --n-jobs 2 --out DIR``,
in a new process: its wall time, CPU time (the process and its workers) and the 1-minute load
average before and after (the machine is shared; a load above the core count means the wall time
is not the benchmark's alone). The full scale is not run: its CPU time is estimated from
measured per-fit costs. For every (mechanism, learner) of the full grid, one 5-fold plan is
fitted (5 fits, each scored and its true error computed) at the largest size; on the learner's
first mechanism also at the smallest (after one discarded warm-up plan: compiled kernels,
caches), whose ratio c(smallest) / c(largest) serves the learner's other mechanisms. The cost
per fit c(n) is interpolated linearly in n between the two sizes. A data cell of size n then
costs replicates x F(n) x c(n) (F(n): the fits per replicate of every distinct design of the
procedures the cell runs (its block's, see :class:`simstudy.studies.benchmark.scales.Block`,
that apply to it: intervals for one learner, tests for a comparison), leave-one-out's n included;
every fit charged a true error, which overestimates the bootstrap's) plus truth_replicates x c(n);
a comparison costs both learners'.
The estimate's wall time divides the CPU time by the 2 cores. Letter is read from
``../shared/data/letter-recognition.data`` when that file exists (``--data letter=PATH``
otherwise), as ``simstudy benchmark --data letter=PATH`` reads it. Records are appended to
``results/benchmarks/benchmark_quick.jsonl``.
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
from functools import partial
from pathlib import Path

import numpy as np

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


def _per_fit_cost(population, learner, loss, n: int, rng=None) -> float:
    """CPU seconds per fit (fit, score, true error) of one 5-fold plan at size n."""
    from simstudy.inference.procedures import KFoldDesign
    from simstudy.populations.checks import draw_sample
    from simstudy.studies.benchmark.fitting import fit_plan
    from simstudy.studies.benchmark.truth import estimate_weights

    sample = draw_sample(population, n, rng)
    plan = KFoldDesign(5).plan(n, rng)
    start = time.process_time()
    fit_plan(learner, learner.start(sample), sample, loss, plan, estimate_weights(plan), population, rng,
             population.task)
    return (time.process_time() - start) / plan.splits


def _logged_costs(path: str | None) -> dict[tuple, list[float]]:
    """Per-fit costs printed by an earlier run ("mechanism learner: a s/fit at n=.., b at n=..")."""
    import re

    out = {}
    if path:
        for line in Path(path).read_text().splitlines():
            found = re.match(r"(\S+) (\S+): ([0-9.]+) s/fit at n=\d+, ([0-9.]+) at n=\d+$", line)
            if found:
                out[found[1], found[2]] = [float(found[3]), float(found[4])]
    return out


def _impute(cost: dict, learners) -> list[str]:
    """Costs of the (mechanism, learner) pairs not probed: the median over the learner's probed mechanisms."""
    imputed = []
    for (mechanism, name, _) in learners:
        if (mechanism, name) not in cost:
            known = [c for (m, other), c in cost.items() if other == name]
            if known:
                cost[mechanism, name] = list(np.median(np.array(known), axis=0))
                imputed.append(f"{mechanism}/{name}")
    return imputed


LETTER_FILE = ROOT.parent / "shared" / "data" / "letter-recognition.data"


def _recorded_costs(path: str | None) -> dict[tuple, list[float]]:
    """Per-fit costs of the newest record of ``path`` (a JSONL of this script) that holds them."""
    out = {}
    if path:
        for line in Path(path).read_text().splitlines():
            costs = json.loads(line).get("full_estimate", {}).get("per_fit_cost_s")
            if costs:
                out = {tuple(key.split("/")): list(value) for key, value in costs.items()}
    return out


def _cell_fits(cell, procedures: dict) -> int:
    """Fits per replicate of a data cell: one plan per distinct design of its active procedures."""
    from simstudy.studies.benchmark.procedures import applicability

    active = [p for name, p in procedures.items() if (not cell.procedures or name in cell.procedures)
              and not applicability(p, cell.pair is not None, cell.mechanism_is_residual, cell.loss, cell.n)]
    return sum(design.fits(cell.n) for design in {repr(p.design): p.design for p in active}.values())


def _full_config(data: dict):
    from simstudy.studies.benchmark.config import BenchmarkConfig
    from simstudy.studies.benchmark.scales import SCALES

    grid = SCALES["full"]
    return grid, BenchmarkConfig(scale="full", procedures=list(grid.procedures), mechanisms=list(grid.mechanisms),
                                 learners=list(grid.learners + grid.comparisons), losses=list(grid.losses),
                                 sizes=list(grid.sizes), replicates=grid.replicates,
                                 truth_replicates=grid.truth_replicates, data=data)


def _probe_costs(learners, populations, losses, sizes, cost, budget) -> None:
    """Measure the per-fit cost of every (mechanism, learner) without one (see the module docstring)."""
    lo, hi = min(sizes), max(sizes)
    ratio: dict[str, float] = {name: c[0] / c[1] for (_, name), c in cost.items() if c[1] > 0}
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    for (mechanism, name, loss), learner in learners.items():
        key = (mechanism, name)
        if key in cost or time.perf_counter() - started > budget:
            continue
        probe = partial(_per_fit_cost, populations[mechanism], learner, losses[loss], rng=rng)
        if name not in ratio:
            probe(lo)                                # warm-up: compiled kernels, caches
            low = probe(lo)
            high = probe(hi)
            ratio[name] = low / high if high > 0 else 1.0
        else:
            high = probe(hi)
        cost[key] = [ratio[name] * high, high]
        print(f"{mechanism} {name}: {cost[key][0]:.4f} s/fit at n={lo}, {high:.4f} at n={hi}", flush=True)


def estimate_full(logged: str | None = None, budget: float = float("inf"), recorded: str | None = None,
                  data: dict | None = None) -> dict:
    """The full scale's CPU seconds from per-fit costs (see the module docstring); costs ``logged`` by an
    earlier run or ``recorded`` in a JSONL of this script are reused (measured at n = 50 and 500 and
    interpolated linearly), and once ``budget`` seconds of probing are spent the remaining
    (mechanism, learner) pairs get the median cost of the learner's probed mechanisms. A cell's
    fits per replicate count the designs of the procedures its block runs that apply to it."""
    from simstudy.cv.losses import resolve_loss
    from simstudy.errors import DataUnavailableError
    from simstudy.populations import build_population
    from simstudy.studies.benchmark.procedures import resolve_procedure
    from simstudy.studies.benchmark.study import build_cells

    data = dict(data or {})
    grid, config = _full_config(data)
    populations, unavailable = {}, {}
    for m in config.mechanisms:
        try:
            populations[m] = build_population({"name": m, "path": data[m]} if m in data else m)
        except DataUnavailableError as exc:          # e.g. Letter offline: left out of the estimate, said so
            unavailable[m] = " ".join(str(exc).split())[:200]
    config.mechanisms = list(populations)
    losses = {name: resolve_loss(name) for name in config.losses}
    cells, learners, _ = build_cells(config, populations, losses)
    procedures = {name: resolve_procedure(name) for name in config.procedures}
    cost: dict[tuple, list[float]] = {**_recorded_costs(recorded), **_logged_costs(logged)}
    cost_sizes = (50, 500) if cost else (min(config.sizes), max(config.sizes))
    _probe_costs(learners, populations, losses, cost_sizes, cost, budget)
    imputed = _impute(cost, learners)
    lo, hi = cost_sizes

    def per_fit(mechanism, name, n):
        if (mechanism, name) not in cost:
            return 0.0                     # a residual mechanism: no fit
        a, b = cost[mechanism, name]
        return a + (b - a) * (n - lo) / (hi - lo)

    by_learner: dict[str, float] = {}
    cells_by_learner: dict[str, int] = {}
    for cell in cells:
        c = sum(per_fit(cell.mechanism, name, cell.n) for name in (cell.pair or (cell.learner,)))
        seconds = config.replicates * _cell_fits(cell, procedures) * c + config.truth_replicates * c
        by_learner[cell.learner] = by_learner.get(cell.learner, 0.0) + seconds
        cells_by_learner[cell.learner] = cells_by_learner.get(cell.learner, 0) + 1
    cpu = sum(by_learner.values())
    return {"procedures": len(config.procedures), "mechanisms": len(grid.mechanisms),
            "mechanisms_not_estimated": unavailable, "local_data": data, "costs_imputed": imputed,
            "learners": len(grid.learners), "comparisons": len(grid.comparisons), "losses": len(config.losses),
            "sizes": list(config.sizes), "replicates": config.replicates,
            "truth_replicates": config.truth_replicates, "blocks": len(grid.blocks), "data_cells": len(cells),
            "estimated_cpu_s": round(cpu), "estimated_wall_h_2_cores": round(cpu / 2 / 3600, 2),
            "wall_h_2_cores_by_learner": {k: round(v / 2 / 3600, 3) for k, v in sorted(by_learner.items())},
            "cells_by_learner": dict(sorted(cells_by_learner.items())),
            "per_fit_cost_s": {f"{m}/{name}": [round(x, 5) for x in c] for (m, name), c in cost.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-quick", action="store_true")
    parser.add_argument("--costs-from", default=None, help="reuse the per-fit costs printed by an earlier run")
    parser.add_argument("--costs-record", default=None,
                        help="reuse the per-fit costs of the newest record of this JSONL (e.g. the records file)")
    parser.add_argument("--data", action="append", default=[], metavar="MECHANISM=PATH",
                        help="a local file of a data-backed mechanism (default: letter from ../shared/data if there)")
    parser.add_argument("--probe-seconds", type=float, default=float("inf"),
                        help="stop probing after this long; the rest get the learner's median cost")
    parser.add_argument("--quick-from", default=None,
                        help="a JSON file holding an earlier run_quick() measurement (with its commit) to record")
    args = parser.parse_args()
    record = {"workload": "benchmark-scales", "date": time.strftime("%Y-%m-%d %H:%M:%S"), **machine(),
              "cores": os.cpu_count(), "python": sys.version.split()[0],
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=ROOT).stdout.strip()}
    if args.quick_from:
        record["quick"] = json.loads(Path(args.quick_from).read_text())
    elif not args.skip_quick:
        record["quick"] = run_quick()
        print(json.dumps(record["quick"]), flush=True)
    data = dict(item.split("=", 1) for item in args.data)
    if not data and LETTER_FILE.is_file():
        data = {"letter": str(LETTER_FILE)}
    record["full_estimate"] = estimate_full(args.costs_from, args.probe_seconds, args.costs_record, data)
    RECORDS.parent.mkdir(parents=True, exist_ok=True)
    with RECORDS.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(json.dumps(record["full_estimate"]))


if __name__ == "__main__":
    main()
