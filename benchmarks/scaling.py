"""The engine's cost per replicate as the work grows: 10^5, 10^6, 10^7 cheap replicates end to end.

Usage (from the project root):

    python benchmarks/scaling.py                          # 10^5 and 10^6 replicates
    nice -n 10 python benchmarks/scaling.py --sizes 10000000

Workload: ``cv_variance`` on ``gaussian_folds`` (CV residuals drawn directly, no learner: a
replicate costs microseconds, so whatever the engine spends around the replicates shows), one
condition (n=20, K=5), ``runner.chunk_size=2500``, two workers, written to a run directory. Each
size runs in a fresh process (its peak memory is its own), twice: the run itself, then the same
command again into the same directory, which finds every chunk in its shards and only collects
(loads and checks the shards, aggregates, writes the tables).

The engine's parts are timed in the main process by wrapping them: ``shard_save`` (each finished
chunk written and checksummed), ``shard_load`` (the shards found, checked and read),
``collect`` (the chunks put in (condition, replicate) order: cv_variance streams its records, so
this only lists the shard parts that hold them), ``aggregate`` (the study's tables, read from the
shards a condition and a few columns at a time) and ``write`` (records, written from the shards a
row group at a time, tables, figures, report and manifest). Each is recorded in seconds and in
microseconds per replicate: a part whose cost per replicate grows with the size grows faster
than the work. ``records`` is counted without loading them (``len`` of the stored records).
``peak_rss_mib``: the largest resident set of the main process over both passes (the collect
pass runs in the same process after the run); ``peak_rss_children_mib``: the largest peak
resident set (``VmHWM``) of any child process (the workers, the processes forked to draw the
figures), read from ``/proc`` every half second while the child lives (a forked child counts
the pages of the main process it maps from the fork on). ``ru_maxrss_children_mib`` is
``ru_maxrss`` of ``RUSAGE_CHILDREN``, kept to show why it is not a worker's figure: a child that
calls ``exec`` (the ``git`` of the manifest's environment) reports the high-water mark of the
memory it left, which after vfork is the main process's, so it repeats the main process's peak
so far. Records are appended to ``results/benchmarks/scaling.jsonl``.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "results" / "benchmarks" / "scaling.jsonl"
CHUNK_SIZE = 2500
PARTS = ("shard_save", "shard_load", "collect", "aggregate", "write")


def _timed(owner, name: str, part: str, spent: dict[str, float]) -> None:
    """Replace ``owner.name`` by a wrapper adding its time to ``spent[part]``."""
    original = getattr(owner, name)
    is_property = isinstance(original, property)
    inner = original.fget if is_property else original

    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[part] += time.perf_counter() - start

    setattr(owner, name, property(wrapper) if is_property else wrapper)


def _instrument() -> dict[str, float]:
    from simstudy.engine import chunks, execution, result, shards
    from simstudy.studies.resolve import resolve_study

    spent = {part: 0.0 for part in PARTS}
    _timed(shards.ShardStore, "save", "shard_save", spent)
    _timed(shards.ShardStore, "load", "shard_load", spent)
    _timed(chunks.RunReport, "records", "collect", spent)
    _timed(execution, "_ordered_records", "collect", spent)
    _timed(resolve_study("cv_variance"), "aggregate", "aggregate", spent)
    _timed(result.StudyResult, "write", "write", spent)
    return spent


class ChildPeaks(threading.Thread):
    """The largest ``VmHWM`` (peak resident set, MiB) of this process's children, sampled from ``/proc``."""

    def __init__(self, every: float = 0.5):
        super().__init__(daemon=True)
        self.every, self.peak, self.stopped = every, 0.0, threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            for pid in _children(os.getpid()):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:  # ended meanwhile
                    continue
                hwm = [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")]
                if hwm:
                    self.peak = max(self.peak, int(hwm[0]) / 1024)

    def stop(self) -> float:
        self.stopped.set()
        self.join()
        return round(self.peak, 1)


def _children(pid: int) -> list[int]:
    pids = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


def one_size(replicates: int, out: Path) -> dict:
    """Run and then collect ``replicates`` replicates in this process; the record of both."""
    import simstudy

    spent = _instrument()
    children = ChildPeaks()
    children.start()
    passes = []
    for label in ("run", "collect"):
        for part in PARTS:
            spent[part] = 0.0
        start, cpu = time.perf_counter(), time.process_time()
        res = simstudy.run_study("cv_variance", population="gaussian_folds", sizes=[20], K=5, replicates=replicates,
                                 seed=1, n_jobs=2, chunk_size=CHUNK_SIZE, progress=False, out=out)
        wall = time.perf_counter() - start
        compute = sum(c.get("worker_cpu_s", 0.0) for c in res.manifest["conditions"])
        passes.append({"pass": label, "wall_s": round(wall, 3), "main_cpu_s": round(time.process_time() - cpu, 3),
                       "workers_cpu_s": round(compute, 3), "records": int(len(res.phase_records[res.study.main_phase])),
                       "computed_chunks": res.manifest["computed_chunks"],
                       "resumed_chunks": res.manifest["resumed_chunks"],
                       **{f"{p}_s": round(spent[p], 3) for p in PARTS},
                       **{f"{p}_us_per_rep": round(1e6 * spent[p] / replicates, 3) for p in PARTS},
                       "engine_us_per_rep": round(1e6 * sum(spent.values()) / replicates, 3)})
        del res
    return {"replicates": replicates, "chunk_size": CHUNK_SIZE, "passes": passes,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "peak_rss_children_mib": children.stop(),
            "ru_maxrss_children_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "shards_mib": round(sum(f.stat().st_size for f in (out / "shards").rglob("*")) / 2 ** 20, 1)}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout.strip()
    except Exception:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated replicate counts")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a single size in this process (internal)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one, Path(args.out))))
        return
    commit = _commit()  # the code measured (commits made while a long size runs do not count)
    for size in (int(s) for s in args.sizes.split(",")):
        out = Path(tempfile.mkdtemp(prefix="simstudy-scaling-")) / "run"
        load_before = os.getloadavg()[0]
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", str(size), "--out", str(out)],
                                  capture_output=True, text=True, cwd=ROOT)
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)
        if proc.returncode != 0:
            raise SystemExit(f"{size} replicates failed:\n{proc.stderr[-3000:]}")
        record = {"workload": "scaling-gaussian_folds-cv_variance", "command": f"python benchmarks/scaling.py "
                  f"--sizes {size}", **json.loads(proc.stdout.strip().splitlines()[-1]),
                  "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
                  "cores": os.cpu_count(), **machine(), "python": platform.python_version(), "commit": commit,
                  "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
        RECORDS.parent.mkdir(parents=True, exist_ok=True)
        with open(RECORDS, "a") as fh:
            fh.write(json.dumps(record) + "\n")
        print(json.dumps(record))


if __name__ == "__main__":
    main()
