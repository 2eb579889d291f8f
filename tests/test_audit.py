"""simstudy audit: bad input (exit 2, one line, no traceback, before any simulation), the
recommendation rule, and a small end-to-end audit through the Python call and the CLI."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simstudy.audit import audit
from simstudy.audit.recommend import recommend
from simstudy.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "simstudy.cli", "audit", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["missing.csv"], "missing.csv"),
    (["{file}", "--learner", "nope"], "--learner='nope'"),
    (["{file}", "-K", "2"], "K=2"),
    (["{file}", "--replicates", "5"], "replicates=5"),
    (["{file}", "--alpha", "0.7"], "alpha=0.7"),
    (["{file}", "--label-column", "middle"], "--label-column"),
    (["{file}", "--param", "oops"], "--param='oops'"),
    (["{file}", "--slack", "-1"], "slack=-1"),
    (["{file}", "--confidence", "2"], "confidence=2"),
    (["{file}", "-K", "150"], "too few"),
    (["{file}", "--rule", "adaptive"], "rule='adaptive'"),
    (["{file}", "--nested-cv-replicates", "-1"], "nested_cv_replicates=-1"),
])
def test_bad_input_exit_2_without_traceback(tmp_path, letter_like_file, args, words):
    path = letter_like_file[0]
    proc = _cli(*[a.replace("{file}", str(path)) for a in args], "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("simstudy audit: error:") and words in proc.stderr
    assert not any(tmp_path.glob("audit_*"))


def test_report_folder_that_is_not_an_audit_is_refused(tmp_path, letter_like_file):
    """-o DIR with someone else's files: exit 2 before any simulation, nothing overwritten; a previous audit's
    folder, an empty or a new one is accepted."""
    from simstudy.audit.report import check_report_folder

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "report.md").write_text("my notes\n")
    proc = _cli(str(letter_like_file[0]), "--no-progress", "-o", str(folder), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "holds files that are not an audit's (report.md)" in proc.stderr
    assert (folder / "report.md").read_text() == "my notes\n"
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        audit(X=np.zeros((100, 2)), y=np.arange(100) % 2, out=folder / "report.md", progress=False)
    (folder / "report.md").write_text("# CV audit: tree on x (100 rows)\n")
    check_report_folder(folder)
    check_report_folder(tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    check_report_folder(tmp_path / "empty")


@pytest.mark.parametrize("rule", ["sequential", "fixed"])
def test_audit_without_nested_cv_writes_its_report(tmp_path, rule):
    """nested_cv_replicates=0 (nested CV not simulated) runs to the end and says so, under either rule; the report
    states the rule and its exact errors."""
    from conftest import make_letter_like

    X, y = make_letter_like(200, seed=1)
    res = audit(X=X, y=(y < "N").astype(int), replicates=20, nested_cv_replicates=0, splits=1, K=5, rule=rule,
                n_jobs=1, progress=False, out=tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text()
    assert "nested_cv | not simulated" in text and "Nested CV was not simulated" in text
    assert (tmp_path / "out" / "figures" / "audit.png").exists() and res.settings["rule"] == rule
    assert f"Rule ({rule})" in text and "exact" in text
    assert ("P(trusted) = 0.000%" in text) if rule == "sequential" else ("20 replicates:" in text)


def test_bad_arrays_refused():
    with pytest.raises(ConfigError, match="not both"):
        audit("x.csv", X=np.zeros((10, 2)), y=np.zeros(10))
    with pytest.raises(ConfigError, match="single class"):
        audit(X=np.zeros((100, 2)), y=np.zeros(100), progress=False)
    with pytest.raises(ConfigError, match="same length"):
        audit(X=np.zeros((100, 2)), y=np.zeros(99), progress=False)


def _tests(sizes, powers, replicates=200):
    """A hand-made tests table: sizes as rejection counts of ``replicates`` (per procedure or one for all)."""
    reps = replicates if isinstance(replicates, dict) else dict.fromkeys(sizes, replicates)
    counts = {p: round(s * reps[p]) for p, s in sizes.items()}
    return pd.DataFrame({"procedure": list(sizes), "size": [counts[p] / reps[p] for p in sizes],
                         "size_count": list(counts.values()), "replicates": [reps[p] for p in sizes],
                         "power": [powers[p] for p in sizes], "mean_width": 1.0})


def test_recommendation_rule():
    at_n = _tests({"rho_hat=0": 0.10, "cv_clt": 0.055, "nadeau_bengio": 0.02, "oracle_rho": 0.01},
                  {"rho_hat=0": 0.9, "cv_clt": 0.7, "nadeau_bengio": 0.5, "oracle_rho": 0.95})
    at_half = _tests({"rho_hat=0": 0.12, "cv_clt": 0.045, "nadeau_bengio": 0.025, "oracle_rho": 0.01},
                     {"rho_hat=0": 0.9, "cv_clt": 0.7, "nadeau_bengio": 0.5, "oracle_rho": 0.95})
    rec = recommend(at_n, at_half, 0.05)
    # cv_clt measures <= 6% in both settings but its Wilson upper bounds (8.9%, 8.3%) are above 6%;
    # nadeau_bengio (4/200, 5/200: upper 5.0%, 5.7%) is trusted; the oracle is never recommended
    assert rec.procedure == "nadeau_bengio" and rec.trusted
    verdict = rec.table.set_index("procedure")["verdict"]
    assert verdict.to_dict() == {"rho_hat=0": "liberal", "cv_clt": "undecided", "nadeau_bengio": "trusted"}
    assert "oracle_rho" not in set(rec.table["procedure"])
    bad = recommend(_tests({"rho_hat=0": 0.10, "cv_clt": 0.08}, {"rho_hat=0": 0.9, "cv_clt": 0.7}),
                    _tests({"rho_hat=0": 0.12, "cv_clt": 0.09}, {"rho_hat=0": 0.9, "cv_clt": 0.7}), 0.05)
    assert bad.procedure == "cv_clt" and not bad.trusted and "No procedure" in bad.text


def test_liberal_procedure_at_200_replicates_is_not_trusted():
    """The case that made the first rule too permissive: the plain t measuring 5.5% at n and 5% at n/2 with
    200 replicates (Letter, tree) while its real size is ~8%. The point rule would trust it; this one does not,
    and recommends the conservative procedure whose evidence supports its level."""
    sizes_n, sizes_half = {"rho_hat=0": 0.055, "rho_hat=0.7": 0.005}, {"rho_hat=0": 0.05, "rho_hat=0.7": 0.01}
    powers = {"rho_hat=0": 0.55, "rho_hat=0.7": 0.12}
    rec = recommend(_tests(sizes_n, powers), _tests(sizes_half, powers), 0.05)
    assert rec.procedure == "rho_hat=0.7" and rec.trusted
    assert rec.table.set_index("procedure").loc["rho_hat=0", "verdict"] == "undecided"


def test_procedure_at_its_level_is_trusted_with_many_replicates():
    """A procedure at 5.0% is undecided at 200 replicates and trusted (and recommended for its power) at 5,000."""
    sizes = {"subsample_rho": 0.05, "rho_hat=0.7": 0.01}
    powers = {"subsample_rho": 0.42, "rho_hat=0.7": 0.12}
    few = recommend(_tests(sizes, powers), _tests(sizes, powers), 0.05)
    assert few.procedure == "rho_hat=0.7"
    many = recommend(_tests(sizes, powers, 5000), _tests(sizes, powers, 5000), 0.05)
    assert many.procedure == "subsample_rho" and many.trusted
    # a looser rule (80% Wilson interval, 2.5 points of slack: upper bound 7.4%) trusts it at 200 replicates
    loose = recommend(_tests(sizes, powers), _tests(sizes, powers), 0.05, slack=0.025, confidence=0.8)
    assert loose.procedure == "subsample_rho"


@pytest.mark.parametrize("replicates", [100, 200, 400, 1000, 5000])
def test_rule_error_rate_at_the_limit_is_exact_binomial(replicates):
    """Against theory: a procedure whose real size is exactly alpha + slack passes one setting with probability
    P(upper Wilson bound <= alpha + slack), computed exactly from the binomial distribution; it is at most
    (1 - confidence) / 2 = 2.5% at these replicate counts, though not at every count (325 of 100..5000 exceed
    it: ``test_sequential_audit.py`` checks every count)."""
    from scipy import stats

    from simstudy.inference.proportions import wilson_bounds

    k = np.arange(replicates + 1)
    passes = wilson_bounds(k, np.full(k.size, replicates))[1] <= 0.06
    assert stats.binom.pmf(k[passes], replicates, 0.06).sum() <= 0.025
    # the same through recommend(): exactly the counts k <= max(k[passes]) are trusted
    last = int(k[passes].max())
    for count, expected in ((last, True), (last + 1, False)):
        t = pd.DataFrame({"procedure": ["p"], "size": [count / replicates], "size_count": [count],
                          "replicates": [replicates], "power": [0.5], "mean_width": [1.0]})
        assert recommend(t, t, 0.05).trusted is expected


@pytest.mark.parametrize("field, value", [("slack", -0.01), ("slack", "1"), ("confidence", 1.0),
                                          ("confidence", 0.3), ("confidence", True)])
def test_bad_rule_options_refused(field, value):
    t = _tests({"p": 0.05}, {"p": 0.5})
    with pytest.raises(ConfigError, match=f"{field}="):
        recommend(t, t, 0.05, **{field: value})
    with pytest.raises(ConfigError, match=f"{field}="):
        audit(X=np.zeros((100, 2)), y=np.arange(100) % 2, progress=False, **{field: value})


@pytest.mark.slow
def test_audit_end_to_end(tmp_path, letter_like_file):
    """A small audit through the CLI: report files, the recommended interval contains the estimate."""
    path = letter_like_file[0]
    proc = _cli(str(path), "--replicates", "20", "--nested-cv-replicates", "3", "--splits", "2",
                "--positive", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "--n-jobs", "1",
                "--no-progress", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    for name in ("report.md", "report.html", "figures/audit.png", "intervals.csv", "calibration.csv"):
        assert (out / name).exists(), name
    intervals = pd.read_csv(out / "intervals.csv")
    text = (out / "report.md").read_text()
    assert "recommended" in text and "<img" in (out / "report.html").read_text()
    estimate = float(text.split("Your CV estimate: ")[1].split(";")[0])
    assert np.all(intervals["low"] <= estimate) and np.all(estimate <= intervals["high"])


def test_renamed_or_moved_file_gives_the_same_audit(tmp_path, letter_like_file):
    """The simulated training sets depend on the rows, the options and the seed, not on the file's name or folder:
    the same rows under another name elsewhere give the same calibration table and intervals."""
    path = letter_like_file[0]
    other = tmp_path / "elsewhere" / "renamed.csv"
    other.parent.mkdir()
    other.write_bytes(path.read_bytes())
    options = dict(replicates=20, nested_cv_replicates=0, splits=1, K=5, n_jobs=1, progress=False,
                   positive=list("ABCDEFGHIJKLM"))
    first, second = audit(path, **options), audit(other, **options)
    for setting in ("n", "n/2"):
        pd.testing.assert_frame_equal(first.tests[setting], second.tests[setting])
    pd.testing.assert_frame_equal(first.intervals, second.intervals)
    assert first.settings["data"] != second.settings["data"]


def _assert_same_audit(first, second) -> None:
    for setting in ("n", "n/2"):
        pd.testing.assert_frame_equal(first.tests[setting], second.tests[setting])
        pd.testing.assert_frame_equal(first.summaries[setting], second.summaries[setting])
    pd.testing.assert_frame_equal(first.intervals, second.intervals)
    assert first.recommendation.procedure == second.recommendation.procedure


def test_a_file_and_the_same_rows_as_arrays_give_the_same_audit(letter_like_file):
    """The seed identity of a file's rows is that of the same rows given as X= and y= (binarised as the
    file's positive labels say, or as text labels), so the command line and a notebook agree."""
    path, X, y = letter_like_file
    options = dict(replicates=20, nested_cv_replicates=5, splits=1, K=5, n_jobs=1, progress=False, rule="fixed")
    positive = list("ABCDEFGHIJKLM")
    from_file = audit(path, positive=positive, **options)
    binary = np.isin(np.asarray(y), positive).astype(int)
    _assert_same_audit(from_file, audit(X=np.asarray(X, float), y=binary, **options))
    _assert_same_audit(from_file, audit(X=np.asarray(X, float), y=np.where(binary == 1, "yes", "no"), **options))


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_the_n_half_setting_says_it_draws_without_replacement(task):
    """The n/2 setting keeps the rows' seed identity (source, task) but states replace=False, in its seed
    parameters and in the description its run's manifest records."""
    from simstudy.audit.data import user_population, without_replacement

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int) if task == "classification" else X[:, 0] + rng.normal(size=60)
    pop = user_population(None, X, y, task, "auto", None)
    half = without_replacement(pop)
    assert pop.seed_params()["replace"] is True
    assert half.seed_params() == {**pop.seed_params(), "replace": False}
    assert half.describe()["replace"] is False and half.describe()["rows"] == 60
    assert sorted(half.sample(60, np.random.default_rng(1)).index) == list(range(60))


