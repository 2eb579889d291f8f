"""The cost of checking every part's outputs (:mod:`simstudy.cv.checks`, :mod:`simstudy.populations.checks`)
on the Letter tree study.

The same run (cv_variance, Letter binarised A-M, the default tree, ``n_jobs=1`` on the ``sequential``
backend: every replicate in the timed process) is timed in fresh
processes with the checks as they are and with them replaced by no-ops; the overhead is the
difference of the medians over the no-check median, for wall time and for the process's CPU time
(steadier on a shared machine). ``--code DIR`` times another checkout of the project (e.g. the
commit before a change), so one record can compare before and after. Records are appended to
``results/benchmarks/part_checks.jsonl``.

    python benchmarks/part_checks.py --label after
    python benchmarks/part_checks.py --code /tmp/before --label before
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from end_to_end import letter_path  # noqa: E402
from machine import machine  # noqa: E402

SIZES, REPLICATES, SEED = [20, 400], 600, 2006


def _without_checks() -> None:
    """Replace the part-output checks by no-ops (the arrays pass through unchanged)."""
    import numpy as np

    from simstudy.cv import checks, losses
    from simstudy.populations import checks as population_checks

    checks.check_predictions = lambda *args, **kwargs: None
    checks.checked_losses = losses.checked_losses = lambda values, shape, name: np.asarray(values, dtype=float)
    population_checks.checked_arrays = lambda X, y, *args, **kwargs: (X, y)


def _child(mode: str) -> None:
    import simstudy

    if mode == "off":
        _without_checks()
    population = {"kind": "tabular", "name": "letter", "path": str(letter_path()), "positive": list("ABCDEFGHIJKLM")}
    simstudy.run_study("cv_variance", population=population, learner="tree", sizes=[20], replicates=5, n_jobs=1,
                       backend="sequential", progress=False, seed=SEED)  # compile and load once, outside the timing
    wall, cpu = time.perf_counter(), time.process_time()
    res = simstudy.run_study("cv_variance", population=population, learner="tree", sizes=SIZES,
                             replicates=REPLICATES, n_jobs=1, backend="sequential", progress=False, seed=SEED)
    print(json.dumps({"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                      "checksum": float(res.records["mu_hat"].sum())}))


def _time(code: Path, mode: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, __file__, "--child", mode], cwd=code, env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--code", default=str(ROOT), help="the checkout to time (default: this one)")
    parser.add_argument("--label", default="", help="what the checkout is, e.g. before / after")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    code = Path(args.code).resolve()
    runs: dict[str, list[dict]] = {"on": [], "off": []}
    for _ in range(args.repeats):
        for mode in runs:  # alternated, so that load drifts hit both
            runs[mode].append(_time(code, mode))
    assert len({r["checksum"] for rs in runs.values() for r in rs}) == 1, "the checks changed a number"
    median = {mode: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s")} for mode, rs in runs.items()}
    overhead = {k: median["on"][k] / median["off"][k] - 1 for k in ("wall_s", "cpu_s")}
    commit = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    record = {"benchmark": "part_checks", "label": args.label, "commit": commit,
              "study": f"cv_variance letter tree sizes={SIZES} replicates={REPLICATES} n_jobs=1 backend=sequential",
              "repeats": args.repeats, "runs": runs, "median": median, "overhead": overhead,
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "python": sys.version.split()[0], **machine()}
    print(json.dumps({"label": args.label, "median": median, "overhead": overhead}))
    out = ROOT / "results" / "benchmarks" / "part_checks.jsonl"
    with out.open("a") as fh:
        fh.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
