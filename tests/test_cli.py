"""End to end through the console scripts (subprocesses, as a user runs them)."""
import json
import subprocess
import sys

from pathlib import Path

import pandas as pd
import pytest

import simstudy
from conftest import ROOT


def _simstudy(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "simstudy.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_small_run_writes_the_contract(tmp_path):
    out = tmp_path / "run"
    proc = _simstudy("experiment=debug", "study.sizes=[20,40]", "study.replicates=40", "runner.n_jobs=2",
                     "runner.chunk_size=15", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    assert "simstudy: results in" in proc.stdout
    for name in ("config.yaml", "replicates.parquet", "summary.csv", "tests.csv", "table2.md", "summary.md",
                 "manifest.json", "figures/rho_vs_n.png", "figures/type1_vs_n.png", "figures/type1_vs_rho_hat.png"):
        assert (out / name).is_file(), name
    summary = pd.read_csv(out / "summary.csv")
    assert {"n", "K", "replicates", "mu", "theta", "rho", "rho_se"} <= set(summary.columns)
    assert list(summary.n) == [20, 40] and (summary.replicates == 40).all()
    tests = pd.read_csv(out / "tests.csv")
    assert {"n", "test", "rho_hat", "alpha", "rejection_rate", "ci_low", "ci_high"} <= set(tests.columns)
    assert len(tests) == 2 * 10
    assert len(pd.read_parquet(out / "replicates.parquet")) == 80
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["replicates_total"] == 80 and manifest["replicates_failed"] == 0
    assert manifest["environment"]["packages"]["scikit-learn"]
    env = manifest["environment"]                     # the checkout's commit and whether its code was modified
    assert env["git_commit"] is None or env["git_commit"].startswith(subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(simstudy.__file__).parent).stdout.strip())
    assert env["git_dirty"] in (True, False, None) and isinstance(env["git_modified"], list)

    # same config and seed, other n_jobs and chunking: identical numbers
    out2 = tmp_path / "run2"
    proc = _simstudy("experiment=debug", "study.sizes=[20,40]", "study.replicates=40", "runner.n_jobs=1",
                     "runner.chunk_size=40", f"hydra.run.dir={out2}")
    assert proc.returncode == 0, proc.stderr
    pd.testing.assert_frame_equal(summary, pd.read_csv(out2 / "summary.csv"))

    # re-aggregation from replicates.parquet gives the same tables
    proc = subprocess.run([sys.executable, "-c", "from simstudy.cli import report_main; report_main()", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pd.testing.assert_frame_equal(summary, pd.read_csv(out / "summary.csv"))


@pytest.mark.parametrize("override,message", [
    ("study.K=30", "study.sizes"),
    ("population=letter", "population.path"),
])
def test_bad_input_fails_fast_with_a_clear_message(tmp_path, override, message):
    extra = ["population.path=" + str(tmp_path / "missing.data")] if override == "population=letter" else []
    proc = _simstudy("experiment=debug", override, *extra, f"hydra.run.dir={tmp_path / 'bad'}")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "bad" / "replicates.parquet").exists()


def test_help_lists_groups():
    proc = _simstudy("--help")
    assert proc.returncode == 0
    for group in ("population", "learner", "study", "runner", "experiment"):
        assert group in proc.stdout
    assert "simstudy audit DATA" in proc.stdout and "simstudy audit --help" in proc.stdout


def test_nedelko_fisher_small_run(tmp_path):
    out = tmp_path / "fisher"
    proc = _simstudy("experiment=nedelko_fisher", "study.sample_size=10", "study.bayes_error=[0.1,0.3]",
                     "study.replicates=60", "study.bootstrap=5", "study.rhat_grid=[0.05,0.2,0.4]",
                     "study.rhat_calibration_replicates=100", "runner.n_jobs=1", "runner.progress=false",
                     f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert {"sample_size", "bayes_error", "estimator", "mean_estimate", "mean_true_risk", "mean_delta0"} <= set(summary.columns)
    assert len(summary) == 2 * 6 and (summary.replicates == 60).all()
    assert (out / "figures" / "fig3_N10.png").is_file() and (out / "rhat_bias.csv").is_file()
    # re-aggregation reproduces the table
    from simstudy.results import load_run
    again = load_run(out).summary
    pd.testing.assert_frame_equal(summary, again, check_dtype=False)


def test_nedelko_histogram_small_run(tmp_path):
    out = tmp_path / "hist"
    proc = _simstudy("experiment=nedelko_histogram", "study.cells=2", "study.sample_size=4", "study.K=2",
                     "study.grid_steps=2", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 3 * 10  # C(2 + 3, 3) = 10 distributions x 3 estimators
    assert (out / "figures" / "fig4_histogram.png").is_file()


def test_cold_start_is_announced(monkeypatch, tmp_path, caplog):
    import logging

    from simstudy.engine import runlog as engine

    monkeypatch.setattr(engine, "PACKAGE", tmp_path)  # a package without numba caches
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    with caplog.at_level(logging.INFO, logger="simstudy"):
        assert engine.note_cold_start() is True
    assert "compiling simstudy's numba kernels" in caplog.text
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "cart._grow-1.py311.nbi").write_bytes(b"")
    assert engine.note_cold_start() is False
