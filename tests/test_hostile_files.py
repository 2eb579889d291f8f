"""Hostile files (issue 32, items 4 and 9): run directories edited, truncated or deleted in part,
directories caught mid-write, sweeps holding runs of different configurations or unfinished
runs, and the audit's report folder.

What "fixed" means: the records read back (``load_run``, ``simstudy-report``) are verified
against the manifest (checksums, counts, the configuration), and a mismatch is a clear error
that says what differs and how to rebuild; a directory caught mid-write is detectably incomplete
and repaired by running the same study again; nothing a user owns is overwritten; no run of a
sweep is merged with a run of another configuration or dropped silently.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simstudy
from hostile_parts import clear_message, file_digest, records_without_arrays
from simstudy.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
#: 60 replicates in 3 chunks (3 shards).
SETTINGS = dict(population="logistic", learner="tree", sizes=[20], replicates=60, chunk_size=20, n_jobs=1,
                progress=False)


def run(out=None, **settings):
    return simstudy.run_study("cv_variance", out=out, **{**SETTINGS, **settings})


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run directory, and its result; tests work on copies."""
    out = tmp_path_factory.mktemp("finished") / "run"
    return out, run(out)


@pytest.fixture
def copy(finished, tmp_path):
    out, _ = finished
    target = tmp_path / "run"
    shutil.copytree(out, target)
    return target


