"""Calibrate the run budget (:mod:`simstudy.engine.budget`) against measured runs.

Runs a few representative small studies, each in a fresh process with ``n_jobs=1`` (so the
process's peak resident memory is the run's), and compares the wall time of ``run_study`` and
the peak resident memory with the budget's estimate for the same config (captured from the
engine's own call of :func:`~simstudy.engine.budget.check_budget`). Each record gives the ratio
measured / estimated; the constants of ``budget.py`` are set so that the ratios lie within a
factor of about 3 either way. Also recorded: the work the estimate counts (fits and training
cells), from which the time constants are fitted (``--fit`` prints the least-squares values).

    python benchmarks/budget_calibration.py            # append to results/benchmarks/budget_calibration.jsonl
    python benchmarks/budget_calibration.py --fit      # also print fitted FIT_SECONDS / CELL_SECONDS
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from end_to_end import letter_path  # noqa: E402
from machine import machine  # noqa: E402

#: name -> (study, keyword arguments of run_study); n_jobs=1 everywhere.
STUDIES = {
    "letter_tree_quick": ("cv_variance", dict(
        population={"kind": "tabular", "name": "letter", "path": "LETTER", "positive": list("ABCDEFGHIJKLM")},
        learner="tree", sizes=[20, 400], replicates=300)),
    "cv_clt_small": ("cv_clt", dict(population="logistic", sizes=[100, 200], replicates=20, nested_cv_replicates=5)),
    "gaussian_folds": ("rho_hat", dict(population="gaussian_folds", sizes=[20, 40], replicates=300)),
    "regression_ols": ("cv_variance", dict(population="gaussian_linear", learner="ols", loss="squared",
                                           sizes=[20, 80, 400], replicates=500, truth=True)),
}


def _child(name: str) -> None:
    """In a fresh process: run one study, print its wall time and the engine's estimate as JSON."""
    import simstudy
    from simstudy.engine import execution

    captured = {}
    original = execution.check_budget

    def capture(config, runner, n_features=1, announce=False, fits_per_replicate=None):
        budget = original(config, runner, n_features, announce, fits_per_replicate)
        K = getattr(config, "K", 10)
        captured.update(memory=budget.memory, seconds=budget.seconds, n_features=n_features, K=K,
                        sizes=list(config.sizes), replicates=config.replicates,
                        fits_per_replicate=K + 1 if fits_per_replicate is None else fits_per_replicate)
        return budget

    execution.check_budget = capture
    study, kwargs = STUDIES[name]
    kwargs = json.loads(json.dumps(kwargs).replace('"LETTER"', json.dumps(str(letter_path()))))
    start = time.perf_counter()
    simstudy.run_study(study, n_jobs=1, progress=False, **kwargs)
    captured["run_seconds"] = time.perf_counter() - start
    print(json.dumps(captured))


def measure(name: str) -> dict:
    """One study in a fresh process: wall time of run_study, peak RSS, the estimate and its inputs."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, __file__, "--child", name], cwd=ROOT, stdout=out, stderr=err,
                                 text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak resident memory
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{name} failed:\n{err.read()[-3000:]}")
        record = json.loads(out.read().splitlines()[-1])
    record["process_seconds"] = seconds
    record["peak_rss_bytes"] = usage.ru_maxrss * 1024.0
    fits, p = record["fits_per_replicate"], record["n_features"]
    record["fits"] = float(sum(record["replicates"] * fits for _ in record["sizes"]))
    record["cells"] = float(sum(record["replicates"] * fits * n * p for n in record["sizes"]))
    record["time_ratio"] = record["run_seconds"] / record["seconds"]
    record["memory_ratio"] = record["peak_rss_bytes"] / record["memory"]
    return record


def fit_constants(records: list[dict]) -> tuple[float, float]:
    """FIT_SECONDS and CELL_SECONDS minimising the squared log ratios measured / estimated (a grid)."""
    best = (np.inf, 0.0, 0.0)
    for fit in np.logspace(-6, -2, 81):
        for cell in np.concatenate([[0.0], np.logspace(-11, -6, 101)]):
            logs = [np.log(r["run_seconds"] / (fit * r["fits"] + cell * r["cells"])) for r in records]
            loss = float(np.sum(np.square(logs)))
            if loss < best[0]:
                best = (loss, float(fit), float(cell))
    return best[1], best[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--studies", default=",".join(STUDIES))
    parser.add_argument("--fit", action="store_true", help="print the fitted time constants")
    parser.add_argument("--no-record", action="store_true", help="print only; append nothing")
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    from simstudy.engine import budget

    from simstudy.studies.cv_clt.study import TRUTH_FITS

    constants = {k: getattr(budget, k) for k in ("FIT_SECONDS", "CELL_SECONDS", "PROCESS_BYTES", "RECORD_BYTES")}
    constants["cv_clt.TRUTH_FITS"] = TRUTH_FITS
    records = []
    for name in args.studies.split(","):
        record = {"benchmark": "budget_calibration", "study": name, "config": STUDIES[name][0], **measure(name)}
        records.append(record)
        print(json.dumps({k: record[k] for k in ("study", "run_seconds", "seconds", "time_ratio", "peak_rss_bytes",
                                                 "memory", "memory_ratio")}), flush=True)
    if args.fit:
        print("fitted FIT_SECONDS, CELL_SECONDS:", fit_constants(records))
    if args.no_record:
        return
    out = ROOT / "results" / "benchmarks" / "budget_calibration.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        for record in records:
            record.update(constants=constants, n_jobs=1, date=time.strftime("%Y-%m-%d %H:%M:%S"),
                          python=sys.version.split()[0], **machine())
            fh.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