def test_a_regression_file_and_the_same_rows_as_arrays_give_the_same_audit(tmp_path):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    path = tmp_path / "diabetes.csv"
    pd.DataFrame(np.column_stack([X, y])).to_csv(path, header=False, index=False)
    options = dict(learner="ridge_regressor", replicates=20, nested_cv_replicates=5, splits=1, K=5, n_jobs=1,
                   progress=False, rule="fixed")
    from_file = audit(path, **options)
    # the file holds the rows as text: compare with the values a reader of that text gets
    rows = pd.read_csv(path, header=None).to_numpy(float)
    _assert_same_audit(from_file, audit(X=rows[:, :-1], y=rows[:, -1], **options))


def test_audit_without_nested_cv_writes_its_report(tmp_path, letter_like_file):
    """--nested-cv-replicates 0: nested CV keeps its interval but has no simulated size; the figure
    draws no bar for it instead of failing on the missing counts."""
    proc = _cli(str(letter_like_file[0]), "--replicates", "20", "--nested-cv-replicates", "0", "--splits", "1",
                "--positive", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "--n-jobs", "1",
                "--no-progress", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert (tmp_path / "out" / "figures" / "audit.png").is_file()
    assert "nested_cv" in set(pd.read_csv(tmp_path / "out" / "intervals.csv")["procedure"])


# --- regression audits ------------------------------------------------------------------------------


@pytest.mark.parametrize("learner, loss, words", [
    ("tree", "squared", "loss='squared' is a regression loss but learner='tree' is a classification learner"),
    ("ridge_regressor", "zero_one", "loss='zero_one' is a classification loss but learner='ridge_regressor'"),
    ("tree_regressor", "log_loss", "use loss=squared or absolute"),
    ("tree", "nope", "loss='nope' is invalid"),
])
def test_learner_and_loss_of_different_tasks_refused(learner, loss, words):
    X, y = np.random.default_rng(0).normal(size=(100, 3)), np.arange(100) % 2
    with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
        audit(X=X, y=y, learner=learner, loss=loss, progress=False)


def test_bad_regression_targets_refused():
    X = np.random.default_rng(0).normal(size=(100, 3))
    with pytest.raises(ConfigError, match="y is constant"):
        audit(X=X, y=np.ones(100), learner="ridge_regressor", progress=False)
    with pytest.raises(ConfigError, match="non-numeric"):
        audit(X=X, y=np.array(["a", "b"] * 50), learner="ridge_regressor", progress=False)
    with pytest.raises(ConfigError, match="positive=.*regression"):
        audit(X=X, y=X[:, 0], learner="ridge_regressor", positive=["1"], progress=False)


def test_cli_classifier_with_squared_loss_exit_2(tmp_path, letter_like_file):
    proc = _cli(str(letter_like_file[0]), "--loss", "squared", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "loss='squared' is a regression loss but learner='tree'" in proc.stderr


def test_regression_audit_smoke():
    """diabetes (442 rows), ridge, squared loss, a few replicates: a regression audit end to end (Python)."""
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge

    X, y = load_diabetes(return_X_y=True)
    res = audit(X=X, y=y, learner="ridge_regressor", replicates=20, nested_cv_replicates=2, splits=1, n_jobs=1,
                progress=False)
    assert res.settings["task"] == "regression" and res.settings["loss"] == "squared"
    assert set(res.tests) == {"n", "n/2"} and res.rho["n"][0] == 440 and res.rho["n/2"][0] == 220
    low, high = res.interval
    assert low < res.estimate < high
    # with 20 replicates nothing can be trusted, and the text says how many would be needed (sequential rule:
    # 0.94^60 <= 2.5% < 0.94^59; the fixed rule's Wilson bound needs 61)
    assert not res.recommendation.trusted and "use at least 60" in res.recommendation.text
    assert res.settings["rule"] == "sequential" and res.designs["main"].looks == (20,)
    # against an independent reference: the user's CV estimate is a 10-fold mean squared error of a ridge
    # fit; it lies between the training MSE of ridge on all rows and the variance of y
    fit = Ridge(alpha=1.0).fit(X, y)
    assert np.mean((fit.predict(X) - y) ** 2) < res.estimate < np.var(y)


@pytest.mark.slow
def test_regression_audit_cli_file(tmp_path):
    """A regression audit through the CLI on a CSV (target last): tree regressor, absolute loss, report files."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    path = tmp_path / "diabetes.csv"
    pd.DataFrame(np.column_stack([X, y])).to_csv(path, header=False, index=False)
    proc = _cli(str(path), "--learner", "tree_regressor", "--loss", "absolute", "--replicates", "40",
                "--nested-cv-replicates", "2", "--splits", "1", "--n-jobs", "1", "--no-progress", "-o", "out",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "out" / "report.md").read_text()
    assert "tree_regressor" in text and "absolute loss" in text and "442 rows" in text
    estimate = float(text.split("Your CV estimate: ")[1].split(";")[0])
    intervals = pd.read_csv(tmp_path / "out" / "intervals.csv")
    assert np.all(intervals["low"] <= estimate) and np.all(estimate <= intervals["high"])
    assert (tmp_path / "out" / "figures" / "audit.png").exists()



@pytest.mark.parametrize("X, y, learner, words", [
    (np.zeros((100, 2)), np.zeros(99), "tree", "same length"),
    (np.full((100, 2), np.nan), np.arange(100) % 2, "tree", "missing or infinite"),
    (np.zeros((100, 2)), np.zeros(100), "tree", "single class"),
    (np.zeros((100, 2)), np.ones(100), "ridge_regressor", "y is constant"),
    (np.zeros((100, 2)), np.array(["a", "b"] * 50), "ridge_regressor", "non-numeric"),
    (np.zeros((100, 2)), None, "tree", "y is missing"),
])
def test_audit_arrays_are_checked_by_the_in_memory_population(X, y, learner, words):
    """One array check: the audit's X=, y= and run_study's population=(X, y) refuse the same
    arrays with the same message (the audit's names X and y, the study's population X, y)."""
    with pytest.raises(ConfigError, match=words) as by_audit:
        audit(X=X, y=y, learner=learner, progress=False)
    task = "regression" if learner == "ridge_regressor" else "classification"
    with pytest.raises(ConfigError, match=words) as by_population:
        from simstudy.populations.in_memory import in_memory_population

        in_memory_population({"data": X, "target": y, "task": task})
    assert str(by_population.value).replace("population: ", "").replace("population ", "") == str(by_audit.value)