def same_records(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(records_without_arrays(a), records_without_arrays(b))


def _rewrite_records(directory: Path, edit) -> None:
    path = directory / "replicates.parquet"
    edit(pd.read_parquet(path)).to_parquet(path, index=False)


def _refused_to_load(directory: Path, *words: str) -> str:
    with pytest.raises(UserError) as excinfo:
        simstudy.load_run(directory)
    return clear_message(excinfo.value, words=words)


def _shard_files(directory: Path) -> list[Path]:
    return sorted((directory / "shards" / "replicates").glob("*.parquet"))


# ----------------------------------------------------------------------------- records read back
def test_edited_value_in_the_records(copy):
    _rewrite_records(copy, lambda f: f.assign(mu_hat=f["mu_hat"].where(f["replicate"] != 3, 0.99)))
    _refused_to_load(copy, "replicates.parquet")


def test_deleted_rows_in_the_records(copy):
    _rewrite_records(copy, lambda f: f[f["replicate"] >= 3])
    _refused_to_load(copy, "replicates.parquet")


def test_report_command_on_edited_records(copy):
    _rewrite_records(copy, lambda f: f[f["replicate"] >= 3])
    summary = file_digest(copy / "summary.csv")
    proc = subprocess.run([str(BIN / "simstudy-report"), str(copy)], env=ENV, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr[-800:])
    assert "replicates.parquet" in proc.stderr
    assert file_digest(copy / "summary.csv") == summary


def test_manifest_count_disagrees_with_the_records(copy):
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["replicates_total"] = 999
    (copy / "manifest.json").write_text(json.dumps(manifest))
    _refused_to_load(copy)


def test_config_edited_after_the_run(copy):
    path = copy / "config.yaml"
    text = path.read_text()
    assert "seed: 2006" in text
    path.write_text(text.replace("seed: 2006", "seed: 7"))
    try:
        loaded = simstudy.load_run(copy)
    except UserError as exc:
        clear_message(exc, words=("seed",))
    else:
        assert loaded.study.config.seed == 2006, "records of seed 2006 reported as seed 7"


def test_missing_manifest_is_an_incomplete_run(copy):
    (copy / "manifest.json").unlink()
    _refused_to_load(copy)


@pytest.mark.parametrize("damage", ["truncated records", "no records", "garbage manifest", "empty config"])
def test_damaged_files_refused_with_what_to_do(copy, damage):
    if damage == "truncated records":
        data = (copy / "replicates.parquet").read_bytes()
        (copy / "replicates.parquet").write_bytes(data[: len(data) // 2])
    elif damage == "no records":
        (copy / "replicates.parquet").unlink()
    elif damage == "garbage manifest":
        (copy / "manifest.json").write_text("{not json")
    else:
        (copy / "config.yaml").write_text("")
    _refused_to_load(copy)


# ----------------------------------------------------------------------------- re-running repairs
@pytest.mark.parametrize("damage", ["truncated records", "no records", "no shards", "edited shard", "truncated shard",
                                    "shard without sidecar", "temporary files"])
def test_running_again_repairs_the_directory(finished, copy, damage):
    """The same study into a damaged directory: whatever is missing or invalid is rebuilt (from
    valid shards, or recomputed), and the records are those of the original run."""
    _, original = finished
    shards = _shard_files(copy)
    if damage == "truncated records":
        data = (copy / "replicates.parquet").read_bytes()
        (copy / "replicates.parquet").write_bytes(data[:100])
    elif damage == "no records":
        (copy / "replicates.parquet").unlink()
    elif damage == "no shards":
        shutil.rmtree(copy / "shards")
    elif damage == "edited shard":
        frame = pd.read_parquet(shards[0])
        frame.loc[0, "mu_hat"] = 0.99
        frame.to_parquet(shards[0], index=False)
    elif damage == "truncated shard":
        shards[1].write_bytes(shards[1].read_bytes()[:50])
    elif damage == "shard without sidecar":
        shards[2].with_suffix(".json").unlink()
    else:
        (shards[0].parent / (shards[0].name + ".tmp999")).write_bytes(b"half a shard")
    again = run(copy)
    same_records(again.records, original.records)
    same_records(simstudy.load_run(copy).records, original.records)
    assert not list((copy / "shards").rglob("*.tmp*"))


def test_extension_caught_mid_write_is_detectably_incomplete(finished, copy, tmp_path):
    """The issue's example, rebuilt file by file: an extension to 120 replicates wrote its records
    and summary, then died before its headline and manifest. Until re-run, reading it is an error;
    the re-run repairs it to the records of a fresh run of 120."""
    extended = run(tmp_path / "extended", replicates=120)
    for name in ("replicates.parquet", "summary.csv", "tests.csv"):
        shutil.copy(tmp_path / "extended" / name, copy / name)
    _refused_to_load(copy)
    repaired = run(copy, replicates=120)
    same_records(repaired.records, extended.records)
    loaded = simstudy.load_run(copy)
    assert loaded.manifest["replicates_total"] == 120 and len(loaded.records) == 120


# ----------------------------------------------------------------------------- the run's own state
def test_unreadable_run_state(copy):
    (copy / "run_state.json").write_text("{")
    try:
        res = run(copy)
    except UserError as exc:
        clear_message(exc, words=("run_state.json",))
    else:
        assert res.manifest["resumed_chunks"] == 3


def test_deleted_run_state(copy, finished):
    (copy / "run_state.json").unlink()
    try:
        res = run(copy)
    except UserError as exc:
        clear_message(exc, words=("run_state.json",))
    else:
        same_records(res.records, finished[1].records)


# ----------------------------------------------------------------------------- sweeps
def _collect(sweep: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "simstudy-collect"), str(sweep)], env=ENV, capture_output=True, text=True,
                          timeout=300)


def test_collect_never_merges_runs_of_different_configurations(tmp_path):
    sweep = tmp_path / "sweep"
    run(sweep / "0", seed=1, replicates=20)
    run(sweep / "1", seed=2, replicates=20)
    proc = _collect(sweep)
    if proc.returncode == 2:  # refused, naming what differs
        assert "seed" in proc.stderr and "Traceback" not in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr[-800:]
    summary = pd.read_csv(sweep / "collected_summary.csv")
    varying = [c for c in summary.columns if "seed" in c]
    assert varying and summary[varying[0]].nunique() == 2, f"the runs are not told apart: {list(summary.columns)}"


def test_collect_never_drops_an_unfinished_run_silently(tmp_path):
    sweep = tmp_path / "sweep"
    run(sweep / "0", replicates=20)
    run(sweep / "1", replicates=20, seed=5)
    (sweep / "1" / "summary.csv").unlink()
    proc = _collect(sweep)
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr
    assert str(sweep / "1") in proc.stdout + proc.stderr, "the unfinished run is not mentioned"


def test_collected_figures_sort_by_n(tmp_path):
    sweep = tmp_path / "sweep"
    run(sweep / "0", replicates=20, sizes=[40, 20, 30])
    assert _collect(sweep).returncode == 0
    summary, tests = pd.read_csv(sweep / "collected_summary.csv"), pd.read_csv(sweep / "collected_tests.csv")
    from matplotlib.figure import Figure

    figures = simstudy.STUDIES["cv_variance"].load().collect_figures(summary, tests, [])
    for name, figure in figures.items():
        figure = figure if isinstance(figure, Figure) else figure()
        for axis in figure.axes:
            for line in axis.get_lines():
                x = np.asarray(line.get_xdata(), dtype=float)
                if set(x) >= {20.0, 30.0, 40.0}:
                    assert np.all(np.diff(x) > 0), f"{name}: n joined in the order {x.tolist()}"


def test_collect_refuses_a_sweep_with_a_damaged_summary(tmp_path):
    sweep = tmp_path / "sweep"
    run(sweep / "0", replicates=20)
    (sweep / "0" / "summary.csv").write_text("")
    proc = _collect(sweep)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "summary.csv" in proc.stderr


# ----------------------------------------------------------------------------- the audit's report folder
@pytest.fixture(scope="module")
def audit_data(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] + rng.standard_normal(60) > 0).astype(int)
    path = tmp_path_factory.mktemp("audit") / "small.csv"
    path.write_text("\n".join(",".join([str(label)] + [f"{v:.6f}" for v in row]) for label, row in zip(y, X)) + "\n")
    return X, y, path


