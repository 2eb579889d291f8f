"""The Python API: the same errors as the CLI, the examples/
folder (a user's study, population and loss) through Python and the command line."""
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy.errors import ConfigError

from conftest import LETTER_FILE, ROOT


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "simstudy.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("kwargs,override", [
    ({"sizes": [15]}, "study.sizes=[15]"),
    ({"K": 1}, "study.K=1"),
    ({"alpha": 1.5}, "study.alpha=1.5"),
    ({"seed": -1}, "study.seed=-1"),
    ({"loss": "no_such_loss"}, "study.loss=no_such_loss"),
])
def test_api_and_cli_give_the_same_message(kwargs, override, tmp_path):
    with pytest.raises(ConfigError) as info:
        simstudy.run_study("cv_variance", population="logistic", learner="tree", **kwargs)
    proc = _cli(override, f"hydra.run.dir={tmp_path / 'bad'}")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert str(info.value) in proc.stderr
    assert not (tmp_path / "bad").exists() or not list((tmp_path / "bad").rglob("*"))


def test_unknown_setting_and_bad_objects_are_named():
    with pytest.raises(ConfigError, match="study.sizez is not a setting of study 'cv_variance'"):
        simstudy.run_study("cv_variance", population="logistic", learner="tree", sizez=[20])
    with pytest.raises(ConfigError, match="lacks sample, seed_params"):
        simstudy.run_study("cv_variance", population=object(), learner="tree", replicates=5)
    with pytest.raises(ValueError, match="lacks start, fit, predict"):
        simstudy.run_study("cv_variance", population="logistic", learner=object(), replicates=5)
    with pytest.raises(ConfigError, match="study='nope' is invalid"):
        simstudy.run_study("nope")


def test_in_memory_run_writes_nothing_and_equals_the_written_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    params = dict(population="logistic", learner="tree", sizes=[20], replicates=30, n_jobs=1, progress=False)
    mem = simstudy.run_study("cv_variance", **params)
    assert list(tmp_path.iterdir()) == [] and mem.run_dir is None
    disk = simstudy.run_study("cv_variance", out=tmp_path / "run", **params)
    pd.testing.assert_frame_equal(mem.records, disk.records)
    pd.testing.assert_frame_equal(mem.summary, simstudy.load_run(tmp_path / "run").summary)


def test_example_study_population_and_loss_from_the_command_line(tmp_path):
    out = tmp_path / "boot"
    proc = _cli("study=custom", "study._target_=examples.bootstrap632.study.Bootstrap632Study", "+study.sizes=[20]",
                "population=custom", "population._target_=examples.custom_population.TwoGaussians",
                "+population.evaluation_size=2000",
                "+study.replicates=30", "+study.bootstrap=5", "runner.n_jobs=1", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary.estimate) == {"loo", "kfold", "boot632plus"} and (summary.replicates == 30).all()
    assert "bootstrap632: bias and RMSE" in proc.stdout
    out = tmp_path / "pop"
    proc = _cli("population=custom", "population._target_=examples.custom_population.TwoGaussians",
                "+population.shift=2.0", "+population.evaluation_size=5000",
                "study.loss=examples.custom_loss.asymmetric_cost", "study.truth=true", "study.sizes=[20]",
                "study.replicates=30", "runner.n_jobs=1", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    records = pd.read_parquet(out / "replicates.parquet")
    assert (records.population == "two_gaussians_2").all() and np.isfinite(records.true_error).all()
    # the asymmetric loss counts a missed positive 5 times: fold means are multiples of 1/m in [0, 5]
    assert np.stack(records.fold_means).max() > 1.0


def test_a_study_that_needs_the_truth_refuses_a_population_without_one():
    import examples.bootstrap632  # noqa: F401
    from simstudy.populations.base import Population, Sample

    class Truthless(Population):   # no evaluation set, no exact risks (every built-in population has one)
        name = "truthless"

        def sample(self, n, rng):
            X = rng.standard_normal((n, 2))
            return Sample(X=X, y=(X[:, 0] > 0).astype(np.int64))

        def seed_params(self):
            return {"kind": "truthless"}

    with pytest.raises(ConfigError, match="population='truthless' is invalid.*evaluation set"):
        simstudy.run_study("bootstrap632", population=Truthless(), learner="tree", sizes=[20], replicates=3)


def test_bootstrap632_estimates_against_a_direct_computation():
    """The example study's LOO and .632+ estimates equal a plain recomputation on the same sample
    (its replicate draws: sample, full fit seed, LOO seeds, fold labels, K-fold seeds, bootstrap)."""
    import examples.bootstrap632  # noqa: F401  registers the study
    from examples.bootstrap632.study import boot632plus
    from simstudy.cv.losses import zero_one
    from simstudy.learners.dispatch import build_learner
    from simstudy.rng import replicate_rng

    from examples.custom_population import TwoGaussians

    pop = TwoGaussians(evaluation_size=2000)
    res = simstudy.run_study("bootstrap632", population=pop, learner="tree", sizes=[20], replicates=3,
                             bootstrap=6, n_jobs=1, progress=False)
    row = res.records.iloc[2]
    assert row.error == ""
    cond_key = row.condition_key
    learner = build_learner("tree")
    rng = replicate_rng(632, cond_key, 2)
    sample = pop.sample(20, rng)
    state = learner.start(sample)
    full = learner.fit(state, np.arange(20), rng)
    loo = np.mean([learner.predict(state, learner.fit(state, np.delete(np.arange(20), i), rng), np.array([i]))[0]
                   != sample.y[i] for i in range(20)])
    assert row.loo == pytest.approx(loo)
    labels = __import__("simstudy.cv.splits", fromlist=["KFold"]).KFold(10).labels(20, rng)
    for k in range(10):
        learner.fit(state, np.flatnonzero(labels != k), rng)            # the K-fold fits' draws
    assert row.boot632plus == pytest.approx(boot632plus(learner, state, sample.y, zero_one, full, 6, rng))
