"""Running to a target Monte Carlo error (simstudy.engine.rounds, simstudy.studies.targets): the
checks of a request, the projection rule, the reproducibility of the rounds (records identical
to fixed-count runs of the same length, whatever n_jobs, chunking, backend (dask included) or resume), what the
tables, manifest and headline say, and a test-sized version of the stopping-rule bias experiment
(experiments/targets_bias.py)."""
import importlib.util
import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import simstudy
from conftest import ROOT
from simstudy.engine.plan import prepare
from simstudy.engine.rounds import next_counts
from simstudy.errors import ConfigError
from simstudy.results import load_run

FOLDS = dict(population={"name": "gaussian_folds", "rho": 0.5}, K=5, progress=False)


def _run(**kw):
    return simstudy.run_study("cv_variance", **{**FOLDS, "n_jobs": 1, "backend": "sequential", **kw})


def _bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.reset_index(drop=True).to_parquet(buffer, index=False)
    return buffer.getvalue()


# ----------------------------------------------------------------------------- checks before any work
@pytest.mark.parametrize("targets, words", [
    ({"rhoo": 0.01}, ["study.targets.rhoo", "did you mean 'rho'"]),
    ({"typ1": 0.01}, ["did you mean 'type1'"]),
    ({"rho": -0.01}, ["study.targets.rho=-0.01", "positive"]),
    ({"rho": True}, ["study.targets.rho=True"]),
    (0.01, ["study.targets=0.01", "mapping"]),
])
def test_bad_targets_are_refused_naming_the_fix(targets, words):
    with pytest.raises(ConfigError) as info:
        prepare("cv_variance", "gaussian_folds", None, sizes=[20], targets=targets)
    for word in words:
        assert word in str(info.value)


def test_first_round_larger_than_the_cap_is_refused():
    with pytest.raises(ConfigError, match=r"study.min_replicates=500 .* exceeds study.replicates=100"):
        prepare("cv_variance", "gaussian_folds", None, sizes=[20], replicates=100, min_replicates=500,
                targets={"rho": 0.05})
    prepare("cv_variance", "gaussian_folds", None, sizes=[20], replicates=100, min_replicates=500)  # no targets


def test_a_study_without_targetable_measures_refuses_targets():
    with pytest.raises(ConfigError, match="study.targets is not a setting of study 'nedelko_histogram'"):
        prepare("nedelko_histogram", targets={"rho": 0.01})


def test_the_targets_dataclasses_list_the_declared_measures():
    from simstudy.registry import STUDIES
    from simstudy.studies.resolve import resolve_study

    for name in ("cv_variance", "cv_clt"):
        cls = resolve_study(name)
        fields = set(STUDIES[name].load_config()().targets.__dataclass_fields__)
        assert fields == set(cls.target_measures()), name


# ----------------------------------------------------------------------------- the projection rule
def test_next_counts_projects_with_the_square_root_law():
    targets = {"rho": 0.01}
    # w = 0.02 at R = 100: R (w / t)^2 = 400 -> 400 (a multiple of the step 100)
    assert next_counts([100], [10_000], [{"rho": 0.02}], targets, 100) == [400]
    # 0.015 -> 225 -> rounded up to 300; met -> unchanged; undefined -> doubled; capped at 250
    assert next_counts([100, 100, 100, 100], [10_000, 10_000, 10_000, 250],
                       [{"rho": 0.015}, {"rho": 0.009}, {"rho": float("nan")}, {"rho": 0.05}], targets, 100) \
        == [300, 100, 200, 250]
    # two targets: the larger need wins
    assert next_counts([200], [10_000], [{"rho": 0.011, "type1": 0.02}], {"rho": 0.01, "type1": 0.01}, 100) == [800]


# ----------------------------------------------------------------------------- reproducibility
def _assert_fixed_runs_of_the_same_lengths(target, seed: int) -> None:
    """Each condition's records of a run to targets equal a fixed-count run of its final length."""
    counts = target.tables.extra["targets"].set_index("n")["replicates"]
    assert counts.nunique() > 1 or counts.iloc[0] > 50  # the rounds did extend
    for n, count in counts.items():
        fixed = _run(sizes=[int(n)], replicates=int(count), seed=seed)
        ours = target.records[target.records["n"] == n].drop(columns=["population", "learner"])
        assert _bytes(ours) == _bytes(fixed.records.drop(columns=["population", "learner"]))


def test_target_run_equals_fixed_runs_of_the_same_lengths():
    target = _run(sizes=[10, 40], replicates=2000, min_replicates=50, targets={"rho": 0.06}, seed=11)
    _assert_fixed_runs_of_the_same_lengths(target, seed=11)


def test_rounds_are_identical_across_backends_chunking_and_resume(tmp_path):
    kw = dict(sizes=[10, 40], replicates=2000, min_replicates=50, targets={"rho": 0.06, "type1": 0.04}, seed=3)
    memory = _run(**kw)
    on_disk = simstudy.run_study("cv_variance", **FOLDS, n_jobs=2, backend="auto", chunk_size=7, out=tmp_path / "a",
                                 **kw)
    assert _bytes(memory.records) == _bytes(on_disk.records)
    again = simstudy.run_study("cv_variance", **FOLDS, n_jobs=1, chunk_size=40, out=tmp_path / "a", **kw)
    assert again.manifest["computed_chunks"] == 0
    assert _bytes(again.records) == _bytes(memory.records)
    pd.testing.assert_frame_equal(again.tables.extra["targets"], memory.tables.extra["targets"])


