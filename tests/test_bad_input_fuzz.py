"""Bad values for every config group through the command line (issue 12, "Done means").

Each case runs ``python -m simstudy.cli`` in an empty working directory with a bad value for
one field (study fields of every registered study, population fields of every preset, learner
fields, runner fields, ``hydra.run.dir``) and asserts: exit status 2, one ``simstudy: error:``
paragraph that names the field, no traceback, and no file written anywhere (not in the working
directory, not in the run directory). No case gets as far as computing a replicate.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, make_letter_like

from simstudy.registry import LEARNERS, POPULATIONS, STUDIES

#: (overrides, what the message must name). {data}, {small}, {dir}, {empty}, {binary}, {file},
#: {missing} and {foreign} are files prepared by the fixture; so is the module truthless_population
#: (a user's population without a truth), importable in every case.
CASES = [
    # study=cv_variance (the default study)
    (["study.sizes=[]"], "study.sizes"),
    (["study.sizes=[1]"], "study.sizes"),
    (["study.sizes=[20,abc]"], "study.sizes"),
    (["study.K=1"], "study.K"),
    (["study.K=abc"], "study.K"),
    (["study.K=30"], "study.sizes"),
    (["study.replicates=0"], "study.replicates"),
    (["study.replicates=1.5"], "study.replicates"),
    (["study.seed=-1"], "study.seed"),
    (["study.alpha=1.5"], "study.alpha"),
    (["study.alpha=0"], "study.alpha"),
    (["study.rho_hats=[1.2]"], "study.rho_hats"),
    (["study.loss=nope"], "study.loss"),
    (["study.loss=squared"], "study.loss"),
    (["study.truth=true", "population=custom", "population._target_=truthless_population.Truthless"], "study.truth"),
    (["study.mu_true=bogus"], "study.mu_true"),
    (["study.truth=maybe"], "study.truth"),
    (["study.nope=1"], "study.nope"),
    (["study=nope"], "study"),
    # study=cv_clt
    (["study=cv_clt", "study.replicates=-5"], "study.replicates"),
    (["study=cv_clt", "study.comparisons=[[tree,nope]]"], "study.comparisons"),
    (["study=cv_clt", "study.repeated_splits=0"], "study.repeated_splits"),
    (["study=cv_clt", "study.alpha=1"], "study.alpha"),
    (["study=cv_clt", "study.sizes=[5]"], "study.sizes"),
    (["study=cv_clt", "study.nested_cv_repetitions=0"], "study.nested_cv_repetitions"),
    (["study=cv_clt", "learner=knn"], "learner=knn"),
    # study=cv_clt_regression (cv_clt with regressors and the squared loss): on a classification population
    (["study=cv_clt_regression", "study.replicates=2"], "study.loss='squared' is a regression loss"),
    # study=nedelko_fisher
    (["study=nedelko_fisher", "study.sample_size=[1]"], "study.sample_size"),
    (["study=nedelko_fisher", "study.bayes_error=[0.7]"], "study.bayes_error"),
    (["study=nedelko_fisher", "study.bootstrap=-1"], "study.bootstrap"),
    (["study=nedelko_fisher", "study.rhat_method=nope"], "study.rhat_method"),
    (["study=nedelko_fisher", "study.rhat_grid=[2]"], "study.rhat_grid"),
    (["study=nedelko_fisher", "population=letter"], "population=letter"),
    # study=nedelko_histogram
    # study=rho_hat
    (["study=rho_hat", "study.splits=0"], "study.splits"),
    (["study=rho_hat", "study.K=2"], "study.K"),
    (["study=rho_hat", "study.power_shift=-1"], "study.power_shift"),
    (["study=rho_hat", "study.sizes=[25]"], "study.sizes"),
    (["study=nedelko_histogram", "study.cells=0"], "study.cells"),
    (["study=nedelko_histogram", "study.grid_steps=0"], "study.grid_steps"),
    (["study=nedelko_histogram", "study.sample_size=abc"], "study.sample_size"),
    (["study=nedelko_histogram", "study.sample_size=1"], "study.sample_size"),
    # population presets
    (["population.bayes_error=0.7"], "population.bayes_error"),
    (["population.bayes_error=abc"], "population.bayes_error"),
    (["population=gaussian_folds", "population.rho=1.5"], "population.rho"),
    (["population=gaussian_folds", "population.sigma=-1"], "population.sigma"),
    (["population=tabular"], "population.path"),
    (["population=tabular", "population.source=nope"], "population.source"),
    (["population=letter", "population.path={missing}"], "population.path"),
    (["population=letter", "population.path={dir}"], "population.path"),
    (["population=letter", "population.path={empty}"], "population.path"),
    (["population=letter", "population.path={binary}"], "population.path"),
    (["population=letter", "population.path={data}", "population.label_column=99"], "population.label_column"),
    (["population=letter", "population.path={data}", "population.missing=nope"], "population.missing"),
    (["population=letter", "population.path={data}", "population.positive=[nope]"], "population.positive"),
    (["population=letter", "population.path={small}", "population.positive=[A,B]", "population.replace=false",
      "study.sizes=[40]"],
     "population.replace=false"),
    (["population=forest", "population.replace=maybe"], "population.replace"),
    (["population=custom"], "population._target_"),
    (["population=custom", "population._target_=nope.Nope"], "population._target_"),
    (["population=nope"], "population"),
    (["population=gaussian_linear", "population.p=0", "learner=ols", "study.loss=squared"], "population.p"),
    (["population=friedman1", "population.sigma=0", "learner=tree_regressor", "study.loss=squared"],
     "population.sigma"),
    (["population=logistic", "population.label_noise=2"], "population.label_noise"),
    (["population=logistic", "population.noise_truth=nope"], "population.noise_truth"),
    # the benchmark's mechanisms
    (["population=gaussian_classes", "population.positive_rate=1.5"], "population.positive_rate"),
    (["population=imbalanced_classes", "population.separation=0"], "population.separation"),
    (["population=sparse_classes", "population.support=500"], "population.support"),
    (["population=hastie_10_2", "population.p=1"], "population.p"),
    (["population=sparse_linear", "population.support=0", "learner=ols", "study.loss=squared"], "population.support"),
    (["population=student_t_linear", "population.df=2", "learner=ols", "study.loss=squared"], "population.df"),
    (["population=student_t_linear", "population.dff=3"], "population.dff"),
    (["population=heteroscedastic_linear", "population.gamma=-1", "learner=ols", "study.loss=absolute"],
     "population.gamma"),
    (["population=packaged"], "population.dataset"),
    (["population=packaged", "population.dataset=nope"], "population.dataset"),
    (["population=breast_cancer", "population.replace=maybe"], "population.replace"),
    (["population=wine", "population.label_noise=2"], "population.label_noise"),
    (["population=digits", "population.dataset=nope"], "population.dataset"),
    (["population=iris", "study.loss=squared"], "study.loss"),
    (["population=diabetes"], "study.loss"),
    (["population=fair", "learner=ridge", "study.loss=brier"], "learner='ridge'"),
    (["population=anes96", "population.noise_truth=nope"], "population.noise_truth"),
    (["population=modechoice", "learner=ols"], "learner='ols'"),
    (["population=randhie", "learner=tree_regressor", "study.loss=log_loss"], "study.loss"),
    (["population=star98", "population.label_noise=0.1", "learner=ols", "study.loss=squared"],
     "population.label_noise"),
    (["population=engel", "population.replace=false", "study.sizes=[300]", "learner=ols", "study.loss=squared"],
     "population.replace=false"),
    (["population=grunfeld", "population.replace=maybe"], "population.replace"),
    (["population=openml_task"], "population.task_id"),
    (["population=openml_task", "population.task_id=0"], "population.task_id"),
    # learner presets
    (["+learner.estimator.foo=1"], "learner.estimator"),
    (["learner.engine=nope"], "learner.engine"),
    (["+learner.estimator.max_depth=-1"], "learner.estimator"),
    (["learner=knn", "learner.estimator.n_neighbors=0"], "learner.estimator"),
    (["learner=knn", "learner.estimator.n_neighbors=abc"], "learner.estimator"),
    (["learner=ridge", "learner.estimator._target_=nope.Nope"], "learner.estimator._target_"),
    (["learner=lda", "learner.estimator._target_=sklearn.linear_model.Ridge"], "learner"),
    (["learner=logistic_regression", "learner.fast_path=maybe"], "learner.fast_path"),
    (["learner=random_forest", "learner.engine=numba"], "learner.engine"),
    (["learner=custom"], "learner._target_"),
    (["learner=ols"], "learner='ols'"),
    (["learner=ridge_regressor", "learner.estimator.alpha=-1"], "learner.estimator"),
    (["learner=tree_regressor", "study.loss=nope"], "study.loss"),
    (["learner=knn_regressor", "study.loss=squared"], "study.loss"),
    (["learner=gradient_boosting", "learner.estimator.max_iter=0"], "learner.estimator"),
    (["learner=gradient_boosting_regressor", "learner.estimator.learning_rate=-1"], "learner.estimator"),
    (["learner=random_forest_regressor", "learner.estimator.n_estimators=0"], "learner.estimator"),
    (["learner=nope"], "learner"),
    # runner
    (["runner.n_jobs=0"], "runner.n_jobs"),
    (["runner.n_jobs=1000"], "runner.n_jobs"),
    (["runner.n_jobs=two"], "runner.n_jobs"),
    (["runner.chunk_size=0"], "runner.chunk_size"),
    (["runner.backend=nope"], "runner.backend"),
    (["runner.on_error=ignore"], "runner.on_error"),
    (["runner.max_failure_rate=2"], "runner.max_failure_rate"),
    (["runner.only_replicate=-1"], "runner.only_replicate"),
    (["runner.only_replicate=60"], "runner.only_replicate"),
    (["runner.progress=maybe"], "runner.progress"),
    (["study=nedelko_histogram", "runner.only_replicate=5"], "runner.only_replicate"),
    (["study=nedelko_fisher", "study.sample_size=[20]", "study.bayes_error=[0.2]", "study.replicates=300", "runner.only_replicate=300"],
     "runner.only_replicate"),
    (["runner=nope"], "runner"),
    # where the outputs go
    (["hydra.run.dir=/proc/simstudy/x"], "hydra.run.dir"),
    (["hydra.run.dir={file}"], "hydra.run.dir"),
    (["hydra.run.dir={file}/sub"], "hydra.run.dir"),
    (["hydra.run.dir={foreign}"], "hydra.run.dir"),
]

BASE = ["study.sizes=[20,40]", "study.replicates=60", "runner.n_jobs=1", "runner.progress=false"]
#: Studies without training-set sizes: the base overrides would not apply.
OWN_FIELDS = ("study=nedelko_fisher", "study=nedelko_histogram", "study=nope")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-files")
    X, y = make_letter_like(rows=300)
    rows = [",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)]
    paths = {"data": root / "letters.data", "small": root / "small.data", "dir": root / "a-directory",
             "empty": root / "empty.csv", "binary": root / "binary.data", "file": root / "a-file",
             "missing": root / "missing.data", "foreign": root / "foreign"}
    paths["data"].write_text("\n".join(rows) + "\n")
    paths["small"].write_text("\n".join(rows[:30]) + "\n")
    paths["dir"].mkdir()
    paths["empty"].write_text("")
    paths["binary"].write_bytes(bytes(range(256)) * 8)
    paths["file"].write_text("not a directory\n")
    paths["foreign"].mkdir()
    (paths["foreign"] / "notes.txt").write_text("mine\n")
    modules = root / "modules"
    modules.mkdir()
    (modules / "truthless_population.py").write_text(TRUTHLESS)
    return {**{k: str(v) for k, v in paths.items()}, "modules": str(modules)}


TRUTHLESS = '''"""A population without a truth (no evaluation set, no exact risks)."""
import numpy as np
from simstudy.populations.base import Population, Sample


class Truthless(Population):
    name = "truthless"

    def sample(self, n, rng):
        X = rng.standard_normal((n, 2))
        return Sample(X=X, y=(X[:, 0] > 0).astype(np.int64))

    def seed_params(self):
        return {"kind": "truthless"}
'''


def _env(files):
    """The cases' environment: simstudy's checkout and the fixture's modules importable."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), files["modules"]])}


