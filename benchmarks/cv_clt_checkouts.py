"""Bayle et al.'s study end to end in this checkout and in another, alternately, on the same machine.

Usage (from the project root):

    git worktree add ../old efc9dca
    python benchmarks/cv_clt_checkouts.py --against ../old
    python benchmarks/cv_clt_checkouts.py --against ../old --replicates 200 --nested 50 --repeats 3

Absolute times depend on the hardware, so whether a change of speed comes from the code or from
the machine is told by running both checkouts on one machine. Each repeat runs the ``simstudy``
command of each checkout (``experiment=cv_clt`` on Letter at all six sizes, ``--replicates`` per
size, nested CV on the first ``--nested``) as a fresh process into a temporary directory, this
checkout first, then the other; the other checkout's command is the ``simstudy`` entry point its
own ``pyproject.toml`` names, run with its code on ``PYTHONPATH``. One warm-up run of each (at four
replicates) fills numba's cache first. The record says whether the two runs computed the same
numbers (every numeric column of the records equal, NaN where NaN); it is appended to
``results/benchmarks/cv_clt_checkouts.jsonl`` with the machine, both commits and the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from end_to_end import Timed, letter_path
from machine import machine

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "results" / "benchmarks" / "cv_clt_checkouts.jsonl"


def entry_point(checkout: Path) -> list[str]:
    """The command that runs ``checkout``'s ``simstudy`` entry point with this Python."""
    # the [project.scripts] line `simstudy = "module:function"` (tomllib needs Python 3.11)
    entry = re.search(r'^simstudy\s*=\s*"([\w.]+):(\w+)"', (checkout / "pyproject.toml").read_text(), re.M)
    if entry is None:
        raise SystemExit(f"{checkout}/pyproject.toml names no `simstudy` entry point under [project.scripts].")
    module, function = entry.groups()
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"]


def commit(checkout: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def run(checkout: Path, out: Path, replicates: int, nested: int) -> Timed:
    """One end-to-end run of ``checkout``'s study into ``out`` (its code first on ``PYTHONPATH``)."""
    args = ["experiment=cv_clt", f"population.path={letter_path()}", "runner.n_jobs=2",
            f"study.replicates={replicates}", f"study.nested_cv_replicates={nested}", f"hydra.run.dir={out}"]
    return Timed(entry_point(checkout) + args, cwd=checkout, code=checkout)


def same_numbers(a: Path, b: Path) -> bool:
    """Every numeric column of the two runs' records equal (arrays element by element, NaN = NaN)."""
    x, y = pd.read_parquet(a / "replicates.parquet"), pd.read_parquet(b / "replicates.parquet")
    if x.shape != y.shape or list(x.columns) != list(y.columns):
        return False
    for column in x.columns:
        first = x[column].iloc[0] if len(x) else None
        if isinstance(first, (np.ndarray, list)):            # per-replicate arrays (fold means, 5x2, ...)
            pairs = zip(x[column].to_numpy(), y[column].to_numpy())
            if not all(np.array_equal(np.asarray(u, float), np.asarray(v, float), equal_nan=True) for u, v in pairs):
                return False
        elif pd.api.types.is_numeric_dtype(x[column]):
            if not np.array_equal(x[column].to_numpy(float), y[column].to_numpy(float), equal_nan=True):
                return False
        elif not x[column].astype(str).equals(y[column].astype(str)):  # labels (categorical or text)
            return False
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the other checkout (a git worktree)")
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--nested", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if not (Path(args.against) / "pyproject.toml").is_file():
        parser.error(f"--against {args.against!r} is not a checkout of simstudy (no pyproject.toml there); "
                     "make one with: git worktree add ../old COMMIT")
    if min(args.replicates, args.repeats) < 1 or args.nested < 0:
        parser.error("--replicates and --repeats must be at least 1 and --nested at least 0")
    checkouts = {"this": ROOT, "against": Path(args.against).resolve()}
    seconds: dict[str, list[float]] = {tag: [] for tag in checkouts}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="simstudy-checkouts-") as tmp:
        for tag, checkout in checkouts.items():                 # numba's cache, both checkouts
            run(checkout, Path(tmp) / f"warmup_{tag}", 4, 1)
        for repeat in range(args.repeats):
            for tag, checkout in checkouts.items():
                timed = run(checkout, Path(tmp) / f"{tag}_{repeat}", args.replicates, args.nested)
                seconds[tag].append(timed.seconds)
                print(f"{tag} ({commit(checkout)}), repeat {repeat + 1}: {timed.seconds:.1f} s", flush=True)
        identical = same_numbers(Path(tmp) / "this_0", Path(tmp) / "against_0")
    record = {"benchmark": "cv_clt_checkouts", "replicates": args.replicates, "nested_cv_replicates": args.nested,
              "repeats": args.repeats, **{f"commit_{tag}": commit(c) for tag, c in checkouts.items()},
              **{f"seconds_{tag}": s for tag, s in seconds.items()},
              **{f"median_s_{tag}": statistics.median(s) for tag, s in seconds.items()},
              "ratio_this_over_against": statistics.median(seconds["this"]) / statistics.median(seconds["against"]),
              "same_numbers": identical, **machine(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "load_average_before": list(load_before), "load_average_after": list(os.getloadavg())}
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUTPUT, "a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(f"median: this {record['median_s_this']:.1f} s, against {record['median_s_against']:.1f} s "
          f"(ratio {record['ratio_this_over_against']:.3f}); same numbers: {identical}")


if __name__ == "__main__":
    main()
