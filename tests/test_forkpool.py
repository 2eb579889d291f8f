"""Forked worker processes (runner.backend=fork, and auto on Linux): choice, tasks, deaths, Ctrl-C."""
import logging
import os
import signal
import sys
import tempfile
import threading
import time

import pandas as pd
import pytest

from simstudy.engine.backends import fork_pool as forkpool
from simstudy.engine.config import RunnerConfig, validate_runner
from simstudy.engine.runner import run_chunks
from simstudy.errors import ConfigError, WorkerLost

pytestmark = pytest.mark.skipif(not forkpool.fork_available(), reason="fork workers: Linux only")


@pytest.fixture
def no_pool():
    """Each test starts and ends without a kept pool."""
    forkpool.kill_pool()
    yield
    forkpool.kill_pool()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a killed child not yet reaped is a zombie
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_auto_forks_only_from_a_single_thread(no_pool, monkeypatch):
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="a-notebook-thread")
    other.start()
    try:
        assert "a-notebook-thread" in forkpool.other_threads()
        assert forkpool.resolve_backend("auto") == "loky"  # a notebook kernel runs several threads
    finally:
        release.set()
        other.join()
    monkeypatch.setattr(forkpool, "other_threads", lambda: [])  # other tests may have left threads behind
    assert forkpool.resolve_backend("auto") == "fork"
    for name in ("loky", "fork", "threading", "sequential", "dask"):
        assert forkpool.resolve_backend(name) == name


def test_a_kept_pool_is_reused_while_it_is_large_enough(no_pool):
    pool = forkpool.get_pool(2)
    assert forkpool.get_pool(1) is pool and forkpool.get_pool(2) is pool
    assert forkpool.resolve_backend("auto", 2) == "fork"
    bigger = forkpool.get_pool(3)
    assert bigger is not pool and bigger.size == 3 and not pool.usable


def test_tasks_run_in_other_processes_and_closures_travel_by_value(no_pool):
    offset = 1000  # a closure over a local: cloudpickle sends it by value, as loky does

    def task(x, scale):
        return os.getpid(), x * scale + offset

    pool = forkpool.get_pool(2)
    out = list(pool.results(task, range(6), 10))
    assert sorted(v for _, v in out) == [1000, 1010, 1020, 1030, 1040, 1050]
    assert {pid for pid, _ in out} <= set(pool.pids()) and os.getpid() not in {pid for pid, _ in out}


def _worker_state(_):
    return (signal.getsignal(signal.SIGINT) == signal.SIG_IGN, len(logging.getLogger().handlers),
            logging.getLogger().level)


def test_a_forked_worker_ignores_ctrl_c_and_drops_the_logging_handlers(no_pool):
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stdout)
    root.addHandler(handler)
    try:
        pool = forkpool.get_pool(2)
    finally:
        root.removeHandler(handler)
    for pid in pool.pids():
        os.kill(pid, signal.SIGINT)  # as a Ctrl-C at the terminal reaches the whole process group
    time.sleep(0.2)
    assert all(_alive(pid) for pid in pool.pids())
    assert set(pool.results(_worker_state, range(4))) == {(True, 0, logging.WARNING)}


def _exit_with(_, code):
    os._exit(code)


def test_a_worker_that_dies_is_reported_and_the_pool_replaced(no_pool):
    pool = forkpool.get_pool(2)
    with pytest.raises(WorkerLost, match=r"a worker process died \(exit code 3\) before 'a'"):
        list(pool.results(_exit_with, ["a"], 3))
    assert not pool.usable
    fresh = forkpool.get_pool(2)
    assert fresh is not pool and fresh.usable
    assert list(fresh.results(abs, [-4])) == [4]


