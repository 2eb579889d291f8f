"""The benchmark's data-generating mechanisms: closed-form risks, sampling, truth routes, learners, losses.

Each closed-form risk gets three checks: a hand value, a large Monte Carlo evaluation judged with
its standard error (|formula - MC| < 4 SE), and the population's sampling against its stated
moments (binomial tests of the class balance, Kolmogorov-Smirnov tests of the noise law).
Every registered mechanism runs a tiny cv_clt study with truth, with no failed replicate.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, special, stats

import simstudy
from simstudy.errors import ConfigError, DataUnavailableError
from simstudy.learners import build_learner
from simstudy.cv.losses import brier, log_loss, resolve_loss, zero_one
from simstudy.populations import build_population
from simstudy.populations.gaussian_classes import GaussianClassesPopulation, gaussian_bayes_error
from simstudy.populations.hastie import HastieSpherePopulation, hastie_rule_risk
from simstudy.populations.noisy_linear import (HeteroscedasticLinearPopulation, SparseLinearPopulation,
                                               StudentTLinearPopulation, folded_normal_mean)
from simstudy.populations.regression import linear_predictor_risk
from simstudy.populations.truth import true_risks

from conftest import LETTER_FILE

MC_SIZE = 400_000


def _within(formula, draws, k=4.0):
    """|formula - mean(draws)| < k standard errors (per column)."""
    draws = np.asarray(draws, dtype=float)
    se = draws.std(axis=0, ddof=1) / np.sqrt(draws.shape[0])
    gap = np.abs(np.asarray(formula) - draws.mean(axis=0))
    assert np.all(gap < k * se), (formula, draws.mean(axis=0), se)


def _rules(p, count, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(count, p)), rng.normal(size=count)


# ----------------------------------------------------------------------------- Gaussian classes
def test_gaussian_classes_risk_hand_values():
    balanced = GaussianClassesPopulation(p=5, separation=2.0)
    assert balanced.bayes_error() == pytest.approx(special.ndtr(-1.0), abs=1e-15)           # Phi(-Delta/2)
    assert balanced.linear_rule_risks(balanced.bayes_w[None], [balanced.bayes_b])[0] == pytest.approx(
        special.ndtr(-1.0), abs=1e-14)
    imbalanced = GaussianClassesPopulation(p=5, separation=3.0, positive_rate=0.1)
    by_hand = 0.1 * special.ndtr(-1.5 + np.log(9) / 3) + 0.9 * special.ndtr(-1.5 - np.log(9) / 3)
    assert imbalanced.bayes_error() == pytest.approx(by_hand, abs=1e-15) == pytest.approx(0.0336511, abs=1e-6)
    assert gaussian_bayes_error(3.0, 0.1) == imbalanced.bayes_error()
    constant = imbalanced.linear_rule_risks(np.zeros((2, 5)), [1.0, -1.0])     # always 1, always 0
    np.testing.assert_allclose(constant, [0.9, 0.1], atol=1e-15)


@pytest.mark.parametrize("population", [
    GaussianClassesPopulation(p=5, separation=3.0, positive_rate=0.1, correlation=0.5),
    GaussianClassesPopulation(p=100, support=5, separation=2.5)], ids=["imbalanced_correlated", "sparse"])
def test_gaussian_classes_risk_against_monte_carlo(population):
    W, b = _rules(population.p, 3, seed=1)
    W[0], b[0] = population.bayes_w, population.bayes_b
    sample = population.sample(MC_SIZE // (4 if population.p > 10 else 1), np.random.default_rng(2))
    errors = ((sample.X @ W.T + b) > 0) != sample.y[:, None]
    _within(population.linear_rule_risks(W, b), errors)


def test_gaussian_classes_sampling_moments():
    population = build_population("imbalanced_classes")
    sample = population.sample(20_000, np.random.default_rng(3))
    assert stats.binomtest(int(sample.y.sum()), sample.y.size, 0.1).pvalue > 1e-3
    for label, mean in ((0, population.mu0), (1, population.mu1)):
        X = sample.X[sample.y == label]
        _within(mean, X)
        assert np.abs(np.cov(X.T) - population.Sigma).max() < 0.1
    d = population.d
    assert d @ np.linalg.solve(population.Sigma, d) == pytest.approx(9.0)            # Delta = 3


# ----------------------------------------------------------------------------- the sphere (Hastie 10.2)
def test_hastie_rule_risk_hand_values_and_a_second_formula():
    W, b = _rules(10, 4, seed=4)
    b[0] = 0.0                                           # through the origin: exactly 1/2
    risks = hastie_rule_risk(np.r_[W, np.zeros((1, 10))], np.r_[b, 0.3])
    assert risks[0] == pytest.approx(0.5, abs=1e-10) and risks[-1] == 0.5
    q = stats.chi2.median(10)

    def p1(z):
        return stats.chi2(9).sf(q - z * z)

    for w, c, value in zip(W[1:], b[1:], risks[1:4]):    # the unsimplified form: P(1, y=0) + P(0, y=1)
        z0 = -c / np.linalg.norm(w)
        upper = integrate.quad(lambda z: stats.norm.pdf(z) * (1 - p1(z)), z0, np.inf, epsabs=1e-12)[0]
        lower = integrate.quad(lambda z: stats.norm.pdf(z) * p1(z), -np.inf, z0, epsabs=1e-12)[0]
        assert value == pytest.approx(upper + lower, abs=1e-9)


def test_hastie_rule_risk_against_monte_carlo_and_sampling():
    population = HastieSpherePopulation()
    W, b = _rules(10, 3, seed=5)
    sample = population.sample(MC_SIZE, np.random.default_rng(6))
    _within(population.linear_rule_risks(W, b), ((sample.X @ W.T + b) > 0) != sample.y[:, None])
    assert stats.binomtest(int(sample.y.sum()), sample.y.size, 0.5).pvalue > 1e-3


def test_logistic_rules_with_an_intercept_against_monte_carlo():
    population = build_population("logistic")
    W, b = _rules(2, 3, seed=7)
    sample = population.sample(MC_SIZE, np.random.default_rng(8))
    _within(population.linear_rule_risks(W, b), ((sample.X @ W.T + b) > 0) != sample.y[:, None])


# ----------------------------------------------------------------------------- heavy tails
def test_student_t_risk_hand_values_and_a_second_formula():
    population = StudentTLinearPopulation(p=3, sigma=2.0, df=3.0)
    assert population.bayes_risk("squared") == pytest.approx(4.0 * 3.0, rel=1e-14)      # sigma^2 nu / (nu - 2)
    assert population.bayes_risk("absolute") == pytest.approx(2.0 * 2 * np.sqrt(3) / np.pi, rel=1e-9)
    W, b = _rules(3, 3, seed=9)
    exact = population.predictor_risks(W, b, "absolute")
    for w, c, value in zip(W, b, exact):                  # integrate over the t variable instead
        s_g = np.sqrt((w - population.beta) @ population.Sigma @ (w - population.beta))
        other = integrate.quad(lambda u: stats.t.pdf(u, 3.0) * folded_normal_mean(2.0 * u - c, s_g),
                               -np.inf, np.inf, epsabs=1e-12, epsrel=1e-12)[0]
        assert value == pytest.approx(other, abs=1e-8)


def test_student_t_risk_against_monte_carlo_and_sampling():
    population = StudentTLinearPopulation()
    W, b = _rules(5, 3, seed=10)
    sample = population.sample(MC_SIZE, np.random.default_rng(11))
    residuals = sample.y[:, None] - (sample.X @ W.T + b)
    _within(population.predictor_risks(W, b, "absolute"), np.abs(residuals))
    noise = sample.y - sample.X @ population.beta
    assert stats.kstest(noise[:20_000], stats.t(3.0).cdf).pvalue > 1e-3
    _within(2 * np.sqrt(3) / np.pi, np.abs(noise))
    # the squared loss: with 3 degrees of freedom a squared residual has no variance (no z-test), with 5 it has
    five = StudentTLinearPopulation(df=5.0)
    sample = five.sample(MC_SIZE, np.random.default_rng(12))
    _within(five.predictor_risks(W, b, "squared"), (sample.y[:, None] - (sample.X @ W.T + b)) ** 2)


# ----------------------------------------------------------------------------- heteroscedastic noise
def test_heteroscedastic_risk_hand_values_and_the_homoscedastic_case():
    population = HeteroscedasticLinearPopulation(p=4, sigma=1.5, gamma=1.0)
    assert population.bayes_risk("squared") == pytest.approx(1.5**2 * 2, rel=1e-14)      # sigma^2 (1 + gamma)
    bessel = np.exp(0.25) * (special.k0(0.25) + special.k1(0.25)) / (2 * np.pi)          # E sqrt(1 + Z^2) sqrt(2/pi)
    assert population.bayes_risk("absolute") == pytest.approx(1.5 * bessel, rel=1e-9)
    flat = HeteroscedasticLinearPopulation(p=4, sigma=1.5, gamma=0.0, correlation=0.4)
    W, b = _rules(4, 3, seed=12)
    for loss in ("squared", "absolute"):
        np.testing.assert_allclose(flat.predictor_risks(W, b, loss),
                                   linear_predictor_risk(W, b, flat.beta, flat.Sigma, 1.5, loss), rtol=1e-9)


def test_heteroscedastic_risk_against_monte_carlo_and_sampling():
    population = HeteroscedasticLinearPopulation(correlation=0.3)
    W, b = _rules(5, 3, seed=13)
    sample = population.sample(MC_SIZE, np.random.default_rng(14))
    residuals = sample.y[:, None] - (sample.X @ W.T + b)
    _within(population.predictor_risks(W, b, "absolute"), np.abs(residuals))
    _within(population.predictor_risks(W, b, "squared"), residuals**2)
    noise = sample.y - sample.X @ population.beta
    assert stats.kstest(noise[:20_000] / population.noise_sd(sample.X[:20_000]), "norm").pvalue > 1e-3
    _within(2.0, noise**2)                                                              # sigma^2 (1 + gamma)


def test_sparse_linear_risk_and_sampling():
    population = SparseLinearPopulation(p=100, support=5, signal=1.0)
    assert np.array_equal(population.beta, np.r_[np.ones(5), np.zeros(95)])
    assert population.bayes_risk("squared") == 1.0
    W, b = _rules(100, 2, seed=15)
    W *= 0.1
    sample = population.sample(MC_SIZE // 4, np.random.default_rng(16))
    residuals = sample.y[:, None] - (sample.X @ W.T + b)
    _within(population.predictor_risks(W, b, "squared"), residuals**2)
    _within(population.predictor_risks(W, b, "absolute"), np.abs(residuals))
    _within(population.beta, sample.X * sample.y[:, None])                             # E x y = Sigma beta


# ----------------------------------------------------------------------------- truth routes
def _fitted(learner, population, n=60, seed=0, count=3, loss=None):
    from simstudy.learners import learners_context

    learner = build_learner(learner, population, loss)
    rng = np.random.default_rng(seed)
    state = learner.start(population.sample(n, rng))
    with learners_context([learner]):           # as the studies fit: one OpenMP thread
        return learner, [learner.fit(state, rng.integers(0, n, n), rng) for _ in range(count)]


@pytest.mark.parametrize("name,learner", [("gaussian_classes", "lda"), ("hastie_10_2", "logistic_regression"),
                                          ("logistic", "ridge")])
def test_linear_classifiers_get_the_closed_form(name, learner):
    population = build_population(name)
    model_learner, models = _fitted(learner, population)
    risks = true_risks(model_learner, models, population, zero_one)
    assert np.all(risks.mc_se == 0)
    X, _ = population.evaluation_set()                   # the conditional route agrees within its error
    P = population.evaluation_probabilities()
    for model, value in zip(models, risks.values):
        predicted = model_learner.predict_features(model, X)
        per_point = np.where(predicted == 1, P[:, 0], P[:, 1])
        _within(value, per_point[:, None])


def test_the_conditional_truth_agrees_with_the_labels_and_is_tighter():
    for name, learner, loss in (("gaussian_classes", "tree", zero_one), ("imbalanced_classes", "tree", brier),
                                ("student_t_linear", "tree_regressor", resolve_loss("absolute")),
                                ("heteroscedastic_linear", "knn_regressor", resolve_loss("squared"))):
        population = build_population({"name": name, "evaluation_size": 20_000})
        model_learner, models = _fitted(learner, population, count=2, loss=loss)
        risks = true_risks(model_learner, models, population, loss)
        X, y = population.evaluation_set(getattr(model_learner, "dtype", np.float64))
        for model, value, se in zip(models, risks.values, risks.mc_se):
            proba = model_learner.predict_features_proba(model, X) if loss.needs_proba else None
            labelled = loss(y, model_learner.predict_features(model, X), proba)
            plain_se = labelled.std(ddof=1) / np.sqrt(labelled.size)
            assert se < plain_se and abs(value - labelled.mean()) < 4 * np.hypot(se, plain_se), name


def test_cv_variance_batched_rules_get_the_closed_form():
    """The batched LDA kernel (all folds at once) and scikit-learn's LDA give the same exact truths."""
    truths = []
    for engine in ("auto", "sklearn"):
        learner = {"name": "lda", "engine": engine, "estimator": {
            "_target_": "sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "solver": "lsqr"}}
        res = simstudy.run_study("cv_variance", population="imbalanced_classes", learner=learner, sizes=[40], K=5,
                                 replicates=4, truth=True, n_jobs=1, progress=False)
        truths.append(np.stack(res.records["fold_true_errors"].to_numpy()))
        assert "true_error_mc_se" not in res.records
    np.testing.assert_allclose(truths[0], truths[1], atol=2e-6)                       # records keep 6 decimals


# ----------------------------------------------------------------------------- losses and learners
def test_brier_hand_values_and_scikit_learn():
    from sklearn.metrics import brier_score_loss

    proba = np.array([[0.3, 0.7], [0.9, 0.1], [0.5, 0.5]])
    y = np.array([1, 1, 0])
    np.testing.assert_allclose(brier(y, None, proba), [0.09, 0.81, 0.25])
    assert brier(y, None, proba).mean() == pytest.approx(brier_score_loss(y, proba[:, 1]))
    three = brier(np.array([0]), None, np.array([[0.2, 0.5, 0.3]]))
    assert three[0] == pytest.approx(0.5 * (0.8**2 + 0.5**2 + 0.3**2))


@pytest.mark.parametrize("loss", [log_loss, brier])
def test_probability_losses_need_a_learner_with_probabilities(loss):
    population = build_population("gaussian_classes")
    for name in ("logistic_regression", "lda", "tree", "knn", "random_forest", "gradient_boosting"):
        assert callable(getattr(build_learner(name, population, loss), "predict_proba", None)), name
    with pytest.raises(ConfigError, match=f"learner='ridge' gives no class probabilities.*study.loss='{loss.name}'"):
        build_learner("ridge", population, loss)
    with pytest.raises(ConfigError, match="gives no class probabilities"):
        simstudy.run_study("cv_clt", population="breast_cancer", learners={
            "svm": {"_target_": "sklearn.svm.LinearSVC"}}, comparisons=[], loss=loss.name, sizes=[40], replicates=2)


def test_misspelt_population_keys_are_refused(compose_config):
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException):
        compose_config("population=student_t_linear", "population.dff=4")
    with pytest.raises(ConfigError, match="population.dff is not a setting of population kind 'student_t_linear'"):
        build_population({"kind": "student_t_linear", "dff": 4})
    with pytest.raises(ConfigError, match="population.replce"):
        build_population({"name": "fair", "replce": False})
    with pytest.raises(ConfigError, match="population.df=2"):
        build_population({"name": "student_t_linear", "df": 2})
    with pytest.raises(ConfigError, match="population.dataset='nope'"):
        build_population({"kind": "packaged", "dataset": "nope"})


# ----------------------------------------------------------------------------- packaged data sets
PACKAGED = {  # name: (rows, features, positives or None for regression)
    "breast_cancer": (569, 30, 212), "wine": (178, 13, 59), "digits": (1797, 64, 896), "iris": (150, 4, 50),
    "diabetes": (442, 10, None), "fair": (6366, 8, 2053), "anes96": (944, 9, 393), "modechoice": (840, 10, 210),
    "randhie": (20190, 9, None), "star98": (303, 20, None), "engel": (235, 1, None), "grunfeld": (220, 2, None)}


def test_packaged_data_sets_load_offline_as_stated():
    for name, (rows, features, positives) in PACKAGED.items():
        population = build_population(name)
        assert population.X.shape == (rows, features), name
        assert population.task == ("regression" if positives is None else "classification")
        if positives is not None:
            assert int(population.y.sum()) == positives and set(np.unique(population.y)) == {0, 1}, name
        assert population.seed_params()["dataset"] == name


def test_a_finite_population_truth_is_the_error_on_every_row():
    population = build_population("iris")
    learner, models = _fitted("gradient_boosting", population, loss=brier)
    risks = true_risks(learner, models, population, brier)
    for model, value in zip(models, risks.values):
        proba = learner.predict_features_proba(model, population.X)
        assert value == pytest.approx(brier(population.y, None, proba).mean(), abs=1e-15)
    assert np.all(risks.mc_se == 0)


# ----------------------------------------------------------------------------- OpenML suites (network faked)
@pytest.fixture
def fake_openml(monkeypatch, tmp_path):
    """Suite 396 of two made-up tasks (classification, regression) and a third with another target."""
    import pandas as pd

    from simstudy.populations import openml_suite

    rng = np.random.default_rng(0)
    frames = {
        1001: (pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"]),
               pd.Series(np.where(rng.random(80) < 0.4, "yes", "no"), name="class")),
        1002: (pd.DataFrame(rng.normal(size=(60, 2)), columns=["u", "v"]), pd.Series(rng.normal(size=60), name="y"))}
    answers = {
        "study/396": {"study": {"id": 396, "tasks": {"task_id": [101, 102]}}},
        "task/101": {"task": {"task_type_id": "1", "input": [{"name": "source_data", "data_set": {
            "data_set_id": "1001", "target_feature": "class"}}]}},
        "task/102": {"task": {"task_type_id": "2", "input": [{"name": "source_data", "data_set": {
            "data_set_id": "1002", "target_feature": "y"}}]}},
        "task/103": {"task": {"task_type_id": "1", "input": [{"name": "source_data", "data_set": {
            "data_set_id": "1001", "target_feature": "a"}}]}},
        "task/104": {"task": {"task_type_id": "5", "task_type": "Clustering", "input": []}},
        "data/1001": {"data_set_description": {"name": "made_up_classes", "default_target_attribute": "class"}},
        "data/1002": {"data_set_description": {"name": "made_up_values", "default_target_attribute": "y"}}}
    asked = []

    def openml_json(path, data_home=None):
        asked.append(path)
        if path not in answers:
            raise DataUnavailableError(f"OpenML {path!r}: no such answer")
        return answers[path]

    def fetch_openml(data_id, data_home=None, **kwargs):
        from sklearn.utils import Bunch

        X, y = frames[data_id]
        return Bunch(data=X, target=y, frame=None)

    monkeypatch.setattr(openml_suite, "openml_json", openml_json)
    monkeypatch.setattr("sklearn.datasets.fetch_openml", fetch_openml)
    return asked


def test_suite_tasks_load_as_finite_populations(fake_openml):
    from simstudy.populations.openml_suite import load_suite, suite_tasks

    tasks = suite_tasks(396)
    assert [(t.task_id, t.data_id, t.target, t.task, t.name) for t in tasks] == [
        (101, 1001, "class", "classification", "made_up_classes"), (102, 1002, "y", "regression", "made_up_values")]
    populations = load_suite(396)
    classes, values = populations["made_up_classes"], populations["made_up_values"]
    assert classes.X.shape == (80, 3) and classes.task == "classification" and set(np.unique(classes.y)) == {0, 1}
    assert values.X.shape == (60, 2) and values.task == "regression"
    res = simstudy.run_study("cv_clt", population=classes, learners={"tree": {
        "_target_": "sklearn.tree.DecisionTreeClassifier", "max_depth": 2}}, comparisons=[], sizes=[30], K=3,
        replicates=2, nested_cv_replicates=0, repeated_splits=2, n_jobs=1, progress=False)
    assert (res.records["error"] == "").all()


def test_suite_task_refusals(fake_openml, compose_config):
    from simstudy.populations.openml_suite import load_suite_task, task_info

    with pytest.raises(ValueError, match="target 'a' is not the default target 'class'"):
        load_suite_task(task_info(103))
    with pytest.raises(ValueError, match="neither supervised classification nor regression"):
        task_info(104)
    with pytest.raises(DataUnavailableError, match="no such answer"):
        task_info(999)
    cfg = compose_config("population=openml_task", "population.task_id=102")
    population = build_population(cfg.population)
    assert population.task == "regression" and population.X.shape == (60, 2)
    with pytest.raises(ConfigError, match="population.task_id=0"):
        build_population({"kind": "openml_task", "task_id": 0})


def test_openml_answers_are_cached(monkeypatch, tmp_path):
    import io

    from simstudy.populations import openml_suite

    calls = []

    def urlopen(url, timeout=None):
        calls.append(url)
        return io.BytesIO(b'{"study": {"tasks": {"task_id": [7]}}}')

    monkeypatch.setattr("urllib.request.urlopen", urlopen)
    for _ in range(2):
        assert openml_suite.openml_json("study/396", tmp_path) == {"study": {"tasks": {"task_id": [7]}}}
    assert calls == [f"{openml_suite.OPENML_API}/study/396"]

    def offline(url, timeout=None):
        raise OSError("network unreachable")

    monkeypatch.setattr("urllib.request.urlopen", offline)
    with pytest.raises(DataUnavailableError, match="network unreachable"):
        openml_suite.openml_json("study/1", tmp_path)


# ----------------------------------------------------------------------------- every mechanism end to end
CLASSIFIERS = {"logreg": {"_target_": "sklearn.linear_model.LogisticRegression", "solver": "newton-cholesky"},
               "boost": {"_target_": "sklearn.ensemble.HistGradientBoostingClassifier", "max_iter": 5,
                         "early_stopping": False}}
REGRESSORS = {"ols": {"_target_": "sklearn.linear_model.LinearRegression"},
              "forest": {"_target_": "sklearn.ensemble.RandomForestRegressor", "n_estimators": 5, "n_jobs": 1}}
SYNTHETIC = ["logistic", "gaussian_classes", "imbalanced_classes", "sparse_classes", "hastie_10_2", "gaussian_linear",
             "friedman1", "sparse_linear", "student_t_linear", "heteroscedastic_linear"]
MECHANISMS = SYNTHETIC + ["letter"] + list(PACKAGED)
LOSSES = {"classification": ["zero_one", "log_loss", "brier"], "regression": ["squared", "absolute"]}


def test_there_are_at_least_twenty_mechanisms_of_both_tasks():
    regression = [m for m in MECHANISMS if m in PACKAGED and PACKAGED[m][2] is None or m in SYNTHETIC[5:]]
    assert SYNTHETIC[5:] == ["gaussian_linear", "friedman1", "sparse_linear", "student_t_linear",
                             "heteroscedastic_linear"]
    assert len(MECHANISMS) == 23 and len(regression) == 10       # 13 classification, 10 regression


@pytest.mark.parametrize("index", range(len(MECHANISMS)), ids=MECHANISMS)
def test_every_mechanism_runs_cv_clt_with_truth(index):
    name = MECHANISMS[index]
    spec = {"name": "letter", "path": str(LETTER_FILE)} if name == "letter" else name
    if name == "letter" and not LETTER_FILE.exists():
        pytest.skip(f"the Letter file {LETTER_FILE} is not here")
    if name in SYNTHETIC:
        spec = {"name": name, "evaluation_size": 5_000} if name != "logistic" else name
    task = build_population(spec).task
    learners = CLASSIFIERS if task == "classification" else REGRESSORS
    loss = LOSSES[task][index % len(LOSSES[task])]
    res = simstudy.run_study("cv_clt", population=spec, learners=learners, comparisons=[list(learners)], loss=loss,
                             sizes=[40], K=4, replicates=2, nested_cv_replicates=1, nested_cv_repetitions=1,
                             repeated_splits=2, n_jobs=1, progress=False)
    records = res.records
    assert len(records) == 2 * 3 and (records["error"] == "").all(), records["error"].tolist()
    assert records["target"].notna().all() and records["target_full"].notna().all()
