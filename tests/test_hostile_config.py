"""Hostile input on the configuration roads (issue 32, items 1, 7 and 8): the Python API's
settings, the registries, the audit's Python API, the pure inference functions, and the command
line where a Python-road bug has a twin there.

Every test states the outcome wanted: a clear error (a ``simstudy.errors.UserError`` naming the
field, the value and the fix, raised before any work, so that a refused run leaves no directory)
or a correct result (the same records as the same setting given in its plain form). Where the
issue leaves the design open, every acceptable outcome is accepted and nothing else. A case that
fails today is an ``xfail(strict=True)`` whose reason says what happens now.
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

import simstudy
import simstudy.inference as inference
from conftest import make_letter_like
from hostile_parts import assert_clear_error, clear_message, file_digest, records_without_arrays
from simstudy.errors import ConfigError, UserError

ROOT = Path(__file__).resolve().parents[1]
SIMSTUDY = str(Path(sys.executable).with_name("simstudy"))
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
#: A tiny study (0.1-0.5 s in this process once the kernels are loaded).
BASE = dict(population="logistic", learner="tree", sizes=[20], replicates=20, n_jobs=1, progress=False)


def run(**settings):
    return simstudy.run_study("cv_variance", **{**BASE, **settings})


def assert_same_records(a, b) -> None:
    pd.testing.assert_frame_equal(records_without_arrays(a.records), records_without_arrays(b.records))


def refused(out: Path, **settings) -> pytest.ExceptionInfo:
    """The run with ``settings`` into ``out`` raises a UserError and leaves no directory."""
    with pytest.raises(UserError) as excinfo:
        run(out=out, **settings)
    assert not out.exists(), f"a refused run left {sorted(p.name for p in out.iterdir())}"
    return excinfo


@pytest.fixture
def letter(tmp_path):
    """A small Letter-like file as a tabular population mapping (400 rows, classes A..Z)."""
    X, y = make_letter_like(400)
    path = tmp_path / "letter-like.data"
    path.write_text("\n".join(",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)) + "\n")
    return {"kind": "tabular", "name": "letter_like", "path": str(path), "positive": list("ABCDEFGHIJKLM")}


def _subprocess(code: str, timeout: float = 120, memory_gib: float | None = None) -> subprocess.CompletedProcess:
    """Run Python ``code`` in a fresh interpreter (a crash or a registry change stays there)."""
    prefix = ""
    if memory_gib is not None:
        limit = int(memory_gib * 2**30)
        prefix = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    return subprocess.run([sys.executable, "-c", prefix + textwrap.dedent(code)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


# ----------------------------------------------------------------------------- data loss: overwrite
@pytest.mark.parametrize("how", [
    pytest.param({"overwrite": "no"}, id="overwrite='no'"),
    pytest.param({"overwrite": "false"}, id="overwrite='false'"),
    pytest.param({"runner": {"overwrite": "False"}}, id="runner.overwrite='False'"),
    pytest.param({"overwrite": 0}, id="overwrite=0"),
    pytest.param({"overwrite": np.bool_(False)}, id="overwrite=np.False_"),
])
def test_a_false_overwrite_never_deletes_the_previous_run(tmp_path, how):
    """Refused with a clear error or read as False; either way the run of another seed in the
    directory is still there afterwards."""
    out = tmp_path / "run"
    run(out=out, seed=1)
    before = file_digest(out / "replicates.parquet")
    with pytest.raises(UserError) as excinfo:  # a bad value, or a directory of another configuration
        run(out=out, seed=2, **how)
    clear_message(excinfo.value)
    assert file_digest(out / "replicates.parquet") == before
    assert simstudy.load_run(out).study.config.seed == 1


# ----------------------------------------------------------------------------- text booleans
def test_truth_as_the_text_false(letter):
    try:
        res = run(population=letter, sizes=[40], truth="false")
    except UserError as exc:
        clear_message(exc, "study.truth", "false")
    else:
        assert "true_error" not in res.records
        assert_same_records(res, run(population=letter, sizes=[40], truth=False))


def test_population_replace_as_the_text_false(letter):
    try:
        res = run(population={**letter, "replace": "false"}, sizes=[40])
    except UserError as exc:
        clear_message(exc, "population.replace", "false")
    else:
        assert_same_records(res, run(population={**letter, "replace": False}, sizes=[40]))


@pytest.mark.parametrize("how", [{"progress": "no"}, {"runner": {"progress": "false"}}], ids=["progress", "runner"])
def test_progress_as_text(how):
    settings = {**BASE, **how}
    if "runner" in how:
        settings.pop("progress")
    try:
        res = simstudy.run_study("cv_variance", **settings)
    except UserError as exc:
        clear_message(exc, "progress")
    else:
        assert res.manifest["runner"]["progress"] is False


# ----------------------------------------------------------------------------- misspelt keys
def test_misspelt_population_key_postive(tmp_path, letter):
    spec = {k: v for k, v in letter.items() if k != "positive"} | {"postive": list("ABC")}
    assert_clear_error(refused(tmp_path / "run", population=spec), "postive", words=("positive",))


def test_misspelt_population_key_bayes_eror(tmp_path):
    excinfo = refused(tmp_path / "run", population={"kind": "logistic", "bayes_eror": 0.1})
    assert_clear_error(excinfo, "bayes_eror", words=("bayes_error",))


def test_misspelt_learner_key_engin(tmp_path):
    spec = {"estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}, "engin": "sklearn"}
    assert_clear_error(refused(tmp_path / "run", learner=spec), "engin", words=("engine",))


def test_misspelt_study_setting_names_the_valid_ones(tmp_path):
    assert_clear_error(refused(tmp_path / "run", replicate=20), "study.replicate", words=("replicates",))


def test_misspelt_runner_setting_names_the_valid_ones(tmp_path):
    assert_clear_error(refused(tmp_path / "run", runner={"n_job": 2}), "runner.n_job", words=("n_jobs",))


def test_misspelt_population_kind(tmp_path):
    assert_clear_error(refused(tmp_path / "run", population={"kind": "logistc"}), "population.kind", "logistc")


def test_misspelt_study_name(tmp_path):
    with pytest.raises(UserError) as excinfo:
        simstudy.run_study("cv_varience", **BASE, out=tmp_path / "run")
    assert_clear_error(excinfo, "study", "cv_varience", words=("cv_variance",))
    assert not (tmp_path / "run").exists()


# ----------------------------------------------------------------------------- numpy scalars
@pytest.mark.parametrize("field, value", [
    ("replicates", np.int64(20)), ("seed", np.int64(2006)), ("K", np.int64(10)), ("K", np.int32(10)),
    ("n_jobs", np.int64(1)), ("chunk_size", np.int64(10)),
])
def test_numpy_integers_are_numbers(field, value):
    assert_same_records(run(**{field: value}), run(**{field: int(value)}))


def test_numpy_only_replicate():
    assert_same_records(run(runner={"only_replicate": np.int64(3)}), run(runner={"only_replicate": 3}))


def test_numpy_population_p():
    spec = {"kind": "gaussian_linear", "sigma": 1.0, "evaluation_size": 1000}
    a = run(population={**spec, "p": np.int64(3)}, learner="ols", loss="squared")
    assert_same_records(a, run(population={**spec, "p": 3}, learner="ols", loss="squared"))


@pytest.mark.parametrize("field, value", [("alpha", np.float64(0.05)), ("sizes", [np.int64(20)]),
                                          ("rho_hats", np.array([0.0, 0.5]))])
def test_numpy_values_accepted_today(field, value):
    plain = {"alpha": 0.05, "sizes": [20], "rho_hats": [0.0, 0.5]}[field]
    a, b = run(**{field: value}), run(**{field: plain})
    assert_same_records(a, b)
    pd.testing.assert_frame_equal(a.summary, b.summary)


def test_numpy_max_failure_rate():
    assert_same_records(run(runner={"max_failure_rate": np.float64(0.5)}), run(runner={"max_failure_rate": 0.5}))


def test_numpy_array_of_sizes_with_out(tmp_path):
    try:
        res = run(sizes=np.array([20, 40]), out=tmp_path / "run")
    except UserError as exc:  # refused before any work is acceptable too
        clear_message(exc, "study.sizes")
        return
    assert_same_records(res, run(sizes=[20, 40]))
    assert_same_records(simstudy.load_run(tmp_path / "run"), res)


# ----------------------------------------------------------------------------- strings and scalars for lists
def test_sizes_as_a_string(tmp_path):
    assert_clear_error(refused(tmp_path / "run", sizes="20,40"), "study.sizes", "20,40")


def test_rho_hats_as_a_string(tmp_path):
    assert_clear_error(refused(tmp_path / "run", rho_hats="0.5"), "study.rho_hats", "0.5")


def test_sizes_as_a_number(tmp_path):
    try:
        res = run(sizes=20, out=tmp_path / "run")
    except UserError as exc:
        clear_message(exc, "study.sizes", 20)
    else:  # read as [20]
        assert_same_records(res, run(sizes=[20]))


def test_positive_classes_as_a_string(tmp_path, letter):
    assert_clear_error(refused(tmp_path / "run", population={**letter, "positive": "ABC"}), "population.positive",
                       "ABC")


# ----------------------------------------------------------------------------- raw tracebacks
def test_runner_as_a_number(tmp_path):
    assert_clear_error(refused(tmp_path / "run", runner=5), "runner", 5)


def test_learner_class_instead_of_instance(tmp_path):
    assert_clear_error(refused(tmp_path / "run", learner=DecisionTreeClassifier), "learner", words=("instance",))


def test_learner_as_a_number(tmp_path):
    assert_clear_error(refused(tmp_path / "run", learner=5), "learner", "int")


def test_gaussian_folds_rho_as_text(tmp_path):
    assert_clear_error(refused(tmp_path / "run", population={"kind": "gaussian_folds", "rho": "0.5"}),
                       "population.rho", "0.5")


def test_population_kind_mapping_takes_the_schema_defaults():
    assert_same_records(run(population={"kind": "logistic"}), run(population="logistic"))


@pytest.mark.parametrize("settings, field, value", [
    ({"alpha": "0.05"}, "study.alpha", "0.05"), ({"alpha": float("nan")}, "study.alpha", "nan"),
    ({"seed": 1.5}, "study.seed", 1.5), ({"seed": -1}, "study.seed", -1), ({"K": True}, "study.K", True),
    ({"K": 1}, "study.K", 1), ({"replicates": True}, "study.replicates", True),
    ({"replicates": 2}, "study.replicates", 2), ({"sizes": [20.0]}, "study.sizes", 20.0),
    ({"sizes": [15]}, "study.sizes", 15), ({"sizes": [20, 20]}, "study.sizes", 20),
    ({"sizes": []}, "study.sizes", "[]"),
    ({"backend": "Fork"}, "runner.backend", "Fork"), ({"n_jobs": 0}, "runner.n_jobs", 0),
    ({"n_jobs": "2"}, "runner.n_jobs", "2"), ({"chunk_size": 0}, "runner.chunk_size", 0),
    ({"runner": {"max_failure_rate": float("nan")}}, "runner.max_failure_rate", "nan"),
    ({"runner": {"on_error": "Raise"}}, "runner.on_error", "Raise"),
    ({"runner": {"only_replicate": 20}}, "runner.only_replicate", 20),
    ({"paper": "Letter"}, "study.paper", "Letter"), ({"mu_true": "Exact"}, "study.mu_true", "Exact"),
    ({"loss": "zero-one"}, "study.loss", "zero-one"), ({"loss": "squared"}, "study.loss", "squared"),
    ({"population": {"kind": "logistic", "bayes_error": 0.7}}, "population.bayes_error", 0.7),
    ({"population": {"kind": "logistic", "bayes_error": 0.2, "label_noise": 1.5}}, "population.label_noise", 1.5),
    ({"learner": {"estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier", "max_depht": 3}}},
     "learner.estimator", "max_depht"),
    ({"learner": {"estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}, "engine": "fast"}},
     "learner.engine", "fast"),
], ids=lambda v: str(v)[:40])
def test_bad_values_refused_before_any_work(tmp_path, settings, field, value):
    """Values the Python road already refuses clearly (kept so that the new schema keeps them)."""
    assert_clear_error(refused(tmp_path / "run", **settings), field, value)


def test_run_directory_that_is_a_file(tmp_path):
    path = tmp_path / "file"
    path.write_text("mine")
    with pytest.raises(UserError) as excinfo:
        run(out=path)
    clear_message(excinfo.value, value=str(path))
    assert path.read_text() == "mine"


def test_run_directory_with_foreign_files_is_left_alone(tmp_path):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("mine")
    with pytest.raises(UserError) as excinfo:
        run(out=out)
    clear_message(excinfo.value, words=("not a simstudy run",))
    assert sorted(p.name for p in out.iterdir()) == ["chapter1.tex"]


# ----------------------------------------------------------------------------- re-aggregation and load_run
@pytest.fixture(scope="module")
def small_result():
    return run()


@pytest.mark.parametrize("settings, field, value", [({"alpha": "0.01"}, "study.alpha", "0.01"),
                                                    ({"alpha": 1.5}, "study.alpha", 1.5),
                                                    ({"seed": 5}, "study.seed", None),
                                                    ({"sizes": [40]}, "study.sizes", None)])
def test_reaggregate_refuses_bad_settings(small_result, settings, field, value):
    with pytest.raises(UserError) as excinfo:
        small_result.reaggregate(**settings)
    clear_message(excinfo.value, field, *(() if value is None else (value,)))


def test_reaggregate_rho_hats_as_a_string(small_result):
    with pytest.raises(UserError) as excinfo:
        small_result.reaggregate(rho_hats="0.5")
    clear_message(excinfo.value, "study.rho_hats", "0.5")


def test_reaggregate_with_a_numpy_level_equals_the_float(small_result):
    a, b = small_result.reaggregate(alpha=np.float64(0.01)), small_result.reaggregate(alpha=0.01)
    pd.testing.assert_frame_equal(a.tests, b.tests)


def test_load_run_of_a_missing_directory(tmp_path):
    with pytest.raises(UserError) as excinfo:
        simstudy.load_run(tmp_path / "nowhere")
    clear_message(excinfo.value, value=str(tmp_path / "nowhere"))


# ----------------------------------------------------------------------------- functions as settings
def test_loss_function_with_out_the_readme_example(tmp_path):
    from examples.custom_loss import asymmetric_cost

    out = tmp_path / "run"
    try:
        first = run(loss=asymmetric_cost, out=out)
    except UserError as exc:  # refused with a fix (give the import path), and nothing written
        clear_message(exc, "study.loss", words=("import path",))
        assert not out.exists()
        return
    again = run(loss="examples.custom_loss.asymmetric_cost", out=out)  # the same function by its path resumes
    assert again.manifest["computed_chunks"] == 0
    assert_same_records(first, again)


def test_lambda_loss_with_out_is_refused_before_any_work(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(UserError) as excinfo:
        run(loss=lambda y, y_hat: (y != y_hat).astype(float), out=out)
    clear_message(excinfo.value, "study.loss")
    assert not out.exists() or not any(out.iterdir())
    run(out=out)  # the directory takes a run afterwards


def test_lambda_loss_in_memory_is_fine():
    zero_one = run(loss="zero_one")
    res = run(loss=lambda y, y_hat: (np.asarray(y) != np.asarray(y_hat)).astype(float))
    np.testing.assert_array_equal(res.records["mu_hat"], zero_one.records["mu_hat"])


# ----------------------------------------------------------------------------- in-memory data, defaults, budget
def test_arrays_as_a_population():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2))
    y = (X[:, 0] + rng.standard_normal(300) > 0).astype(int)
    res = run(population=(X, y), sizes=[40], truth=True)
    assert int(res.summary["failed"].sum()) == 0
    truth = res.records["true_error"].to_numpy()
    assert np.all((truth >= 0) & (truth <= 1))
    # exact: true_error is the mean of the K = 10 fold models' risks (folds of 4 at n = 40), each a
    # count of the 300 rows, so 300 * 10 * true_error is a whole number
    assert np.isclose(truth[0] * 3000, round(truth[0] * 3000), atol=1e-6 * 3000)


def test_dataframe_as_a_population():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.standard_normal((300, 2)), columns=["a", "b"])
    frame["target"] = (frame["a"] > 0).astype(int)
    try:
        res = run(population=frame, sizes=[40])
    except UserError as exc:  # refused with the way to name the target
        clear_message(exc, "population", words=("target",))
    else:
        assert int(res.summary["failed"].sum()) == 0


def test_logistic_regression_preset_runs_on_the_compiled_kernel():
    res = run(learner="logistic_regression", replicates=5)
    assert res.manifest["learner"]["engine"] != "scikit-learn"


def test_a_size_that_cannot_fit_in_memory_is_refused():
    proc = _subprocess("""
        import simstudy
        try:
            simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[10**9], replicates=3,
                               n_jobs=1, progress=False)
        except simstudy.UserError as exc:
            print("REFUSED", " ".join(str(exc).split()))
    """, timeout=120, memory_gib=3)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert "REFUSED" in proc.stdout and ("memory" in proc.stdout.lower() or "GiB" in proc.stdout), proc.stdout


@pytest.mark.slow
def test_a_run_that_cannot_fit_is_refused_before_it_starts():
    proc = _subprocess("""
        import simstudy
        try:
            simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[20], replicates=10**8,
                               n_jobs=1, progress=False)
        except simstudy.UserError as exc:
            print("REFUSED", " ".join(str(exc).split()))
    """, timeout=60, memory_gib=3)
    assert "REFUSED" in proc.stdout, proc.stdout


def test_figures_draw_sizes_in_order_of_n():
    res = run(sizes=[40, 20, 30])
    for name, figure in res.figures().items():
        for axis in figure.axes:
            for line in axis.get_lines():
                x = np.asarray(line.get_xdata(), dtype=float)
                if len(x) > 2 and set(x) >= {20.0, 30.0, 40.0}:
                    assert np.all(np.diff(x) > 0), f"{name}: a line joins n in the order {x.tolist()}"


# ----------------------------------------------------------------------------- the registries
def _registered_then_run(kind: str) -> subprocess.CompletedProcess:
    """Register a name whose target cannot be imported (in a fresh interpreter), then use it."""
    use = {"STUDIES": 'simstudy.run_study("hostile_bogus", population="logistic", learner="tree", sizes=[20], '
                      'replicates=20, n_jobs=1, progress=False)',
           "LOSSES": 'simstudy.run_study("cv_variance", population="logistic", learner="tree", loss="hostile_bogus", '
                     'sizes=[20], replicates=20, n_jobs=1, progress=False)'}[kind]
    return _subprocess(f"""
        import simstudy
        simstudy.{kind}.register("hostile_bogus", "no_such_module_here:thing", "a typo in the target")
        try:
            {use}
        except simstudy.UserError as exc:
            print("CLEAR", " ".join(str(exc).split()))
    """)


@pytest.mark.parametrize("kind", [
    pytest.param("STUDIES"),
    pytest.param("LOSSES"),
])
def test_a_registered_name_with_a_bad_target(kind):
    proc = _registered_then_run(kind)
    assert proc.returncode == 0 and "CLEAR" in proc.stdout, proc.stderr[-800:]
    assert "hostile_bogus" in proc.stdout and "no_such_module_here" in proc.stdout


def test_a_registered_name_is_not_replaced_silently():
    with pytest.raises(ValueError, match="already registered"):
        simstudy.STUDIES.register("cv_variance", "no_such_module_here:Study", "a second cv_variance")
    assert simstudy.STUDIES["cv_variance"].load().name == "cv_variance"


# ----------------------------------------------------------------------------- the audit's Python API
@pytest.fixture(scope="module")
def audit_arrays():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    return X, (X[:, 0] + rng.standard_normal(60) > 0).astype(int)


AUDIT = dict(K=3, replicates=20, splits=1, nested_cv_replicates=20, n_jobs=1, progress=False)


def test_audit_without_nested_cv_writes_its_report(tmp_path, audit_arrays):
    from simstudy.audit import audit

    X, y = audit_arrays
    try:
        result = audit(X=X, y=y, out=tmp_path / "audit", **{**AUDIT, "nested_cv_replicates": 0})
    except UserError as exc:  # refused up front is acceptable too
        clear_message(exc, "nested_cv_replicates", 0)
    else:
        assert (tmp_path / "audit" / "report.md").is_file() and np.isfinite(result.estimate)


def test_audit_docstring_names_only_presets_that_exist():
    from simstudy.audit import audit

    doc = audit.__doc__
    part = doc[doc.index("learner :"):doc.index("loss :")]
    named = set(re.findall(r'"([a-z_]+)"', part))
    assert named and named <= set(simstudy.LEARNERS), f"not presets: {sorted(named - set(simstudy.LEARNERS))}"


def test_audit_replicates_message_states_the_real_default(audit_arrays):
    from simstudy.audit import audit

    X, y = audit_arrays
    default = inspect.signature(audit).parameters["replicates"].default
    with pytest.raises(ConfigError) as excinfo:
        audit(X=X, y=y, **{**AUDIT, "replicates": 5})
    message = assert_clear_error(excinfo, "replicates", 5)
    for stated in re.findall(r"\(([\d,]+) by default\)", message):
        assert int(stated.replace(",", "")) == default


def test_audit_learner_class_instead_of_instance(audit_arrays):
    from simstudy.audit import audit

    X, y = audit_arrays
    with pytest.raises(UserError) as excinfo:
        audit(X=X, y=y, learner=DecisionTreeClassifier, **AUDIT)
    assert_clear_error(excinfo, "learner", words=("instance",))


@pytest.mark.parametrize("settings, field", [({"K": 2}, "K"), ({"alpha": "0.05"}, "alpha"), ({"seed": "1"}, "seed"),
                                             ({"alpha": 0.7}, "alpha"), ({"replicates": 19}, "replicates")])
def test_audit_bad_settings_refused(audit_arrays, settings, field):
    from simstudy.audit import audit

    X, y = audit_arrays
    with pytest.raises(UserError) as excinfo:
        audit(X=X, y=y, **{**AUDIT, **settings})
    assert_clear_error(excinfo, field, next(iter(settings.values())))


def test_audit_missing_features_refused(audit_arrays):
    from simstudy.audit import audit

    X, y = audit_arrays
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(UserError) as excinfo:
        audit(X=X, y=y, **AUDIT)
    assert_clear_error(excinfo, "X", words=("missing",))


# ----------------------------------------------------------------------------- the pure inference functions
# A clear error of a pure function is a ValueError naming the argument (ConfigError is one), as in
# scipy; a correct result is the documented value. Never a confident number from impossible input.
FOLD_MEANS = np.array([0.2, 0.3, 0.25, 0.1, 0.15])


def test_cv_t_test_with_an_infinite_fold_mean():
    try:
        res = inference.cv_t_test(np.array([0.2, np.inf, 0.3]), mu0=0.2)
    except ValueError as exc:
        assert "fold_means" in str(exc)
    else:
        assert np.isnan(res.pvalue), f"p-value {res.pvalue} from an infinite fold mean"


def test_mcnemar_with_fractional_counts():
    with pytest.raises(ValueError, match="whole"):
        inference.mcnemar_test(1.5, 3)


@pytest.mark.parametrize("call, argument", [
    (lambda: inference.cv_t_test(FOLD_MEANS, mu0=0.2, rho=1.0), "rho"),
    (lambda: inference.cv_t_test(FOLD_MEANS[:1], mu0=0.2), "fold_means"),
    (lambda: inference.cv_t_test(FOLD_MEANS, mu0=0.2, alternative="smaller"), "alternative"),
    (lambda: inference.cv_t_test(FOLD_MEANS, mu0=0.2).confidence_interval(95), "confidence"),
    (lambda: inference.cv_clt_test(np.zeros(10), np.arange(9) % 5), "folds"),
    (lambda: inference.cv_clt_test(np.zeros(10), np.arange(10) % 5, variance="within_fold"), "variance"),
    (lambda: inference.binomial_test(12, 10, mu0=0.5), "successes"),
    (lambda: inference.binomial_test(2, 10, mu0=0.5, method="wilsn"), "method"),
    (lambda: inference.five_by_two_t_test(np.ones((4, 2))), "shape"),
    (lambda: inference.resampled_t_test(np.array([0.1, 0.2, 0.3]), n_train=10, n_test=0), "n_test"),
    (lambda: inference.t_test(0.2, 0.1, np.nan, 0.0), "df"),
], ids=["rho=1", "one fold", "alternative", "level 95", "folds length", "variance typo", "errors>n", "method typo",
        "5x2 shape", "n_test=0", "df nan"])
def test_inference_refuses_impossible_input(call, argument):
    with pytest.raises(ValueError) as excinfo:
        call()
    assert argument in str(excinfo.value)


# ----------------------------------------------------------------------------- CV inference on the user's model
@pytest.fixture(scope="module")
def cv_data():
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] + rng.standard_normal(60) > 0).astype(int)
    return X, y, KFold(5, shuffle=True, random_state=0)


@pytest.mark.parametrize("estimator", ["StringTree", "ScalarTree", "AlienLabelTree"])
def test_cvinference_checks_the_predictions(cv_data, estimator):
    import hostile_parts
    from simstudy.cvinference import cross_validate_losses

    X, y, folds = cv_data
    with pytest.raises(ValueError) as excinfo:
        cross_validate_losses(getattr(hostile_parts, estimator)(random_state=0), X, y, cv=folds)
    assert "predict" in str(excinfo.value)


def test_cvinference_fold_index_out_of_range(cv_data):
    from simstudy.cvinference import from_predictions

    X, y, folds = cv_data
    with pytest.raises(ValueError) as excinfo:
        from_predictions(y, y, [np.arange(0, 30), np.arange(30, 61)])
    assert "fold" in str(excinfo.value)


@pytest.mark.parametrize("case", ["X short", "loss NaN", "predictions short", "folds overlap"])
def test_cvinference_refuses_bad_input(cv_data, case):
    import hostile_parts
    from simstudy.cvinference import cross_validate_losses, from_predictions

    X, y, folds = cv_data
    tests = [test for _, test in folds.split(X)]
    calls = {"X short": lambda: cross_validate_losses(DecisionTreeClassifier(random_state=0), X[:-1], y, cv=folds),
             "loss NaN": lambda: cross_validate_losses(DecisionTreeClassifier(random_state=0), X, y, cv=folds,
                                                       loss=hostile_parts.nan_on_full),
             "predictions short": lambda: from_predictions(y, y[:-1], tests),
             "folds overlap": lambda: from_predictions(y, y, [np.arange(0, 40), np.arange(30, 60)])}
    with pytest.raises(ValueError):
        calls[case]()


# ----------------------------------------------------------------------------- command-line twins
def _cli(*args, cwd=ROOT, timeout=300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([SIMSTUDY, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout,
                          **kwargs)


def test_help_mentions_the_audit():
    proc = _cli("--help")
    assert proc.returncode == 0
    assert "simstudy audit" in proc.stdout


def test_cli_overwrite_no_keeps_the_previous_run(tmp_path):
    out = tmp_path / "run"
    small = ["study.sizes=[20]", "study.replicates=20", "runner.n_jobs=1", "runner.progress=false"]
    assert _cli(*small, "study.seed=1", f"hydra.run.dir={out}").returncode == 0
    before = file_digest(out / "replicates.parquet")
    proc = _cli(*small, "study.seed=2", "runner.overwrite=no", f"hydra.run.dir={out}")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert file_digest(out / "replicates.parquet") == before


def test_cli_size_that_cannot_fit_is_refused(tmp_path):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    proc = _cli("study.sizes=[1000000000]", "study.replicates=3", "runner.n_jobs=1", "runner.progress=false",
                f"hydra.run.dir={tmp_path / 'run'}", timeout=120, preexec_fn=limit)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    assert "memory" in proc.stderr.lower()
