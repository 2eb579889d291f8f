"""End-to-end workloads of ``benchmarks/run.py``: whole runs of the ``simstudy`` command (start-up,
workers, records, reports and figures included) against plain scikit-learn + joblib scripts.

- ``quick-letter``: the quick user study of issue 17, the default tree on Letter at n = 20, 400 and
  2000, 1,500 replicates each (``simstudy population=letter ...``), against a plain
  ``cross_val_score`` + joblib script doing the same 10-fold CVs, also run as a fresh process;
- ``cv_clt-full``: ``bash experiments/cv_clt.sh`` into a temporary directory (time only); the plain
  comparison is estimated from :mod:`plain_cv_clt` on a subset of replicates per size (the
  first quarter nested, as in the experiment), its time scaled to the full run;
- ``suite``: ``bash experiments/all.sh`` (every committed experiment) into a temporary directory,
  time only.

The commands run with this checkout's code (``PYTHONPATH`` = the project root, the ``simstudy``
script of the running Python's environment first on ``PATH``). Each child's peak resident memory
is recorded (the largest process).
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
POSITIVE = list("ABCDEFGHIJKLM")


def letter_path() -> Path:
    """shared/data/ beside the project or beside any ancestor (git worktrees)."""
    relative = Path("shared") / "data" / "letter-recognition.data"
    return next((p / relative for p in ROOT.parents if (p / relative).is_file()), ROOT.parent / relative)


def environment(code: Path = ROOT, **extra: str) -> dict[str, str]:
    """The code of ``code`` (this checkout by default) for child processes, with the environment's
    ``simstudy`` script on PATH."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = str(code) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["DATA"] = str(letter_path())
    return env


class Timed:
    """Wall time and peak resident memory (the largest process: the child or a descendant it
    waited for, e.g. a loky worker) of one child process."""

    def __init__(self, command: list[str], cwd: Path = ROOT, code: Path = ROOT, **env: str):
        self.command = command
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            start = time.perf_counter()
            child = subprocess.Popen(command, cwd=cwd, env=environment(code, **env), stdout=out, stderr=err,
                                     text=True)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            self.seconds = time.perf_counter() - start
            self.peak_mib = usage.ru_maxrss / 1024
            out.seek(0)
            err.seek(0)
            self.stdout, stderr = out.read(), err.read()
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({child.returncode}):\n{stderr[-3000:]}")


def _records_checksum(run_dir: Path, column: str) -> float:
    import pandas as pd

    records = pd.read_parquet(run_dir / "replicates.parquet")
    return float(records[column].sum())


# ----------------------------------------------------------------------------- quick-letter
QUICK_SIZES, QUICK_REPLICATES, QUICK_SEED = (20, 400, 2000), 1500, 2006


def quick_letter_command(out: Path, n_jobs: int, replicates: int = QUICK_REPLICATES) -> list[str]:
    sizes = "[" + ",".join(map(str, QUICK_SIZES)) + "]"
    return ["simstudy", "population=letter", f"population.path={letter_path()}", f"study.sizes={sizes}",
            f"study.replicates={replicates}", f"runner.n_jobs={n_jobs}", f"hydra.run.dir={out}"]


def quick_letter_simstudy(n_jobs: int, replicates: int = QUICK_REPLICATES) -> dict:
    with tempfile.TemporaryDirectory(prefix="simstudy-bench-") as tmp:
        run = Timed(quick_letter_command(Path(tmp) / "run", n_jobs, replicates))
        return {"seconds": run.seconds, "peak_mib": run.peak_mib,
                "checksum": _records_checksum(Path(tmp) / "run", "mu_hat")}


def quick_letter_plain(n_jobs: int) -> dict:
    """The plain script as a fresh process: ``python benchmarks/run.py --plain quick-letter``."""
    run = Timed([sys.executable, str(Path(__file__).with_name("run.py")), "--plain", "quick-letter",
                 "--n-jobs", str(n_jobs)])
    return {"seconds": run.seconds, "peak_mib": run.peak_mib, "checksum": json.loads(run.stdout.splitlines()[-1])}


