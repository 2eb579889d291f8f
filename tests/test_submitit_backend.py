"""runner.backend=submitit: a phase's chunks as one job array, run here by submitit's local executor."""
import json

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy.errors import ConfigError

pytest.importorskip("submitit")

STUDY = dict(population="gaussian_folds", sizes=[20, 40], replicates=40, K=5, seed=3, chunk_size=10,
             progress=False)
LOCAL = {"cluster": "local", "chunks_per_task": 4, "poll_interval_s": 0.2, "timeout_min": 5}


def _same_records(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = [c for c in a.columns if c not in ("fold_means", "fold_true_errors")]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    np.testing.assert_array_equal(np.stack(a.fold_means), np.stack(b.fold_means))


@pytest.fixture(scope="module")
def reference():
    return simstudy.run_study("cv_variance", n_jobs=1, backend="sequential", **STUDY).records


def test_job_array_gives_the_joblib_records_and_resumes_only_missing_chunks(tmp_path, reference):
    out = tmp_path / "run"
    res = simstudy.run_study("cv_variance", runner={"backend": "submitit", "submitit": LOCAL}, out=out, **STUDY)
    _same_records(reference, res.records)
    assert res.manifest["backend"] == "submitit" and res.manifest["computed_chunks"] == 8
    jobs = [json.loads(line) for line in (out / "submitit" / "jobs.jsonl").read_text().splitlines()]
    assert [(j["tasks"], j["chunks"], j["replicates"]) for j in jobs] == [(2, 8, 80)]

    shards = sorted((out / "shards" / "replicates").glob("*.parquet"))
    for data in shards[1:3]:  # two chunks lost: the re-run submits those two alone, in one task
        data.unlink()
        data.with_suffix(".json").unlink()
    again = simstudy.run_study("cv_variance", runner={"backend": "submitit", "submitit": LOCAL}, out=out, **STUDY)
    _same_records(reference, again.records)
    assert (again.manifest["resumed_chunks"], again.manifest["computed_chunks"]) == (6, 2)
    jobs = [json.loads(line) for line in (out / "submitit" / "jobs.jsonl").read_text().splitlines()]
    assert [(j["tasks"], j["chunks"], j["replicates"]) for j in jobs[1:]] == [(1, 2, 20)]


@pytest.mark.parametrize("settings, field", [
    ({"cluster": "pbs"}, "runner.submitit.cluster='pbs'"),
    ({"cluster": "local", "chunks_per_task": 0}, "runner.submitit.chunks_per_task=0"),
    ({"cluster": "local", "mem_gb": -1}, "runner.submitit.mem_gb=-1"),
    ({"cluster": "local", "partiton": "cpu"}, "runner.submitit.partiton is not a submitit setting"),
    ({"cluster": "local", "partition": ""}, "runner.submitit.partition=''"),
])
def test_bad_settings_are_refused_before_any_work(settings, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        simstudy.run_study("cv_variance", runner={"backend": "submitit", "submitit": settings}, **STUDY)


def test_slurm_without_sbatch_and_a_run_without_directory_are_refused(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ConfigError, match="no sbatch command"):
        simstudy.run_study("cv_variance", runner={"backend": "submitit"}, **STUDY)
    monkeypatch.undo()
    with pytest.raises(ConfigError, match="needs a run directory"):
        simstudy.run_study("cv_variance", runner={"backend": "submitit", "submitit": LOCAL}, **STUDY)
