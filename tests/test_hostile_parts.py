"""Hostile user parts (issue 32, items 2, 3, 5 and 6): populations, learners, losses and studies
that return the wrong thing, misbehaving scikit-learn estimators, module state changed between
two runs of one script, and failures a resume should retry.

The outcome wanted for a part whose output is wrong (``hostile_parts.part_failure``): the
replicates it broke fail with a recorded message naming the part (``population.sample``,
``learner.predict``, ``loss``...) and what it returned, or the run stops with a clear error when
every replicate would fail. Never a silently wrong number; never a crash of the interpreter (the
cases that corrupted the heap run in a subprocess, so the suite survives them). For a part whose
output is unusual but acceptable (labels -1/+1, Python lists), the outcome wanted is the correct
result: the records of the same data in the usual form.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hostile_parts as hp
import simstudy
from hostile_parts import clear_message, part_failure, records_without_arrays
from simstudy.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
SIMSTUDY = str(Path(sys.executable).with_name("simstudy"))
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
BASE = dict(learner="tree", sizes=[20], replicates=20, n_jobs=1, progress=False)


def run(population=None, **settings):
    return simstudy.run_study("cv_variance", population=population or hp.TwoBlobs(), **{**BASE, **settings})


def assert_same_records(a, b, columns=("mu_hat", "theta1", "theta2", "theta3", "theta4", "theta5")) -> None:
    for column in columns:
        np.testing.assert_array_equal(a.records[column].to_numpy(), b.records[column].to_numpy(), err_msg=column)


@pytest.fixture(scope="module")
def blobs():
    """The well-behaved population's records (tree, and tree with the truth)."""
    return {"plain": run(), "truth": run(truth=True)}