def _command(overrides, files, run_dir):
    args = [o.format(**files) for o in overrides]
    base = [] if any(o in OWN_FIELDS for o in overrides) else BASE
    if any(o.startswith("study=cv_clt") for o in overrides):
        base = ["study.replicates=60", "runner.n_jobs=1", "runner.progress=false"]
    own_dir = any(a.startswith("hydra.run.dir=") for a in args)
    return [sys.executable, "-m", "simstudy.cli", *base, *args] + ([] if own_dir else [f"hydra.run.dir={run_dir}"])


#: Runs each case in a process forked from one that has imported simstudy, Hydra, pandas and
#: scikit-learn already: the same entry point (simstudy.cli.run), a fresh process per case with
#: its own working directory, stdout and stderr, without paying the imports 80 times.
DRIVER = r"""
import json, os, sys
import hydra, pandas, sklearn.base, sklearn.tree, sklearn.neighbors, sklearn.linear_model  # noqa: F401
import simstudy.cli.run, simstudy.engine.execution, simstudy.populations, simstudy.learners  # noqa: F401
from simstudy.registry import STUDIES
for entry in STUDIES.values():
    entry.load()
cases, running, status = json.load(open(sys.argv[1])), {}, {}
def reap():
    pid, code = os.wait()
    status[running.pop(pid)] = os.waitstatus_to_exitcode(code)
for i, case in enumerate(cases):
    if len(running) >= 3:
        reap()
    pid = os.fork()
    if pid == 0:
        os.chdir(case["cwd"])
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(case[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        sys.argv = ["simstudy", *case["argv"]]
        try:
            simstudy.cli.run.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    running[pid] = i
while running:
    reap()
json.dump(status, open(sys.argv[2], "w"))
"""