def quick_letter_plain_script(n_jobs: int) -> float:
    """What a user writes without simstudy: per replicate a sample, 10 folds and cross_val_score."""
    from joblib import Parallel, delayed
    from sklearn.model_selection import PredefinedSplit, cross_val_score
    from sklearn.tree import DecisionTreeClassifier

    from simstudy.cv.splits import KFold
    from simstudy.populations import build_population
    from simstudy.rng import replicate_rng
    from simstudy.studies.cv_variance.study import make_conditions

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(letter_path()), "positive": POSITIVE})

    def one(cond, r):
        rng = replicate_rng(QUICK_SEED, cond.key, r)
        s = pop.sample(cond.n, rng)
        labels = KFold(10).labels(cond.n, rng)
        tree = DecisionTreeClassifier(random_state=int(rng.integers(0, 2**31 - 1)))
        return 1 - cross_val_score(tree, s.X, s.y, cv=PredefinedSplit(labels)).mean()

    conditions = make_conditions(list(QUICK_SIZES), 10, pop)
    values = Parallel(n_jobs=n_jobs, batch_size=16)(delayed(one)(c, r) for c in conditions
                                                    for r in range(QUICK_REPLICATES))
    return float(np.sum(values))


# ----------------------------------------------------------------------------- cv_clt-full
CV_CLT_SIZES, CV_CLT_REPLICATES, CV_CLT_NESTED = (100, 200, 400, 800, 1600, 3200), 2000, 500


#: Where the end-to-end workloads write their runs; None: a temporary directory, deleted
#: afterwards (``run.py --keep-outputs DIR`` sets it, e.g. to compare the records with results/).
KEEP_OUTPUTS: Path | None = None


@contextlib.contextmanager
def _workdir(name: str):
    """A directory for one workload's outputs: ``KEEP_OUTPUTS/name`` (kept) or a temporary one."""
    if KEEP_OUTPUTS is None:
        with tempfile.TemporaryDirectory(prefix="simstudy-bench-") as tmp:
            yield tmp
        return
    out = Path(KEEP_OUTPUTS) / name
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"--keep-outputs: {out} is not empty; choose another directory.")
    out.mkdir(parents=True, exist_ok=True)
    yield str(out)


def experiment_simstudy(script: str, extra: list[str] | None = None, name: str | None = None) -> dict:
    """``bash experiments/<script>`` with its results redirected into a temporary directory (or
    ``KEEP_OUTPUTS/name``, by default the script's name)."""
    with _workdir(name or Path(script).stem) as tmp:
        out = Path(tmp) / Path(script).stem
        run = Timed(["bash", str(ROOT / "experiments" / script), f"hydra.run.dir={out}", *(extra or [])])
        return {"seconds": run.seconds, "peak_mib": run.peak_mib, "checksum": _records_checksum(out, "estimate")}


def cv_clt_plain(n_jobs: int, per_size: int) -> dict:
    """:mod:`plain_cv_clt` on ``per_size`` replicates per size (the first quarter nested), scaled
    to the experiment's 2,000 replicates (500 nested) per size."""
    from joblib import Parallel, delayed

    from plain_cv_clt import replicate
    from simstudy.populations import build_population

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(letter_path()), "positive": POSITIVE})
    nested = max(1, per_size * CV_CLT_NESTED // CV_CLT_REPLICATES)
    start = time.perf_counter()
    values = Parallel(n_jobs=n_jobs)(delayed(replicate)(pop, n, r, r < nested) for n in CV_CLT_SIZES
                                     for r in range(per_size))
    seconds = time.perf_counter() - start
    return {"seconds": seconds * CV_CLT_REPLICATES / per_size, "measured_seconds": seconds,
            "fraction": per_size / CV_CLT_REPLICATES, "checksum": float(np.sum(values))}


# ----------------------------------------------------------------------------- suite
def suite_simstudy() -> dict:
    """``bash experiments/all.sh`` into a temporary results directory."""
    with _workdir("suite") as tmp:
        run = Timed(["bash", str(ROOT / "experiments" / "all.sh")], RESULTS=str(Path(tmp) / "results"))
        return {"seconds": run.seconds, "peak_mib": run.peak_mib, "checksum": float("nan"),
                "log": run.stdout.strip().splitlines()[-12:]}
