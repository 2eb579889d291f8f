"""A run directory's files: written atomically, verified on read, rebuilt from the shards; failed
replicates retried on resume (shard generations); the failure-rate rule's minimum; long records
written a row group at a time and array cells held compactly, the files unchanged."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy.cli.report import report_main
from simstudy.engine.shards import resolve_shards
from simstudy.errors import FailureRateExceeded, UserError
from simstudy.files import atomic_path, remove_temporary_files, sha256_file

SETTINGS = dict(population="logistic", learner="tree", sizes=[20], replicates=30, chunk_size=10, n_jobs=1,
                progress=False)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("files") / "run"
    return out, simstudy.run_study("cv_variance", out=out, **SETTINGS)


@pytest.fixture
def copy(finished, tmp_path):
    shutil.copytree(finished[0], tmp_path / "run")
    return tmp_path / "run"


def test_atomic_path_leaves_the_old_file_when_the_writer_fails(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(path) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    (tmp_path / "b.png.tmp123").write_text("left by a killed writer")
    assert [p.name for p in remove_temporary_files(tmp_path)] == ["b.png.tmp123"]


def test_the_manifest_lists_every_final_file_with_its_checksum(finished):
    out, result = finished
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest == result.manifest
    files = manifest["files"]
    assert {"replicates.parquet", "summary.csv", "config.yaml", "report.html", "headline.txt"} <= set(files)
    assert any(name.startswith("figures/") for name in files)
    assert files["replicates.parquet"]["rows"] == 30
    assert all(sha256_file(out / name) == entry["sha256"] for name, entry in files.items())
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


def test_a_write_stopped_midway_is_incomplete_until_rebuilt(finished, copy, monkeypatch):
    _, original = finished
    loaded = simstudy.load_run(copy)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("simstudy.report.latex.write_latex_tables", killed)
    with pytest.raises(KeyboardInterrupt):
        loaded.write(copy)
    monkeypatch.undo()
    assert json.loads((copy / "manifest.json").read_text())["status"] == "writing"
    with pytest.raises(UserError, match="incomplete"):
        simstudy.load_run(copy)
    rebuilt = simstudy.load_run(copy, rebuild=True)
    assert sha256_file(copy / "replicates.parquet") == original.manifest["files"]["replicates.parquet"]["sha256"]
    pd.testing.assert_frame_equal(rebuilt.summary, original.summary)
    assert simstudy.load_run(copy).manifest["status"] == "complete"


def test_report_command_rebuilds_edited_records(finished, copy, capsys):
    _, original = finished
    frame = pd.read_parquet(copy / "replicates.parquet")
    frame.loc[3, "mu_hat"] = 0.99
    frame.to_parquet(copy / "replicates.parquet", index=False)
    with pytest.raises(SystemExit) as exit_info:
        report_main([str(copy)])
    assert exit_info.value.code == 2 and "--rebuild" in capsys.readouterr().err
    report_main(["--rebuild", str(copy)])
    assert sha256_file(copy / "replicates.parquet") == original.manifest["files"]["replicates.parquet"]["sha256"]


def test_rebuild_names_a_damaged_shard(copy):
    shard = sorted((copy / "shards" / "replicates").glob("*.parquet"))[0]
    shard.write_bytes(shard.read_bytes()[:40])
    with pytest.raises(UserError, match="shard") as excinfo:
        simstudy.load_run(copy, rebuild=True)
    assert "same directory" in str(excinfo.value)


def test_write_refuses_a_folder_of_another_run(finished, tmp_path):
    _, result = finished
    other = simstudy.run_study("cv_variance", out=tmp_path / "other", **{**SETTINGS, "replicates": 10, "seed": 3})
    with pytest.raises(UserError, match="another configuration"):
        result.write(tmp_path / "other")
    assert simstudy.load_run(tmp_path / "other").manifest["identity_hash"] == other.manifest["identity_hash"]
    result.write(tmp_path / "copy")
    result.write(tmp_path / "copy")  # the same run again: allowed
    assert simstudy.load_run(tmp_path / "copy").manifest["identity_hash"] == result.manifest["identity_hash"]


def _shard(start, stop, failed=(), generation=0, key="k"):
    records = pd.DataFrame({"replicate": np.arange(start, stop), "mu_hat": np.arange(start, stop) / 10.0 + generation,
                            "error": ["boom" if r in failed else "" for r in range(start, stop)]})
    entry = {"condition_key": key, "start": start, "stop": stop, "subjects": [], "generation": generation,
             "file": f"{key}_{start}_{generation}", "wall_time": 1.0, "cpu_time": 1.0}
    return entry, records


def test_resolve_shards_retries_failures_and_keeps_the_latest_records():
    found = [_shard(0, 10, failed=(3, 7)), _shard(10, 20)]
    outputs, entries, history = resolve_shards(found, {"k": 0}, [20], retry=True)
    assert [(o.chunk.start, o.chunk.stop) for o in outputs] == [(0, 3), (4, 7), (8, 10), (10, 20)]
    assert [h["replicate"] for h in history] == [3, 7] and len(entries) == 2
    assert sum(o.wall_time for o in outputs) == 2.0  # a split shard's time is counted once
    # the retries (generation 1): replicate 3 succeeded, replicate 7 failed again
    found += [_shard(3, 4, generation=1), _shard(7, 8, failed=(7,), generation=1)]
    outputs, _, history = resolve_shards(found, {"k": 0}, [20], retry=False)
    records = pd.concat([o.records for o in sorted(outputs, key=lambda o: o.chunk)], ignore_index=True)
    assert list(records["replicate"]) == list(range(20))
    assert records.loc[3, "mu_hat"] == 1.3 and records.loc[7, "error"] == "boom" and records.loc[7, "mu_hat"] == 1.7
    assert sorted((h["replicate"], h["generation"]) for h in history) == [(3, 0), (7, 0)]
    outputs, _, _ = resolve_shards(found, {"k": 0}, [5], retry=True)  # shortened to 5: 3 comes from its retry
    assert [(o.chunk.start, o.chunk.stop) for o in sorted(outputs, key=lambda o: o.chunk)] == [(0, 3), (3, 4), (4, 5)]


def test_failure_rate_rule_applies_from_ten_replicates():
    from hostile_parts import AlwaysFails

    few = simstudy.run_study("cv_variance", **{**SETTINGS, "learner": AlwaysFails(), "replicates": 9, "chunk_size": 9},
                             runner={"max_failure_rate": 0.2})
    assert few.manifest["replicates_failed"] == 9  # below the minimum of 10: recorded, not stopped
    with pytest.raises(FailureRateExceeded, match="10 of 10"):
        simstudy.run_study("cv_variance", **{**SETTINGS, "learner": AlwaysFails(), "replicates": 20},
                           runner={"max_failure_rate": 0.2})


def test_max_failure_rate_has_one_default():
    """The dataclass default is the one Python, the command line (its runner presets are RunnerConfig
    nodes) and the user guide use."""
    from pathlib import Path

    from simstudy.engine.config import RunnerConfig
    from simstudy.engine.plan import make_runner
    from simstudy.engine.runner import MIN_REPLICATES_FOR_ABORT

    default = RunnerConfig().max_failure_rate
    assert make_runner().max_failure_rate == default
    guide = (Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "long_runs.rst").read_text()
    assert f"(default {default:g})" in guide and f"at least {MIN_REPLICATES_FOR_ABORT} replicates" in guide


# ----------------------------------------------------------------------------- memory-bounded records
def _records_like(rows: int) -> pd.DataFrame:
    """cv_variance-like records: a key, numbers, an array column with one failed (NaN) cell, errors."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"condition_key": ["c0"] * rows, "replicate": np.arange(rows), "mu_hat": rng.normal(size=rows),
                          "fold_means": pd.Series(list(rng.normal(size=(rows, 5))), dtype=object),
                          "error": [""] * rows})
    frame.loc[3, ["fold_means", "error"]] = [np.nan, "ValueError: failed"]
    return frame


