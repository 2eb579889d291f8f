"""The Python road's typed settings (simstudy.schema), in-memory data as a population
(simstudy.populations.in_memory), functions as losses by import path and the run budget
(simstudy.engine.budget)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy.engine.budget import MAX_SECONDS, PROCESS_BYTES, Budget, check_budget, estimate_budget
from simstudy.engine.config import RunnerConfig
from simstudy.engine.plan import function_path
from simstudy.errors import ConfigError
from simstudy.populations.in_memory import in_memory_population
from simstudy.schema import typed_settings

SMALL = dict(learner="tree", sizes=[40], replicates=20, n_jobs=1, progress=False)


@dataclass
class Schema:
    flag: bool = False
    count: int = 1
    level: float = 0.05
    sizes: List[int] = None
    label: Optional[str] = None


@pytest.mark.parametrize("values, expected", [
    ({"flag": np.bool_(True)}, {"flag": True}), ({"count": np.int32(3)}, {"count": 3}),
    ({"level": np.float32(0.5)}, {"level": 0.5}), ({"sizes": np.array([20, 40])}, {"sizes": [20, 40]}),
    ({"sizes": (np.int64(20),)}, {"sizes": [20]}), ({"label": None}, {"label": None}),
])
def test_values_of_their_type_are_converted(values, expected):
    out = typed_settings(Schema, values, "x", "the schema")
    assert out == expected and all(type(out[k]) is type(v) for k, v in expected.items())


@pytest.mark.parametrize("values, words", [
    ({"flag": "false"}, ("x.flag", "True or False")), ({"flag": 0}, ("x.flag",)),
    ({"count": 2.0}, ("x.count", "integer")), ({"count": True}, ("x.count",)),
    ({"level": "0.05"}, ("x.level", "number")), ({"sizes": "20,40"}, ("x.sizes", "list")),
    ({"sizes": 20}, ("x.sizes", "list")), ({"sizes": [20, "40"]}, ("x.sizes", "integer")),
    ({"cuont": 2}, ("x.cuont", "did you mean 'count'")),
])
def test_values_of_another_type_are_refused(values, words):
    with pytest.raises(ConfigError) as excinfo:
        typed_settings(Schema, values, "x", "the schema")
    assert all(w in str(excinfo.value) for w in words), str(excinfo.value)


def test_runner_overwrite_text_is_refused_and_numpy_bool_read():
    with pytest.raises(ConfigError, match="runner.overwrite='no'"):
        simstudy.run_study("cv_variance", population="logistic", overwrite="no", **SMALL)
    assert typed_settings(RunnerConfig, {"overwrite": np.False_}, "runner", "r") == {"overwrite": False}


def _arrays(rows=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, 3))
    return X, (X[:, 0] + 0.5 * rng.standard_normal(rows) > 0).astype(int)


def test_arrays_frame_and_mapping_give_the_same_records():
    X, y = _arrays()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    runs = [simstudy.run_study("cv_variance", population=spec, truth=True, **SMALL)
            for spec in ((X, y), (frame, "label"), {"data": frame, "target": "label"})]
    for other in runs[1:]:
        pd.testing.assert_series_equal(runs[0].records["mu_hat"], other.records["mu_hat"])
    truth = runs[0].records["true_error"].to_numpy()
    # the mean of the K = 10 fold models' risks (equal folds at n = 40), each a count of the rows
    np.testing.assert_allclose(truth * len(y) * 10, np.round(truth * len(y) * 10), atol=1e-8)


def test_in_memory_truth_is_the_error_over_all_rows():
    X, y = _arrays(rows=50)
    pop = in_memory_population((X, y))
    assert pop.size == 50 and pop.task == "classification" and pop.replace
    predict = lambda Z: (Z[:, 0] > 0).astype(int)  # noqa: E731
    assert pop.exact_error(predict) == pytest.approx(np.mean(predict(X) != y))
    assert in_memory_population((X, X[:, 1] * 0.5)).task == "regression"
    assert not in_memory_population({"data": X, "target": y, "replace": False}).replace


@pytest.mark.parametrize("spec, words", [
    (lambda X, y, f: f, ("target",)), (lambda X, y, f: (f, "lable"), ("lable", "columns")),
    (lambda X, y, f: (X, y[:-1]), ("shape",)), (lambda X, y, f: (X, np.zeros(len(y))), ("single class",)),
    (lambda X, y, f: {"data": f, "target": "label", "taks": "regression"}, ("taks", "task")),
    (lambda X, y, f: (np.where(X > 1, np.nan, X), y), ("missing",)),
])
def test_bad_in_memory_data_is_refused(spec, words):
    X, y = _arrays(rows=30)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    with pytest.raises(ConfigError) as excinfo:
        in_memory_population(spec(X, y, frame))
    assert all(w in str(excinfo.value) for w in words), str(excinfo.value)


def test_function_path_of_module_functions_only():
    from examples.custom_loss import asymmetric_cost

    assert function_path(asymmetric_cost) == "examples.custom_loss.asymmetric_cost"
    assert function_path(lambda y, p: y) is None

    def local(y, p):
        return y

    assert function_path(local) is None


def test_budget_estimate_grows_with_the_work_and_refuses_with_the_override():
    @dataclass
    class Config:
        sizes: list
        replicates: int
        K: int = 10

    small = estimate_budget(Config([20], 100), n_jobs=1)
    assert isinstance(small, Budget) and small.memory < PROCESS_BYTES + 2**20 and small.seconds < 1
    bigger = estimate_budget(Config([20, 200], 1000), n_jobs=1, n_features=10)
    assert bigger.memory > small.memory and bigger.seconds > small.seconds
    with pytest.raises(ConfigError, match="runner.check_budget=false"):
        check_budget(Config([10**12], 3), RunnerConfig(n_jobs=1))
    assert check_budget(Config([10**12], 3), RunnerConfig(n_jobs=1, check_budget=False)).memory > 2**40
    two = estimate_budget(Config([20], 100), n_jobs=2)
    assert two.memory >= small.memory + 2 * PROCESS_BYTES  # the main process and two workers
    many = estimate_budget(Config([20], 100), n_jobs=1, fits_per_replicate=1100)
    assert many.seconds == pytest.approx(100 * small.seconds)


def test_budget_counts_the_study_s_own_fits_and_refuses_before_any_work():
    """cv_clt declares its fits per replicate (every learner's folds, 5x2, splits and truths):
    2 million replicates at n=100 pass the data-free check (K + 1 fits) but are refused once the
    study is built, naming the override; with the override the same estimate is returned."""
    from simstudy.studies.resolve import resolve_study

    kw = dict(population="logistic", sizes=[100], replicates=2 * 10**6, n_jobs=1, progress=False)
    with pytest.raises(ConfigError, match="would clearly not finish.*runner.check_budget=false"):
        simstudy.run_study("cv_clt", **kw)
    config = resolve_study("cv_clt").Config(sizes=[100], replicates=2 * 10**6)
    fits = resolve_study("cv_clt")(config).fits_per_replicate()
    assert fits > 100 * (config.K + 1)
    with pytest.raises(ConfigError, match="runner.check_budget=false"):
        check_budget(config, RunnerConfig(n_jobs=1), fits_per_replicate=fits)
    assert check_budget(config, RunnerConfig(n_jobs=1, check_budget=False), fits_per_replicate=fits).seconds > MAX_SECONDS


def test_logistic_regression_preset_uses_newton_cholesky():
    res = simstudy.run_study("cv_variance", population="logistic", learner="logistic_regression", sizes=[40],
                             replicates=5, n_jobs=1, progress=False)
    assert res.manifest["learner"]["engine"] != "scikit-learn"


def test_a_refused_directory_names_the_python_arguments(tmp_path):
    """From Python the refusal names ``out`` and ``overwrite=True`` (the command line's names are
    ``hydra.run.dir`` and ``runner.overwrite=true``); ``overwrite=True`` then discards the old run."""
    from simstudy.errors import RunDirectoryError

    simstudy.run_study("cv_variance", population="logistic", out=tmp_path / "run", **SMALL)
    with pytest.raises(RunDirectoryError) as refused:
        simstudy.run_study("cv_variance", population="logistic", out=tmp_path / "run", seed=5, **SMALL)
    message = str(refused.value)
    assert f"out={str(tmp_path / 'run')!r} holds a run of a different configuration" in message
    assert "pass overwrite=True" in message and "hydra" not in message and "runner.overwrite" not in message
    again = simstudy.run_study("cv_variance", population="logistic", out=tmp_path / "run", seed=5, overwrite=True,
                               **SMALL)
    assert len(again.records) == 20
