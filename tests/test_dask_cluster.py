"""A real dask cluster on this machine (a `dask scheduler` and two `dask worker` processes) losing a
worker or its scheduler mid-run: the records stay those of a single-machine run, and nothing is lost."""
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from conftest import ROOT  # noqa: E402

DASK = str(Path(sys.executable).parent / "dask")
STUDY = ["study=cv_variance", "population=logistic", "learner=tree", "study.sizes=[40]", "study.replicates=40",
         "study.seed=5", "runner.chunk_size=1", "runner.progress=false"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(n, timeout=60)


@contextmanager
def dask_cluster(tmp_path):
    """A scheduler and two one-thread workers (no nanny: a killed worker stays dead), all stopped after."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = open(tmp_path / "dask.log", "w")
    scheduler = subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                 stdout=log, stderr=log, cwd=ROOT)
    workers = [subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-nanny",
                                 "--no-dashboard", "--host", "127.0.0.1"], stdout=log, stderr=log, cwd=ROOT)
               for _ in range(2)]
    try:
        _wait_for_workers(address, 2)
        yield address, scheduler, workers
    finally:
        for proc in [*workers, scheduler]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        log.close()


def _cli(*args):
    return subprocess.Popen([sys.executable, "-m", "simstudy.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _records(out):
    return pd.read_parquet(out / "replicates.parquet")


def _same_records(a, b):
    cols = [c for c in a.columns if c not in ("fold_means", "fold_true_errors")]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    np.testing.assert_array_equal(np.stack(a.fold_means), np.stack(b.fold_means))


def _wait_for_shards(out, proc, count):
    shards = out / "shards" / "replicates"
    deadline = time.time() + 120
    while len(list(shards.glob("*.json"))) < count:
        assert proc.poll() is None, f"the run ended before it could be interrupted: {proc.stderr.read()}"
        assert time.time() < deadline, "no shard appeared"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    proc = _cli(*STUDY, "runner=sequential", f"hydra.run.dir={out}")
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    return _records(out)


def test_a_worker_killed_mid_run_loses_nothing(tmp_path, reference):
    out = tmp_path / "run"
    with dask_cluster(tmp_path) as (address, _, workers):
        proc = _cli(*STUDY, "runner=dask", f"runner.scheduler_address={address}", f"hydra.run.dir={out}")
        _wait_for_shards(out, proc, 2)
        os.kill(workers[0].pid, signal.SIGKILL)  # its running and queued chunks go to the other worker
        assert len(list((out / "shards" / "replicates").glob("*.json"))) < 40, "the run ended before the kill"
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    _same_records(reference, _records(out))
    assert len(list((out / "shards" / "replicates").glob("*.parquet"))) == 40  # each chunk stored once


@pytest.mark.slow
def test_a_lost_scheduler_stops_the_run_cleanly_and_it_resumes(tmp_path, reference):
    out = tmp_path / "run"
    with dask_cluster(tmp_path) as (address, scheduler, _):
        proc = _cli(*STUDY, "runner=dask", f"runner.scheduler_address={address}", f"hydra.run.dir={out}")
        _wait_for_shards(out, proc, 2)
        scheduler.send_signal(signal.SIGKILL)
        start = time.time()
        assert proc.wait(timeout=120) != 0
        stderr = proc.stderr.read()
    assert time.time() - start < 60, "the run hung after losing its scheduler"
    assert "scheduler" in stderr and "Traceback" not in stderr, stderr
    kept = len(list((out / "shards" / "replicates").glob("*.json")))
    assert 2 <= kept < 40
    proc = _cli(*STUDY, "runner=sequential", f"hydra.run.dir={out}")
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    _same_records(reference, _records(out))
