"""Long-run guarantees: resume after SIGKILL, corrupted shards, failures, warnings, backends."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from simstudy.errors import FailureRateExceeded, RunDirectoryError

from conftest import ROOT, run_config as run

BASE = ["study.sizes=[20,40,80]", "study.replicates=300", "runner.chunk_size=15", "runner.n_jobs=2",
        "runner.progress=false"]


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "simstudy.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _records(run_dir):
    return pd.read_parquet(run_dir / "replicates.parquet")


def _assert_same_records(a, b):
    cols = [c for c in a.columns if c not in ("fold_means", "fold_true_errors")]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    np.testing.assert_array_equal(np.stack(a.fold_means), np.stack(b.fold_means))


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    proc = _cli(*BASE, "runner.chunk_size=300", f"hydra.run.dir={out}")
    assert proc.wait(timeout=600) == 0, proc.stderr.read()
    return out


def test_sigkill_then_resume_gives_identical_results(tmp_path, reference_run):
    out = tmp_path / "run"
    proc = _cli(*BASE, f"hydra.run.dir={out}", start_new_session=True)
    shards = out / "shards" / "replicates"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(shards.glob("*.json"))) < 6:
        assert proc.poll() is None, "the run finished before it could be interrupted"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the run and its loky workers die at once
    proc.wait()
    done_before = len(list(shards.glob("*.json")))
    assert 6 <= done_before < 60 and not (out / "replicates.parquet").exists()
    proc = _cli(*BASE, f"hydra.run.dir={out}")
    assert proc.wait(timeout=600) == 0, proc.stderr.read()
    log = (out / "cli.log").read_text()
    assert "resuming" in log
    _assert_same_records(_records(reference_run), _records(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["resumed_chunks"] >= done_before and manifest["computed_chunks"] <= 60 - done_before
    assert all(len(s["sha256"]) == 64 for s in manifest["shards"])


def test_corrupted_shard_is_detected_and_recomputed(tmp_path, reference_run):
    out = tmp_path / "run"
    proc = _cli(*BASE, f"hydra.run.dir={out}")
    assert proc.wait(timeout=600) == 0
    victim = sorted((out / "shards" / "replicates").glob("*.parquet"))[3]
    victim.write_bytes(victim.read_bytes()[:200])  # truncated
    proc = _cli(*BASE, f"hydra.run.dir={out}")
    assert proc.wait(timeout=600) == 0
    assert f"shard {victim} is invalid: checksum mismatch" in (out / "cli.log").read_text()
    _assert_same_records(_records(reference_run), _records(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["computed_chunks"] == 1


def test_different_config_is_refused_unless_overwrite(compose_config, tmp_path):
    cfg = compose_config("experiment=debug")
    run(cfg, tmp_path)
    with pytest.raises(RunDirectoryError, match="different configuration.*runner.overwrite=true"):
        run(compose_config("experiment=debug", "study.seed=99"), tmp_path)
    result = run(compose_config("experiment=debug", "study.seed=99", "runner.overwrite=true"), tmp_path)
    assert len(result.records) == 120
    # a different n_jobs or chunk size is the same study: it resumes
    run(compose_config("experiment=debug", "study.seed=99", "runner.chunk_size=7"), tmp_path)


def test_failures_are_recorded_and_counted(compose_config, tmp_path):
    cfg = compose_config("experiment=debug", "study.sizes=[20]", "study.replicates=80",
                         "learner.estimator._target_=flaky_learners.FlakyTree", "runner.max_failure_rate=1.0")
    result = run(cfg, tmp_path)
    failed = result.records[result.records.error != ""]
    assert 10 < len(failed) < 50 and failed.error.str.startswith("RuntimeError: flaky fit").all()
    assert len(result.records) == 80  # failed replicates are kept, not dropped
    assert result.summary.loc[0, "failed"] == len(failed) and result.summary.loc[0, "replicates"] == 80 - len(failed)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["replicates_failed"] == len(failed)
    sample = manifest["failures_sample"][0]
    assert {"n", "replicate", "condition_key", "error"} <= set(sample)


def test_failure_rate_abort_names_a_seed_and_how_to_reproduce(compose_config, tmp_path):
    cfg = compose_config("experiment=debug", "study.sizes=[20]", "study.replicates=80",
                         "learner.estimator._target_=flaky_learners.FlakyTree", "runner.max_failure_rate=0.1")
    with pytest.raises(FailureRateExceeded) as info:
        run(cfg, tmp_path / "abort")
    message = str(info.value)
    assert "runner.max_failure_rate=0.1" in message and "RuntimeError: flaky fit" in message
    replicate = int(message.split("runner.only_replicate=")[1].split()[0])
    # the hint works: that replicate alone fails, with runner.on_error=raise
    one = compose_config("experiment=debug", "study.sizes=[20]", "study.replicates=80",
                         "learner.estimator._target_=flaky_learners.FlakyTree",
                         f"runner.only_replicate={replicate}", "runner.on_error=raise")
    with pytest.raises(RuntimeError, match="flaky fit"):
        run(one, tmp_path / "one")


def test_warnings_are_counted_not_printed(compose_config, tmp_path, capsys):
    cfg = compose_config("experiment=debug", "study.sizes=[20]", "study.replicates=30",
                         "learner.estimator._target_=flaky_learners.WarningTree")
    run(cfg, tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["warnings"] == {"UserWarning: this tree always warns": 30 * 10}
    assert "always warns" not in capsys.readouterr().err


@pytest.mark.slow
def test_backends_give_identical_numbers(compose_config, tmp_path):
    """loky, fork, threading and a real dask LocalCluster (2 workers on loopback) agree exactly."""
    common = ["study.sizes=[20,40]", "study.replicates=60", "runner.chunk_size=13", "runner.progress=false"]
    results = {}
    for backend in ("loky", "fork", "threading", "dask"):
        cfg = compose_config(*common, f"runner.backend={backend}", "runner.n_jobs=2")
        results[backend] = run(cfg, tmp_path / backend).records
    for backend in ("fork", "threading", "dask"):
        _assert_same_records(results["loky"], results[backend])


@pytest.mark.parametrize("launcher", ["basic", "local"])
def test_multirun_sweep_and_collect(tmp_path, launcher):
    sweep = tmp_path / "sweep"
    extra = ["sweep=local"] if launcher == "local" else []
    proc = subprocess.run([sys.executable, "-m", "simstudy.cli", "-m", *extra, "population=gaussian_folds",
                           "population.rho=0,0.5", "study.sizes=[20,40]", "study.replicates=300",
                           "runner.n_jobs=1", "runner.progress=false", f"hydra.sweep.dir={sweep}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-c", "from simstudy.cli import collect_main; collect_main()", str(sweep)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = pd.read_csv(sweep / "collected_summary.csv")
    assert sorted(summary["population.rho"].unique()) == [0.0, 0.5]
    assert len(summary) == 4 and (summary.mu_source == "exact").all()
    # rho is estimated per run: about 0 and about 0.5 (delta-method 4-sigma band)
    for rho, g in summary.groupby("population.rho"):
        assert np.all(np.abs(g.rho - rho) < 4 * g.rho_se + 0.02)
    tests = pd.read_csv(sweep / "collected_tests.csv")
    assert {"population.rho", "rho_hat", "rejection_rate"} <= set(tests.columns)
    assert (sweep / "collected_figures" / "rho_vs_n.png").is_file()