class Outcome:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture(scope="module")
def outcomes(files, tmp_path_factory):
    """Every case run once: (process outcome, working directory, run directory)."""
    root = tmp_path_factory.mktemp("fuzz-runs")
    cases = []
    for i, (overrides, _) in enumerate(CASES):
        cwd = root / f"cwd{i}"
        cwd.mkdir()
        argv = _command(overrides, files, root / f"run{i}")[3:]
        cases.append({"argv": argv, "cwd": str(cwd), "out": str(root / f"{i}.out"), "err": str(root / f"{i}.err")})
    (root / "cases.json").write_text(json.dumps(cases))
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(root / "cases.json"), str(root / "status.json")],
                          cwd=root, env=_env(files), capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stderr
    status = json.loads((root / "status.json").read_text())
    return [(Outcome(status[str(i)], Path(c["out"]).read_text(), Path(c["err"]).read_text()), Path(c["cwd"]),
             root / f"run{i}") for i, c in enumerate(cases)]


def test_a_case_run_as_its_own_process_gives_the_same_outcome(outcomes, files, tmp_path):
    """The forked runs behave as plain ``python -m simstudy.cli`` runs (checked on two cases)."""
    for i in (0, len(CASES) - 1):
        cwd = tmp_path / f"cwd{i}"
        cwd.mkdir()
        proc = subprocess.run(_command(CASES[i][0], files, outcomes[i][2]), cwd=cwd, capture_output=True, text=True,
                              env=_env(files), timeout=300)
        assert (proc.returncode, proc.stdout, proc.stderr) == (outcomes[i][0].returncode, outcomes[i][0].stdout,
                                                               outcomes[i][0].stderr)