def test_run_chunks_says_which_chunk_was_lost_and_how_to_resume(no_pool):
    def chunk_fn(chunk):
        if chunk.start == 4:
            os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer would
        return pd.DataFrame({"replicate": list(range(chunk.start, chunk.stop))})

    with pytest.raises(WorkerLost) as caught:
        run_chunks(chunk_fn, [8], RunnerConfig(chunk_size=2, n_jobs=2, backend="fork", progress=False))
    message = str(caught.value)
    assert "killed by signal 9, SIGKILL: often the system out of memory" in message
    assert "of condition 0" in message and "run the same command again to resume" in message
    assert "runner.n_jobs" in message
    report = run_chunks(lambda c: pd.DataFrame({"replicate": list(range(c.start, c.stop))}), [8],
                        RunnerConfig(chunk_size=2, n_jobs=2, backend="fork", progress=False))  # a new pool
    assert report.backend == "fork" and list(report.records["replicate"]) == list(range(8))


def test_a_kept_pool_is_the_one_the_next_run_uses(no_pool):
    pool = forkpool.get_pool(2)
    report = run_chunks(lambda c: pd.DataFrame({"pid": [os.getpid()] * c.size}), [6],
                        RunnerConfig(chunk_size=1, n_jobs=2, backend="auto", progress=False))
    assert forkpool.current_pool() is pool and set(report.records["pid"]) <= set(pool.pids())


def test_fork_is_refused_where_it_does_not_exist(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(ConfigError, match=r"runner.backend='fork' is invalid here: .*Linux only. Use "
                                          r"runner.backend=auto or loky"):
        validate_runner(RunnerConfig(backend="fork"))
    validate_runner(RunnerConfig(backend="auto"))  # auto falls back to loky there
    assert forkpool.resolve_backend("auto") == "loky"


def test_a_single_chunk_runs_in_a_kept_forked_worker_unless_n_jobs_is_1(no_pool):
    """A run of one chunk uses a pool kept from an earlier run (a sweep's next job; this process
    loads the report meanwhile) and forks none of its own; runner.n_jobs=1 keeps everything in
    this process, as asked."""
    def pid_chunk(c):
        return pd.DataFrame({"pid": [os.getpid()] * c.size})

    report = run_chunks(pid_chunk, [5], RunnerConfig(chunk_size=10, n_jobs=-1, backend="fork", progress=False))
    assert set(report.records["pid"]) == {os.getpid()} and forkpool.current_pool() is None
    (worker,) = forkpool.get_pool(1).pids()
    calls = []
    report = run_chunks(pid_chunk, [5],
                        RunnerConfig(chunk_size=10, n_jobs=-1, backend="fork", progress=False),
                        while_computing=lambda: calls.append(1))
    assert set(report.records["pid"]) == {worker} and calls == [1]
    report = run_chunks(pid_chunk, [5],
                        RunnerConfig(chunk_size=10, n_jobs=1, backend="fork", progress=False),
                        while_computing=lambda: calls.append(1))
    assert set(report.records["pid"]) == {os.getpid()} and calls == [1]


def test_results_pickle_the_call_once_and_keep_few_tasks_in_flight(no_pool, monkeypatch, tmp_path):
    """A run's worker object (megabytes) is pickled once per call, not once per chunk, and only
    twice the workers' tasks wait in the pool: all of them at once held every payload in memory."""
    import cloudpickle

    pool = forkpool.get_pool(2)
    dumps, outstanding, peak = [], set(), [0]
    real_dump, real_submit = cloudpickle.dump, pool._executor.submit

    def counting_dump(obj, fh, *a, **k):
        dumps.append(1)
        return real_dump(obj, fh, *a, **k)

    def tracking_submit(fn, *args):
        future = real_submit(fn, *args)
        outstanding.add(future)
        future.add_done_callback(outstanding.discard)
        peak[0] = max(peak[0], len(outstanding))
        return future

    monkeypatch.setattr(cloudpickle, "dump", counting_dump)
    monkeypatch.setattr(pool._executor, "submit", tracking_submit)
    big = list(range(200_000))  # travels with the function, once

    def task(x, scale):
        return x * scale + len(big)

    # a temporary folder of the test's own: other processes' task files (a parallel test worker's) come and go in /tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert sorted(pool.results(task, range(40), 2)) == [2 * x + 200_000 for x in range(40)]
    assert dumps == [1] and 1 <= peak[0] <= 4
    assert not list(tmp_path.glob("simstudy-task-*"))  # the call's file is gone
