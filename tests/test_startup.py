"""Start-up: lazy imports in workers, the report loaded while the workers compute, the pace of a run."""
import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

from simstudy.engine.config import RunnerConfig
from simstudy.engine.runner import run_chunks
from simstudy.lazy import LazyModule
from simstudy.studies.base import Chunk

from conftest import LETTER_FILE, ROOT


def test_lazy_module_imports_on_first_attribute_access():
    code = ("import sys; from simstudy.lazy import LazyModule; m = LazyModule('fractions'); "
            "sys.modules.pop('fractions', None); before = 'fractions' in sys.modules; "
            "half = m.Fraction(1, 2); print(before, 'fractions' in sys.modules, half)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "1/2"]
    assert LazyModule("math").sqrt(4.0) == 2.0
    with pytest.raises(AttributeError):
        LazyModule("math").no_such_function


@pytest.mark.skipif(not LETTER_FILE.exists(), reason="shared Letter data not present")
def test_tree_worker_does_not_import_sklearn_scipy_stats_or_matplotlib(tmp_path):
    """A cv_variance worker with the numba tree unpickles and runs without scikit-learn,
    scipy.stats or matplotlib (each costs about a second of start-up per worker)."""
    from simstudy.cv.losses import zero_one
    from simstudy.learners.dispatch import build_learner
    from simstudy.populations import build_population
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(LETTER_FILE),
                            "positive": list("ABCDEFGHIJKLM")})
    from sklearn.tree import DecisionTreeClassifier

    learner = build_learner(DecisionTreeClassifier(), field_name="learner")  # a kernel holding the estimator
    worker = CVVarianceWorker(pop, learner, zero_one, make_conditions([20], 10, pop), 1, True)
    path = tmp_path / "worker.pkl"
    path.write_bytes(pickle.dumps(worker))
    code = ("import pickle, sys; from simstudy.engine.chunks import Chunk; w = pickle.load(open(sys.argv[1], 'rb')); "
            "rec = w(Chunk(0, 0, 3)); assert (rec['error'] == '').all(), rec['error'].tolist(); "
            "print(' '.join(m for m in ('sklearn', 'scipy.stats', 'matplotlib') if m in sys.modules) or 'none')")
    out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "none"
    assert worker.learner.template is not None                      # the main process keeps it
    assert pickle.loads(pickle.dumps(worker.learner)).describe() == worker.learner.describe()


def _chunk_id(chunk):
    return (chunk.condition, chunk.start)


@pytest.mark.parametrize("n_jobs, backend, expected", [(2, "loky", 1), (2, "fork", 1), (1, "loky", 0), (1, "fork", 0),
                                                       (2, "sequential", 0), (2, "threading", 0)])
def test_while_computing_runs_once_when_the_workers_compute(n_jobs, backend, expected):
    """The hook runs once, in this process, before the chunks are dispatched; never for a run
    in this process (it would compete with the computation)."""
    calls = []
    report = run_chunks(_chunk_id, [12],
                        RunnerConfig(chunk_size=2, n_jobs=n_jobs, backend=backend, progress=False),
                        while_computing=lambda: calls.append(os.getpid()))
    assert sorted(o.records for o in report.outputs) == [(0, s) for s in range(0, 12, 2)]
    assert calls == [os.getpid()] * expected


def test_report_prewarm_loads_the_report_libraries_in_a_thread():
    code = ("import sys; from simstudy.engine.backends.prewarm import start_prewarm, wait_for_prewarm; "
            "before = 'matplotlib.pyplot' in sys.modules; started = start_prewarm(); wait_for_prewarm(); "
            "print(before, started, 'matplotlib.pyplot' in sys.modules, 'simstudy.report.html' in sys.modules, "
            "start_prewarm())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True", "True", "False"]  # once loaded, nothing to do