def test_records_written_a_row_group_at_a_time_are_the_same_file(tmp_path):
    """write_row_groups equals to_parquet with the same row-group length byte for byte; the default
    length is pyarrow's (so long records files stay those a single to_parquet call writes)."""
    import pyarrow.parquet as pq

    from simstudy.engine.records import ROW_GROUP_ROWS, write_row_groups

    frame = _records_like(1000)
    frame.to_parquet(tmp_path / "one_call.parquet", index=False, row_group_size=64)
    write_row_groups(frame, tmp_path / "by_groups.parquet", 64)
    assert (tmp_path / "one_call.parquet").read_bytes() == (tmp_path / "by_groups.parquet").read_bytes()
    pd.DataFrame({"x": np.zeros(ROW_GROUP_ROWS + 1, dtype=np.int8)}).to_parquet(tmp_path / "default.parquet")
    assert pq.ParquetFile(tmp_path / "default.parquet").metadata.row_group(0).num_rows == ROW_GROUP_ROWS


def test_compacted_array_cells_keep_their_values():
    from simstudy.engine.records import compact_array_cells

    frame = _records_like(50)
    frame.loc[3, "fold_means"] = np.zeros(5)  # every cell an array: compacted
    before = frame.copy(deep=True)
    compact_array_cells(frame)
    assert frame["fold_means"].map(lambda v: v.base is not None).all()
    for a, b in zip(frame["fold_means"], before["fold_means"]):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    ragged = _records_like(50)  # a NaN cell: left as it is
    cells = list(ragged["fold_means"])
    compact_array_cells(ragged)
    assert all(a is b for a, b in zip(ragged["fold_means"], cells))
