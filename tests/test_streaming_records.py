"""Records kept on disk (simstudy.engine.stored): a study that streams its records (cv_variance)
run into a directory never holds them all at once, and gives the files and the records an
in-memory run gives."""
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import simstudy
from simstudy.engine.records import write_parts, write_row_groups
from simstudy.engine.stored import StoredRecords

from conftest import run_config

GAUSSIAN_FOLDS = dict(population="gaussian_folds", sizes=[10, 20], K=5, seed=5, n_jobs=1, progress=False)


def _peak_bytes(call) -> int:
    """The largest memory Python and numpy held while ``call()`` ran, above what was held before."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_aggregation_and_writing_hold_no_memory_per_record(tmp_path):
    """Records of 100 chunks against 10 (one shard of 250 replicates, listed again and again): the
    aggregation and the writing of replicates.parquet peak at about the same memory, far below what
    holding the records takes (measured here too: about 0.5 KB per replicate). What still grows is
    the aggregation's number columns of a condition, 8 bytes per replicate each."""
    res = simstudy.run_study("cv_variance", replicates=250, chunk_size=250, out=tmp_path / "r",
                             **dict(GAUSSIAN_FOLDS, sizes=[20]))
    part = res.phase_records["replicates"].parts[0][1]
    peaks = {}
    for chunks in (10, 100):
        stored = StoredRecords([(0, part)] * chunks, res.phase_records["replicates"].labels)
        peaks[chunks] = _peak_bytes(lambda: (res.study.aggregate({"replicates": stored}),  # noqa: B023
                                             stored.write(tmp_path / "replicates.parquet")))
    held = _peak_bytes(stored.frame)
    added = 250 * (100 - 10)
    assert (peaks[100] - peaks[10]) / added < 150 < held / (250 * 100), (peaks, held)


def test_stored_records_give_the_in_memory_run(tmp_path):
    """The records, tables and failures of a run into a directory (kept on disk) equal an in-memory
    run's, after the run and after a collect pass; ``len`` counts them without reading them."""
    memory = simstudy.run_study("cv_variance", replicates=900, chunk_size=250, **GAUSSIAN_FOLDS)
    for _ in ("run", "collect"):
        stored = simstudy.run_study("cv_variance", replicates=900, chunk_size=250, out=tmp_path / "r", **GAUSSIAN_FOLDS)
        kept = stored.phase_records["replicates"]
        assert isinstance(kept, StoredRecords) and len(kept) == 1800
        for name in ("summary", "tests"):
            pd.testing.assert_frame_equal(getattr(memory, name), getattr(stored, name), check_exact=True)
        pd.testing.assert_frame_equal(memory.records, stored.records, check_exact=True)
        assert isinstance(stored.phase_records["replicates"], pd.DataFrame)  # read once, when asked


def test_failed_records_stream_as_they_are_held(compose_config, tmp_path):
    """A run whose learner fails on some replicates: the same tables, failure counts and records
    whether the records are held (no directory) or kept on disk."""
    cfg = compose_config("experiment=debug", "study.sizes=[20]", "study.replicates=80",
                         "learner.estimator._target_=flaky_learners.FlakyTree", "runner.max_failure_rate=1.0")
    held, stored = run_config(cfg, None), run_config(cfg, tmp_path)
    assert isinstance(stored.phase_records["replicates"], StoredRecords)
    assert stored.manifest["replicates_failed"] == held.manifest["replicates_failed"] > 0
    pd.testing.assert_frame_equal(pd.DataFrame(stored.manifest["failures_sample"]),
                                  pd.DataFrame(held.manifest["failures_sample"]), check_exact=True)
    assert stored.manifest["conditions"][0]["failed"] == held.manifest["conditions"][0]["failed"]
    pd.testing.assert_frame_equal(held.summary, stored.summary, check_exact=True)
    pd.testing.assert_frame_equal(held.tests, stored.tests, check_exact=True)
    pd.testing.assert_frame_equal(held.records, stored.records, check_exact=True)


def _parts(sizes, seed=0):
    rng = np.random.default_rng(seed)
    start = 0
    for size in sizes:
        yield pd.DataFrame({"replicate": np.arange(start, start + size), "x": rng.normal(size=size),
                            "fold_means": list(rng.normal(size=(size, 3))), "error": [""] * size})
        start += size


@pytest.mark.parametrize("sizes", [[300, 250, 700, 10, 900], [1000], [40]])
def test_parts_are_written_as_the_whole_frame(tmp_path, sizes):
    """write_parts writes the concatenated parts as the whole frame's row groups are written, byte for
    byte, whatever the parts' sizes against the row groups'."""
    whole = pd.concat(list(_parts(sizes)), ignore_index=True)
    write_row_groups(whole.assign(fold_means=[np.asarray(v, float) for v in whole["fold_means"]]),
                     tmp_path / "whole.parquet", 500)
    assert write_parts(_parts(sizes), tmp_path / "parts.parquet", rows=500)
    assert (tmp_path / "parts.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    assert pq.ParquetFile(tmp_path / "parts.parquet").metadata.num_row_groups == -(-sum(sizes) // 500)


def test_parts_of_different_columns_are_left_to_the_whole_frame(tmp_path):
    """Parts whose columns differ are not written (the caller writes the concatenation), and no
    file is left behind."""
    first, second = _parts([10, 10])
    assert not write_parts([first, second.drop(columns="x")], tmp_path / "parts.parquet", rows=500)
    assert list(tmp_path.iterdir()) == []