def test_figures_are_the_same_with_the_report_prewarmed(tmp_path):
    """A run with two workers loads the report's libraries while its chunks run; its figures
    are byte for byte those of the same run in one process (which loads them afterwards)."""
    runs = {}
    for n_jobs in (1, 2):
        out = tmp_path / f"jobs{n_jobs}"
        proc = subprocess.run([sys.executable, "-m", "simstudy.cli", "experiment=debug", "study.sizes=[20,40]",
                               "study.replicates=40", "runner.chunk_size=15", f"runner.n_jobs={n_jobs}",
                               f"hydra.run.dir={out}"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs[n_jobs] = {p.name: p.read_bytes() for p in sorted((out / "figures").glob("*.png"))}
    assert runs[1] and runs[1] == runs[2]


def test_the_command_ends_without_teardown_and_leaves_no_worker_behind(tmp_path):
    """``simstudy`` exits with os._exit once the run is written (no interpreter teardown): the
    output is complete, the headline reaches a pipe, and no loky worker outlives the command."""
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "simstudy.cli", "experiment=debug", "study.sizes=[20,40]",
                             "study.replicates=40", "runner.chunk_size=15", "runner.n_jobs=2", f"hydra.run.dir={out}"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "done in" in stdout and (out / "headline.txt").read_text().strip().splitlines()[0] in stdout
    for name in ("replicates.parquet", "summary.csv", "report.html", "manifest.json", "cli.log"):
        assert (out / name).stat().st_size > 0, name
    assert "done in" in (out / "cli.log").read_text()                      # the log was flushed
    deadline = time.monotonic() + 10      # loky's resource tracker notices the closed pipe and exits
    while (left := subprocess.run(["ps", "-o", "pid=,args=", "-s", str(proc.pid)], capture_output=True,
                                  text=True).stdout.strip()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == "", left


def test_costliest_chunks_are_dispatched_first_and_the_records_do_not_change():
    """chunk_cost orders the dispatch (longest first, stable on ties); the records are the same."""
    orders: dict[str, list] = {"plain": [], "costly": []}
    reports = {}
    for kind, cost in (("plain", None), ("costly", lambda c: c.size * (10, 30, 20)[c.condition])):
        def fn(chunk, seen=orders[kind]):
            seen.append(_chunk_id(chunk))
            return _chunk_id(chunk)

        reports[kind] = run_chunks(fn, [4, 6, 2],
                                   RunnerConfig(chunk_size=2, n_jobs=1, backend="threading", progress=False),
                                   chunk_cost=cost)
    assert orders["plain"] == [(0, 0), (0, 2), (1, 0), (1, 2), (1, 4), (2, 0)]
    assert orders["costly"] == [(1, 0), (1, 2), (1, 4), (2, 0), (0, 0), (0, 2)]
    assert sorted(o.records for o in reports["costly"].outputs) == sorted(o.records for o in reports["plain"].outputs)


def test_chunk_cost_of_a_phase_is_replicates_times_sample_size():
    from types import SimpleNamespace

    from simstudy.engine.execution import _chunk_cost

    phase = SimpleNamespace(conditions=[SimpleNamespace(n=20), SimpleNamespace(n=2000)])
    cost = _chunk_cost(phase)
    assert cost(Chunk(0, 0, 250)) == 5000 and cost(Chunk(1, 0, 100)) == 200_000
    assert _chunk_cost(SimpleNamespace(conditions=[SimpleNamespace(n=20), SimpleNamespace(k=3)])) is None
    assert _chunk_cost(SimpleNamespace(conditions=[])) is None


def test_progress_eta_comes_from_the_chunks_costs(caplog):
    """With the costliest chunks first, the ETA weighs the work done by cost, not by replicates."""
    import logging

    from simstudy.engine.progress import LogProgress

    caplog.set_level(logging.INFO, logger="simstudy")
    progress = LogProgress(total=10, desc="run", enabled=True, total_work=100.0)
    progress.start -= 8.0                          # 8 s in: 2 of 10 replicates, but 80% of the work
    progress.update(2, work=80.0)
    assert "2/10 (20%)" in caplog.text and "ETA 2 s" in caplog.text
    plain = LogProgress(total=10, desc="plain", enabled=True)
    plain.start -= 8.0
    plain.update(2)                                # no costs: replicates are the work
    assert "ETA 32 s" in caplog.text


def test_progress_pace_starts_when_the_workers_are_ready(caplog):
    """Starting the workers before the first chunk does not count as computing time: the runner
    restarts the ETA's clock once the workers are up (``on_ready``)."""
    import logging

    from simstudy.engine.backends.streams import open_stream
    from simstudy.engine.progress import LogProgress

    caplog.set_level(logging.INFO, logger="simstudy")
    progress = LogProgress(total=10, desc="warm", enabled=True, total_work=100.0)
    progress.start -= 30.0                         # 30 s before the workers were up ...
    chunks = [Chunk(0, 0, 2)]
    stream, _ = open_stream("sequential", lambda c: c.size, chunks, 1, RunnerConfig(n_jobs=1, on_error="raise"),
                            on_ready=progress.restart_clock)
    outputs = list(stream)
    assert [o.records for o in outputs] == [2]
    progress.start -= 8.0                          # ... then 8 s computing 80% of the work
    progress.update(2, work=80.0)
    assert "ETA 2 s" in caplog.text