def _isolated(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter: a heap corruption or a segfault ends that process only."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def _accepted_in_subprocess(population: str, part: str, returned: tuple[str, ...]) -> None:
    proc = _isolated(f"""
        import hostile_parts as hp, simstudy
        message = hp.part_failure(lambda: simstudy.run_study("cv_variance", population=hp.{population}(),
                                  learner="tree", sizes=[20], replicates=20, n_jobs=1, progress=False),
                                  {part!r}, {returned!r})
        print("ACCEPTED", message)
    """)
    assert proc.returncode == 0, f"status {proc.returncode} (negative: killed by that signal): {proc.stderr[-1500:]}"
    assert "ACCEPTED" in proc.stdout


# ----------------------------------------------------------------------------- populations: wrong output
SHAPE_WORDS = ("shape", "rows", "length", "lengths")


@pytest.mark.parametrize("population", ["ShortX", "ShortY", "ExtraRows"])
def test_sample_of_the_wrong_shape(population):
    _accepted_in_subprocess(population, "population.sample", SHAPE_WORDS)


@pytest.mark.parametrize("population, words", [("NaNFeatures", ("nan", "finite")), ("InfFeatures", ("inf", "finite")),
                                               ("NaNLabels", ("nan", "label", "finite"))])
def test_sample_with_non_finite_values(population, words):
    part_failure(lambda: run(getattr(hp, population)()), "population.sample", words)


def test_sample_with_one_dimensional_features():
    part_failure(lambda: run(hp.FlatX()), "population.sample", ("shape", "1-d", "2-d", "dimension"))


def test_sample_returns_a_tuple(blobs):
    try:
        res = run(hp.TupleSample())
    except UserError as exc:
        clear_message(exc, "population.sample", words=("tuple",))
    else:  # read as (X, y): then exactly the records of the Sample
        assert_same_records(res, blobs["plain"])


def test_sample_returns_none():
    part_failure(lambda: run(hp.NoneSample()), "population.sample", ("None",))


def test_seed_params_returns_none():
    with pytest.raises(UserError) as excinfo:
        run(hp.NoneSeedParams())
    clear_message(excinfo.value, "population.seed_params", words=("None",))


def test_fractional_labels_fail_or_count_as_two_classes(blobs):
    """Labels 0.25/0.75 are no class labels: refused or failed naming the sample, or read as two
    classes with exactly the records of labels 0/1."""
    try:
        res = run(hp.FractionalLabels())
    except UserError as exc:
        clear_message(exc, "population.sample")
        return
    if (res.records["error"] != "").any():
        part_failure(lambda: res, "population.sample", ("label",))
    else:
        assert_same_records(res, blobs["plain"])


@pytest.mark.parametrize("population", ["SignedLabels", "HugeLabels", "ListSample"])
def test_unusual_but_valid_samples_give_the_usual_records(blobs, population):
    """Labels -1/+1 or 0/10**9 and lists instead of arrays: the same training sets in another
    form, so the same records (run in this process: they did not crash the kernels)."""
    assert_same_records(run(getattr(hp, population)()), blobs["plain"])


def test_signed_labels_with_the_truth(blobs):
    res = run(hp.SignedLabels(), truth=True)
    assert_same_records(res, blobs["truth"], ("mu_hat", "true_error"))


def test_population_attribute_named_x_with_the_truth(blobs):
    assert_same_records(run(hp.XAttribute(), truth=True), blobs["truth"], ("mu_hat", "true_error"))


@pytest.mark.parametrize("population", ["ShortEvaluation", "NaNEvaluation"])
def test_broken_evaluation_set(population):
    """The truth computed from an evaluation set whose y is short, or whose X holds NaN: the
    replicates' truths fail naming the evaluation set, or the run is refused."""
    try:
        res = run(getattr(hp, population)(), truth=True)
    except UserError as exc:
        clear_message(exc, "evaluation_set")
        return
    truth = res.records["true_error"].to_numpy(dtype=float)
    failed = res.records["error"] != ""
    assert failed.any() or np.all(np.isfinite(truth)), "NaN truths counted as successes"
    if failed.any():
        part_failure(lambda: res, "evaluation_set")
    else:
        pytest.fail(f"truths {truth[:3]} computed from a broken evaluation set")


def test_regression_targets_with_nan():
    part_failure(lambda: run(hp.NaNTargets(), learner="ols", loss="squared"), "population.sample", ("nan", "finite"))


# ----------------------------------------------------------------------------- learners: wrong output
@pytest.mark.parametrize("estimator, words", [
    (hp.ProbaTree(max_depth=2), ("label", "class", "probabilit")),
    (hp.StringTree(), ("str", "dtype", "label")),
    (hp.ScalarTree(), ("scalar", "shape", "length")),
    (hp.ShortTree(), SHAPE_WORDS),
    (hp.AlienLabelTree(), ("7", "label", "class")),
], ids=["probabilities", "strings", "scalar", "one too few", "unknown label"])
def test_predictions_of_the_wrong_kind(estimator, words):
    part_failure(lambda: run(learner=estimator), "learner.predict", words)


def test_predictions_as_a_column():
    part_failure(lambda: run(learner=hp.ColumnTree()), "learner.predict", ("shape", "2-d", "dimension", "column"))


def test_regressor_predicting_nan():
    part_failure(lambda: run(hp.Line(), learner=hp.NaNRegressor(), loss="squared"), "learner.predict",
                 ("nan", "finite"))


def test_estimator_subclass_with_a_kernel_name_keeps_its_own_predict():
    res = run(hp.Line(), learner=hp.KNeighborsRegressor(n_neighbors=3), loss="squared")
    assert res.records["mu_hat"].min() > 1000, "the user's predictions (shifted by 100) were not used"


def test_estimator_subclass_of_a_kernel_class_keeps_its_own_predict():
    """A DecisionTreeClassifier subclass is not replaced by the numba CART (exact type check)."""
    res = run(learner=hp.FlippedTree())
    assert int(res.summary["failed"].sum()) == 0 and res.records["mu_hat"].mean() > 0.5


def test_minimal_protocol_learner():
    res = run(learner=hp.ProtocolLearner())
    assert int(res.summary["failed"].sum()) == 0
    assert res.records["mu_hat"].between(0, 1).all()


def test_protocol_learner_with_short_predictions():
    part_failure(lambda: run(learner=hp.ProtocolShortPredict()), "learner.predict", SHAPE_WORDS)


def test_protocol_learner_without_a_name():
    with pytest.raises(UserError) as excinfo:
        run(learner=hp.ProtocolNoName())
    clear_message(excinfo.value, "learner", words=("name",))


def test_a_learner_that_always_raises_is_recorded_or_stops_the_run():
    try:
        res = run(learner=hp.AlwaysFails())
    except UserError as exc:
        assert "this learner always fails" in str(exc)
    else:
        assert (res.records["error"].str.contains("this learner always fails")).all()
        assert res.manifest["replicates_failed"] == 20 and len(res.records) == 20


def test_a_run_whose_replicates_all_failed_writes_its_report_or_stops_clearly(tmp_path):
    out = tmp_path / "run"
    try:
        res = run(learner=hp.AlwaysFails(), out=out)
    except UserError as exc:
        assert "this learner always fails" in str(exc)
    else:
        assert simstudy.load_run(out).manifest["replicates_failed"] == res.manifest["replicates_failed"] == 20


# ----------------------------------------------------------------------------- losses: wrong output
@pytest.mark.parametrize("loss, words", [(hp.nan_on_full, ("nan", "finite")), (hp.neg_inf_on_full, ("inf", "finite")),
                                         (hp.short_on_full, SHAPE_WORDS), (hp.mean_on_full, ("scalar", "shape"))],
                         ids=["NaN", "-inf", "one too few", "a mean"])
def test_loss_that_misbehaves_on_full_vectors(loss, words):
    part_failure(lambda: run(loss=loss), "loss", words)


# ----------------------------------------------------------------------------- command-line twins
def _cli_run(tmp_path, *args) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "run"
    proc = subprocess.run([SIMSTUDY, "study.sizes=[20]", "study.replicates=20", "runner.n_jobs=1",
                           "runner.progress=false", *args, f"hydra.run.dir={out}"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)
    return proc, out


def _cli_part_failure(proc, out, part) -> None:
    """Exit 2 naming the part (one paragraph), or exit 0 with the failures recorded naming it."""
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr[-1500:])
    if proc.returncode == 2:
        assert part in proc.stderr
        return
    records = pd.read_parquet(out / "replicates.parquet")
    errors = records["error"].fillna("")
    assert (errors != "").any() and errors[errors != ""].str.contains(part, regex=False).all()


def test_cli_loss_returning_nan(tmp_path):
    _cli_part_failure(*_cli_run(tmp_path, "study.loss=hostile_parts.nan_on_full"), "loss")


def test_cli_population_with_a_short_x(tmp_path):
    _cli_part_failure(*_cli_run(tmp_path, "population=custom", "population._target_=hostile_parts.ShortX"),
                      "population.sample")


# ----------------------------------------------------------------------------- stale code in a kept worker pool
STALE = """
    import importlib, sys
    sys.path.insert(0, {folder!r})
    import simstudy, user_loss
    settings = dict(population="logistic", learner="tree", sizes=[20], replicates=40, chunk_size=10, progress=False)
    def mean_loss(n_jobs):
        return simstudy.run_study("cv_variance", loss=user_loss.cost, n_jobs=n_jobs, **settings).records.mu_hat.mean()
    first = mean_loss({n_jobs})
    {change}
    print("RATIO", mean_loss({n_jobs}) / first)
"""


def _stale(tmp_path, n_jobs: int, change: str) -> float:
    (tmp_path / "user_loss.py").write_text("COST = 1.0\n\ndef cost(y, y_hat):\n    return COST * (y != y_hat)\n")
    code = STALE.format(folder=str(tmp_path), n_jobs=n_jobs, change=change)
    proc = _isolated(code)
    assert proc.returncode == 0, proc.stderr[-1500:]
    return float(proc.stdout.split("RATIO")[-1])


@pytest.mark.parametrize("how", ["global", "reload"])
def test_worker_pool_never_runs_stale_code(tmp_path, how):
    change = {"global": "user_loss.COST = 5.0",
              "reload": f"open({str(tmp_path / 'user_loss.py')!r}, 'w').write('COST = 5.0\\n\\ndef cost(y, y_hat):\\n"
                        f"    return COST * (y != y_hat)\\n'); importlib.reload(user_loss)"}[how]
    assert _stale(tmp_path, 2, change) == pytest.approx(5.0)


def test_in_process_runs_see_the_changed_module(tmp_path):
    assert _stale(tmp_path, 1, "user_loss.COST = 5.0") == pytest.approx(5.0)


# ----------------------------------------------------------------------------- a user's Study
def _toy(cls, **settings):
    return simstudy.run_study(cls, replicates=20, n_jobs=1, progress=False, chunk_size=10, **settings)


def test_a_well_behaved_user_study():
    res = _toy(hp.ToyStudy)
    assert len(res.records) == 20 and res.summary["mean"].iloc[0] == pytest.approx(4.75)


@pytest.mark.parametrize("cls", ["ShortChunkStudy", "DuplicateRowsStudy", "NoneChunkStudy", "DictChunkStudy"])
def test_a_study_worker_returning_the_wrong_records(cls):
    """One record per replicate or a failure that says so: never fewer, more or lost records."""
    try:
        res = _toy(getattr(hp, cls))
    except UserError as exc:
        clear_message(exc, words=("replicate",))
    else:
        records = res.records
        assert len(records) == 20 and sorted(records["replicate"]) == list(range(20))
        assert (records["error"] != "").any()


def test_a_study_without_phases():
    with pytest.raises(UserError) as excinfo:
        _toy(hp.NoPhasesStudy)
    clear_message(excinfo.value, words=("phase",))


def test_load_run_of_a_user_study(tmp_path):
    res = _toy(hp.ToyStudy, out=tmp_path / "run")
    pd.testing.assert_frame_equal(simstudy.load_run(tmp_path / "run").summary, res.summary)


# ----------------------------------------------------------------------------- failures and resume
@pytest.fixture
def fail_flag(tmp_path, monkeypatch):
    flag = tmp_path / "fail.flag"
    flag.write_text("x")
    monkeypatch.setenv("HOSTILE_FAIL_FLAG", str(flag))
    return flag


RETRY = dict(population="logistic", sizes=[20], replicates=40, chunk_size=10, n_jobs=1, progress=False,
             runner={"max_failure_rate": 1.0})


@pytest.mark.parametrize("learner", ["FlakyOnFlag", "MemoryHungry"])
def test_a_resume_retries_failed_replicates(tmp_path, fail_flag, learner):
    out = tmp_path / "run"
    first = simstudy.run_study("cv_variance", learner=getattr(hp, learner)(), out=out, **RETRY)
    assert first.manifest["replicates_failed"] > 0  # the transient failure happened
    fail_flag.unlink()
    resumed = simstudy.run_study("cv_variance", learner=getattr(hp, learner)(), out=out, **RETRY)
    clean = simstudy.run_study("cv_variance", learner=getattr(hp, learner)(), **RETRY)
    assert resumed.manifest["replicates_failed"] == 0
    pd.testing.assert_frame_equal(records_without_arrays(resumed.records), records_without_arrays(clean.records))


def test_a_failing_replicate_is_recorded_not_dropped(fail_flag):
    res = simstudy.run_study("cv_variance", learner=hp.FlakyOnFlag(), **RETRY)
    failed = res.records[res.records["error"] != ""]
    assert len(res.records) == 40 and 0 < len(failed) < 40
    assert failed["error"].str.contains("transient failure").all() and failed["mu_hat"].isna().all()
    assert res.manifest["replicates_failed"] == len(failed) == int(res.summary["failed"].sum())


def test_the_failure_rate_rule_applies_to_small_runs():
    with pytest.raises(UserError) as excinfo:
        simstudy.run_study("cv_variance", population="logistic", learner=hp.AlwaysFails(), sizes=[20], replicates=30,
                           chunk_size=10, n_jobs=1, progress=False, runner={"max_failure_rate": 0.2})
    clear_message(excinfo.value, words=("max_failure_rate",))
