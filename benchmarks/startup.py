"""Fixed cost of a simstudy run: imports, worker start-up and loading the compiled kernels.

Usage (from the project root, with ../shared/data beside it):

    python benchmarks/startup.py                 # 5 repetitions of each command
    python benchmarks/startup.py --repeats 3

Each command is a whole ``simstudy`` run of one tiny chunk, started as a new process (numba's
cache warm: the first repetition is discarded if it had to compile). Reported per command,
as medians: ``first_result_s``, from the launch to the moment the first chunk's shard is on
disk (imports, configuration, data, worker start-up, kernel loading, the tiny chunk itself);
``total_s``, the whole process including reports, figures and exit. The floor is what any
Python program doing the same job pays before its first line of work: the interpreter with
Hydra and scikit-learn imported. Results are appended to ``results/benchmarks/startup.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
LETTER = ROOT.parent / "shared" / "data" / "letter-recognition.data"

#: What a run imports in its main process: Hydra, pandas, numba, scikit-learn (to validate the
#: estimator) and matplotlib (figures). Timed as a bare interpreter doing only that.
IMPORTS = "import hydra, pandas, numba, sklearn.tree, matplotlib.pyplot"

COMMANDS = {
    "floor: python -c 'import hydra, sklearn.tree'": None,
    f"imports of a run: python -c '{IMPORTS}'": IMPORTS,
    "cv_variance, Letter tree, 2 workers": ["experiment=table2_letter", f"population.path={LETTER}",
                                            "study.sizes=[20]", "study.replicates=10", "study.truth=false"],
    "cv_variance, Letter tree, in-process": ["experiment=table2_letter", f"population.path={LETTER}",
                                             "study.sizes=[20]", "study.replicates=10", "study.truth=false",
                                             "runner.n_jobs=1"],
    "nedelko_fisher, 2 workers": ["study=nedelko_fisher", "study.sample_size=[20]", "study.bayes_error=[0.1]",
                                  "study.replicates=100", "study.rhat_calibration_replicates=100"],
}


def _time_command(overrides: list[str] | str | None) -> dict[str, float]:
    """Seconds to the first shard and in all for a run with ``overrides`` (a code string or None:
    a bare interpreter running that code, or the floor's imports)."""
    if overrides is None or isinstance(overrides, str):
        start = time.time()
        subprocess.run([sys.executable, "-c", overrides or "import hydra, sklearn.tree"], check=True)
        total = time.time() - start
        return {"first_result_s": total, "total_s": total}
    out = Path(tempfile.mkdtemp(prefix="simstudy-startup-"))
    try:
        start = time.time()
        proc = subprocess.run([sys.executable, "-m", "simstudy.cli", *overrides, f"hydra.run.dir={out}"],
                              capture_output=True, text=True)
        total = time.time() - start
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(overrides)} failed:\n{proc.stderr}")
        shards = [p.stat().st_mtime for p in (out / "shards").rglob("*.parquet")]
        return {"first_result_s": min(shards) - start, "total_s": total}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "startup.jsonl"))
    args = parser.parse_args(argv)
    rows = []
    for name, overrides in COMMANDS.items():
        _time_command(overrides)  # warm: numba cache, file system cache
        runs = [_time_command(overrides) for _ in range(args.repeats)]
        row = {"command": name, "overrides": overrides, "repeats": args.repeats,
               "first_result_s": [r["first_result_s"] for r in runs], "total_s": [r["total_s"] for r in runs],
               "median_first_result_s": statistics.median(r["first_result_s"] for r in runs),
               "median_total_s": statistics.median(r["total_s"] for r in runs),
               **machine(), "python": platform.python_version(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S")}
        rows.append(row)
        print(f"{name:45s} first result {row['median_first_result_s']:5.2f} s   total {row['median_total_s']:5.2f} s")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