def test_the_cases_cover_every_group():
    assert len(CASES) >= 40
    text = " ".join(" ".join(o) for o, _ in CASES)
    def builtin(registry):  # other tests register examples' parts (bootstrap632): not the package's
        return [name for name in registry if registry[name].target.startswith("simstudy.")]

    for study in builtin(STUDIES):
        assert study == "cv_variance" or f"study={study}" in text, study
    for population in builtin(POPULATIONS):
        assert population == "logistic" or f"population={population}" in text, population
    for learner in builtin(LEARNERS):
        assert learner == "tree" or f"learner={learner}" in text, learner
    assert "runner." in text and "hydra.run.dir=" in text


@pytest.mark.parametrize("case", range(len(CASES)), ids=[" ".join(o) for o, _ in CASES])
def test_bad_value_is_refused_with_a_message_naming_the_field(case, outcomes, files):
    overrides, field = CASES[case]
    proc, cwd, run_dir = outcomes[case]
    shown = proc.stdout + proc.stderr
    assert proc.returncode == 2, shown
    assert "Traceback" not in shown and "HYDRA_FULL_ERROR" not in shown, shown
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("simstudy: error: "), shown
    assert field in errors[0], errors[0]
    assert list(cwd.iterdir()) == [], "files written in the working directory"
    assert not run_dir.exists(), "run directory left behind"
    assert sorted(os.listdir(files["foreign"])) == ["notes.txt"]
    assert not Path(files["dir"], "sub").exists()