def test_later_rounds_read_no_shard_and_compute_each_replicate_once(tmp_path, monkeypatch):
    """The run directory's shards are read once (the first round, as a resume would); every
    replicate is computed and saved once over all rounds; the records equal a memory run's."""
    from simstudy.engine.shards import ShardStore

    loads, saved = [], []
    load, save = ShardStore.load, ShardStore.save
    monkeypatch.setattr(ShardStore, "load", lambda self, phase, *a, **k: loads.append(phase) or load(self, phase, *a, **k))
    monkeypatch.setattr(ShardStore, "save", lambda self, phase, key, out: saved.append(out.chunk.size)
                        or save(self, phase, key, out))
    kw = dict(sizes=[10, 40], replicates=2000, min_replicates=50, targets={"rho": 0.06}, seed=5)
    on_disk = _run(out=tmp_path / "a", **kw)
    rounds = on_disk.manifest["targets"]["rounds"]
    assert len(rounds) > 1 and loads.count("replicates") == 1
    assert sum(saved) == sum(on_disk.tables.extra["targets"]["replicates"])  # no replicate computed twice
    assert _bytes(on_disk.records) == _bytes(_run(**kw).records)


def test_rounds_on_a_dask_cluster_equal_a_fixed_run_of_the_same_length(tmp_path):
    """The rounds on the dask backend (an in-process LocalCluster of two one-thread workers) give the records of a
    fixed-count run of each condition's final length."""
    distributed = pytest.importorskip("distributed")
    kw = dict(sizes=[10, 40], replicates=2000, min_replicates=50, targets={"rho": 0.06}, seed=11)
    cluster_options = dict(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_options) as cluster:
        runner = {"backend": "dask", "scheduler_address": cluster.scheduler_address}
        target = simstudy.run_study("cv_variance", **FOLDS, **kw, n_jobs=2, chunk_size=9, runner=runner,
                                    out=tmp_path / "dask")
    assert target.manifest["backend"] == "dask"
    _assert_fixed_runs_of_the_same_lengths(target, seed=11)


# ----------------------------------------------------------------------------- what a reader sees
def test_tables_manifest_and_headline_say_the_rule_and_the_counts(tmp_path):
    res = _run(sizes=[10, 40], replicates=150, min_replicates=50, targets={"rho": 0.02}, seed=5, out=tmp_path)
    frame = res.tables.extra["targets"]
    assert list(frame["replicates"]) == [150, 150] and not frame["met"].any() and frame["capped"].all()
    assert "NOT met in 2 condition(s)" in res.headline() and "n=10, K=5 rho" in res.headline()
    assert "(capped)" in res.headline()
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["targets"]["rule"]["targets"] == {"rho": 0.02} and manifest["targets"]["rule"]["cap"] == 150
    assert manifest["targets"]["all_met"] is False and len(manifest["targets"]["capped"]) == 2
    assert [c["replicates"] for c in manifest["conditions"]] == [150, 150]
    assert (tmp_path / "targets.csv").is_file()
    assert "Monte Carlo error targets" in (tmp_path / "report.html").read_text()
    assert "NOT met" in (tmp_path / "headline.txt").read_text()
    pd.testing.assert_frame_equal(load_run(tmp_path).tables.extra["targets"], frame)
    met = _run(sizes=[10], replicates=2000, min_replicates=50, targets={"rho": 0.2}, seed=5)
    assert "every target met" in met.headline() and "run to targets" in met.headline()
    plain = _run(sizes=[10], replicates=20, seed=5).headline()
    assert "run to targets" not in plain and "Targets" not in plain and "20 replicates" in plain


def test_command_line_targets_and_their_misspelling(tmp_path):
    args = [sys.executable, "-m", "simstudy.cli", "study=cv_variance", "population=gaussian_folds", "study.K=5",
            "study.sizes=[10]", "study.replicates=400", "study.min_replicates=50", "runner.n_jobs=1"]
    ok = subprocess.run(args + ["study.targets.rho=0.1", f"hydra.run.dir={tmp_path / 'a'}"], cwd=ROOT,
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "every target met" in (tmp_path / "a" / "headline.txt").read_text()
    bad = subprocess.run(args + ["study.targets.rhoo=0.1", f"hydra.run.dir={tmp_path / 'b'}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "did you mean 'rho'" in bad.stderr and "Traceback" not in bad.stderr


# ----------------------------------------------------------------------------- the stopping rule's bias
def _bias_experiment():
    spec = importlib.util.spec_from_file_location("targets_bias", ROOT / "experiments" / "targets_bias.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stopping_on_the_error_leaves_a_bias_well_below_the_target():
    """A test-sized experiments/targets_bias.py: 24 seeds run to rho ± 0.1 and theta ± 0.04
    (gaussian_folds, n = 10, K = 5: rho = 0.5, theta = 0.2) stop at different counts; the mean
    paired difference from fixed runs of the same seeds is under a quarter of the target, and
    the mean of the final estimates is within 3 standard errors (over seeds) of the truth."""
    experiment = _bias_experiment()
    seeds = list(range(1000, 1024))
    frame = pd.concat([experiment.simulate(m, t, seeds) for m, t in (("rho", 0.1), ("theta", 0.04))])
    summary = experiment.summarize(frame).set_index("measure")
    assert frame.groupby("measure")["replicates"].nunique().min() > 1  # the rule stopped at different counts
    assert (summary["difference"].abs() < summary["target"] / 4).all()
    assert (summary["z_vs_truth"].abs() < 3).all()
    assert "| rho | 0.1 |" in experiment.markdown(summary.reset_index(), 1.0, len(seeds))