AUDIT = dict(K=3, replicates=20, splits=1, nested_cv_replicates=20, n_jobs=1, progress=False)


@pytest.fixture
def thesis(tmp_path):
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "report.md").write_text("# My thesis\n")
    return folder


def test_audit_never_overwrites_a_foreign_report(audit_data, thesis):
    from simstudy.audit import audit

    X, y, _ = audit_data
    with pytest.raises(UserError) as excinfo:
        audit(X=X, y=y, out=thesis, **AUDIT)
    clear_message(excinfo.value, words=(str(thesis),))
    assert (thesis / "report.md").read_text() == "# My thesis\n"


def test_audit_command_never_overwrites_a_foreign_report(audit_data, thesis):
    _, _, path = audit_data
    proc = subprocess.run([str(BIN / "simstudy"), "audit", str(path), "-K", "3", "--replicates", "20", "--splits", "1",
                           "--nested-cv-replicates", "20", "--n-jobs", "1", "--no-progress", "--label-column", "first",
                           "-o", str(thesis)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr[-800:])
    assert (thesis / "report.md").read_text() == "# My thesis\n"


def test_audit_may_rewrite_its_own_report(audit_data, tmp_path):
    from simstudy.audit import audit

    X, y, _ = audit_data
    first = audit(X=X, y=y, out=tmp_path / "audit", **AUDIT)
    again = audit(X=X, y=y, out=tmp_path / "audit", **AUDIT)
    assert again.interval == first.interval
    assert (tmp_path / "audit" / "report.md").read_text().startswith("# CV audit")


def test_audit_command_with_an_ambiguous_class_column(audit_data, tmp_path):
    """Labels 0/1 first, real features last: 'auto' cannot tell; one paragraph naming the option."""
    _, _, path = audit_data
    proc = subprocess.run([str(BIN / "simstudy"), "audit", str(path), "-K", "3", "--replicates", "20", "--n-jobs", "1",
                           "--no-progress", "-o", str(tmp_path / "audit")], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr[-800:])
    assert "--label-column" in proc.stderr


def test_audit_with_an_ambiguous_class_column(audit_data):
    from simstudy.audit import audit

    _, _, path = audit_data
    with pytest.raises(UserError) as excinfo:
        audit(str(path), **AUDIT)
    clear_message(excinfo.value, "label_column")


# ----------------------------------------------------------------------------- StudyResult.write
def test_result_write_never_overwrites_foreign_files(finished, tmp_path):
    _, result = finished
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "summary.csv").write_text("my data\n")
    with pytest.raises(UserError) as excinfo:
        result.write(folder)
    clear_message(excinfo.value, words=(str(folder),))
    assert (folder / "summary.csv").read_text() == "my data\n"


def test_result_write_into_a_new_folder_gives_a_loadable_run(finished, tmp_path):
    _, result = finished
    result.write(tmp_path / "copy")
    assert (tmp_path / "copy" / "replicates.parquet").is_file() and (tmp_path / "copy" / "manifest.json").is_file()
