"""The cv_clt study (Bayle et al.): records against independent recomputation, invariance to
chunking and workers, end-to-end calibration with a learner whose losses are i.i.d., config errors."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from simstudy.cv.loop import nested_cv_losses
from simstudy.cv.losses import zero_one
from simstudy.cv.splits import KFold
from simstudy.engine.config import RunnerConfig
from simstudy.engine.runner import run_chunks
from simstudy.errors import ConfigError
from simstudy.inference import nested_cv_interval
from simstudy.learners.dispatch import build_learner
from simstudy.populations import TabularPopulation
from simstudy.rng import condition_key, replicate_rng
from simstudy.studies.cv_clt.aggregate import aggregate
from simstudy.studies.cv_clt.study import CVCLTWorker, make_conditions

from conftest import make_letter_like, validate

LOGREG = {"_target_": "sklearn.linear_model.LogisticRegression", "solver": "newton-cholesky"}
TREE = {"_target_": "sklearn.tree.DecisionTreeClassifier"}
KNN = {"_target_": "sklearn.neighbors.KNeighborsClassifier", "n_neighbors": 3}
CONSTANT = {"_target_": "sklearn.dummy.DummyClassifier", "strategy": "constant", "constant": 0}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def population():
    X, labels = make_letter_like(rows=600, seed=4)
    y = (np.searchsorted(np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ")), labels) < 13).astype(int)
    return TabularPopulation(X, y, name="letter-like")


def _worker(population, learners, comparisons, sizes=(40,), K=5, nested=2, seed=1):
    fitted = {k: build_learner({"name": k, "estimator": v}, population) for k, v in learners.items()}
    return CVCLTWorker(population, fitted, zero_one, make_conditions(list(sizes), K, population), comparisons, seed,
                       6, nested, 2)


def _run(worker, replicates, n_jobs=1, chunk=100, backend="sequential"):
    return run_chunks(worker, [replicates] * len(worker.conditions),
                      RunnerConfig(chunk_size=chunk, n_jobs=n_jobs, backend=backend, progress=False)).records


def test_records_match_an_independent_recomputation(population):
    """Replicate 3 redone by hand with scikit-learn: CV losses, fold means, the exact target."""
    w = _worker(population, {"logreg": LOGREG}, [], sizes=(40,), K=5)
    rec = _run(w, 4)
    row = rec[(rec.replicate == 3) & (rec.subject == "logreg")].iloc[0]
    cond = w.conditions[0]
    rng = replicate_rng(1, cond.key, 3)
    sample = population.sample(40, rng)
    labels = KFold(5).labels(40, rng)
    losses, errs = np.empty(40), []
    for k in range(5):
        model = LogisticRegression(solver="newton-cholesky").fit(sample.X[labels != k], sample.y[labels != k])
        losses[labels == k] = model.predict(sample.X[labels == k]) != sample.y[labels == k]
        errs.append(np.mean(model.predict(population.X) != population.y))
    assert row.estimate == pytest.approx(losses.mean())
    np.testing.assert_allclose(row.fold_means, [losses[labels == k].mean() for k in range(5)])
    assert row.sigma_out == pytest.approx(losses.std())
    assert row.target == pytest.approx(np.mean(errs))
    full = LogisticRegression(solver="newton-cholesky").fit(sample.X, sample.y)
    assert row.target_full == pytest.approx(np.mean(full.predict(population.X) != population.y))
    assert row.holdout_mean == pytest.approx(losses[labels == 0].mean())
    assert row.target_holdout == pytest.approx(errs[0])        # the model trained without fold 1
    assert len(row.five_by_two) == 10 and len(row.tv_estimates) == 6
    first = rec[rec.replicate < 2]
    assert np.isfinite(first.nested_estimate).all() and (first.nested_se > 0).all()
    assert rec[rec.replicate >= 2].nested_estimate.isna().all()        # nested CV on the first 2 only


def test_identical_records_for_any_chunking_and_workers(population):
    learners = {"tree": TREE, "knn": KNN}
    comparisons = [("tree", "tree"), ("knn", "tree")]
    ref = _run(_worker(population, learners, comparisons), 6)
    other = _run(_worker(population, learners, comparisons), 6, n_jobs=2, chunk=4, backend="loky")
    assert len(ref) == 6 * 4 and (ref.error == "").all()
    for col in ("estimate", "sigma_in", "target", "target_full", "nested_estimate"):
        np.testing.assert_array_equal(ref[col].to_numpy(), other[col].to_numpy())
    np.testing.assert_array_equal(np.stack(ref.tv_estimates), np.stack(other.tv_estimates))
    # the self-comparison uses an independent seed: differences are not identically zero
    twin = ref[ref.subject == "tree vs tree (independent seed)"]
    assert np.abs(np.stack(twin.fold_means)).sum() > 0


def test_calibration_with_iid_losses(population):
    """A constant classifier: losses are i.i.d. Bernoulli(p) and R_n = p for every model. The
    CV t interval is then a t interval on 10 independent fold means (coverage 95% up to the
    normal approximation of Binomial(m, p)), and CV CLT is the Wald interval for p."""
    w = _worker(population, {"zero": CONSTANT}, [("zero", "zero")], sizes=(200,), K=10, nested=0)
    rec = _run(w, 300, n_jobs=2, chunk=50, backend="loky")
    summary, tests = aggregate(rec, 0.05)
    p = np.mean(population.y == 1)
    np.testing.assert_allclose(rec[rec.subject == "zero"].target, p)
    cov = summary[summary.subject == "zero"].set_index("procedure")
    for proc in ("cv_clt_all_pairs", "cv_clt_within_fold", "cv_t", "holdout_clt"):
        k = int(cov.loc[proc, "coverage_count"])
        assert stats.binomtest(k, 300, 0.95).pvalue > 1e-3, proc
    assert cov.loc["cv_t_rho0.7", "coverage"] >= cov.loc["cv_t", "coverage"]
    k = int(cov.loc["holdout_clt", "coverage_holdout_count"])        # Err_holdout = p as well
    assert stats.binomtest(k, 300, 0.95).pvalue > 1e-3
    # identical learners on identical splits: zero differences, no test rejects
    assert (tests.rejection_rate == 0).all() and set(tests.test) >= {"cv_clt_all_pairs", "nadeau_bengio"}


def test_config_errors_name_the_field(compose_config, letter_like_file):
    path = letter_like_file[0]
    base = ["study=cv_clt", "population=letter", f"population.path={path}"]
    validate(compose_config(*base))
    cases = [
        (["study=cv_clt", "population=gaussian_folds"], "population"),      # residuals: no truth of a model
        (base + ["study.sizes=[15]"], "study.sizes"),
        (base + ["study.comparisons=[[tree,svm]]"], "study.comparisons"),
        (base + ["study.K=2"], "study.K"),
        (base + ["study.repeated_splits=1"], "study.repeated_splits"),
        (base + ["+study.learners.bad._target_=sklearn.linear_model.LinearRegression"], "study.learners.bad"),
    ]
    for overrides, field in cases:
        with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
            validate(compose_config(*overrides))


@pytest.mark.parametrize("method", ["paper", "package"])
def test_nested_cv_method_is_wired_through_the_worker(population, method):
    """study.nested_cv_method reaches the worker: replicate 1's nested estimate and SE equal a
    recomputation with plain scikit-learn refits (simstudy.cv.loop.nested_cv_losses with the
    worker's seeds) and nested_cv_interval(method=...); the two methods give different numbers."""
    fitted = {"logreg": build_learner({"name": "logreg", "estimator": LOGREG}, population)}
    conds = make_conditions([40], 5, population)
    rows = {}
    for m in ("paper", "package"):
        w = CVCLTWorker(population, fitted, zero_one, conds, [], 1, 6, 2, 5, nested_cv_method=m)
        rows[m] = _run(w, 2).set_index("replicate").loc[1]
    cond = conds[0]
    rng = replicate_rng(1, cond.key, 1)
    sample = population.sample(40, rng)
    labels = KFold(5).labels(40, rng)

    def refit(train, test):
        model = LogisticRegression(solver="newton-cholesky").fit(sample.X[train], sample.y[train])
        return (model.predict(sample.X[test]) != sample.y[test]).astype(float)

    first = np.empty(40)
    for k in range(5):
        first[labels == k] = refit(np.flatnonzero(labels != k), np.flatnonzero(labels == k))
    nested_rng = replicate_rng(1, condition_key({"condition": cond.key, "nested_cv": True}), 1)
    losses = nested_cv_losses(refit, 40, 5, 5, nested_rng, first_labels=labels, first_outer_losses=first)
    ref = nested_cv_interval(losses.pair_losses, losses.outer_losses, method=method)
    assert rows[method].nested_estimate == pytest.approx(ref.estimate, abs=1e-12)
    assert rows[method].nested_se == pytest.approx(ref.se, abs=1e-12)
    assert rows["paper"].nested_estimate != rows["package"].nested_estimate     # 1 + 3/5 vs 1 + (3/5)^1.5


def test_nested_cv_method_config(compose_config, letter_like_file):
    base = ["study=cv_clt", "population=letter", f"population.path={letter_like_file[0]}"]
    assert compose_config(*base).study.nested_cv_method == "paper"
    validate(compose_config(*base, "study.nested_cv_method=package"))
    with pytest.raises(ConfigError, match=r"study\.nested_cv_method='bates'.*paper.*package"):
        validate(compose_config(*base, "study.nested_cv_method=bates"))


def _records(**columns):
    """A records frame of one (n, learner) group with the given per-replicate columns."""
    R = len(next(iter(columns.values())))
    base = {"n": 100, "K": 10, "subject": "a", "kind": "learner", "error": "", "replicate": np.arange(R)}
    return pd.DataFrame({**base, **columns})


def test_holdout_interval_scored_against_its_own_model():
    """coverage_holdout counts Err_holdout (target_holdout) inside the hold-out interval,
    coverage still counts R_n; own_target names each procedure's target (hand-computed: the
    interval is 0.3 +- 1.96 * 0.05 = [0.202, 0.398])."""
    from simstudy.studies.cv_clt.aggregate import aggregate, own_target_table

    R = 4
    rec = _records(estimate=[0.3] * R, sigma_out=[0.4] * R, sigma_in=[0.4] * R,
                   fold_means=[np.full(10, 0.3)] * R, holdout_mean=[0.3] * R, holdout_se=[0.05] * R,
                   five_by_two=[np.full(10, 0.3)] * R, tv_estimates=[np.full(3, 0.3)] * R,
                   target=[0.25, 0.25, 0.45, 0.45], target_full=[0.3] * R, target_holdout=[0.25, 0.45, 0.45, 0.1],
                   nested_estimate=[np.nan] * R, nested_se=[np.nan] * R)
    summary, _ = aggregate(rec, 0.05)
    hold = summary.set_index("procedure").loc["holdout_clt"]
    assert hold.coverage_count == 2 and hold.coverage_holdout_count == 1 and hold.own_target == "Err_holdout"
    assert (summary[summary.procedure != "holdout_clt"].own_target == "R_n").all()
    table = own_target_table(summary).set_index("procedure")
    # cells: rate [95% Wilson interval] (count/replicates)
    assert table.loc["holdout_clt", "n=100"].startswith("25.0 [") and table.loc["holdout_clt", "n=100"].endswith("(1/4)")
    assert table.loc["holdout_clt", "target"] == "Err_holdout"
    assert table.loc["cv_clt_all_pairs", "n=100"].endswith("(2/4)")  # [0.2216, 0.3784] holds R_n = 0.25, not 0.45
    # records made before target_holdout was stored: coverage_holdout is NaN, nothing else changes
    old, _ = aggregate(rec.drop(columns="target_holdout"), 0.05)
    assert old.coverage_holdout.isna().all() and (old.coverage == summary.coverage).all()


def test_variance_ratio_by_hand_and_monte_carlo():
    """variance_ratio = scale * sample variance / mean (hand-computed), its delta-method SE equals
    the SE of a direct linearisation, and ratio +- 1.96 SE covers the true ratio at the nominal
    rate (binomial test over 1000 simulated studies of 500 replicates)."""
    from simstudy.studies.metrics import variance_ratio

    r = variance_ratio([1.0, -1.0, 0.0, 2.0], [1.0, 2.0, 3.0, 2.0], scale=10.0)
    assert r.value == pytest.approx(10 * (np.var([1, -1, 0, 2], ddof=1) / 2.0))     # 10 * (5/3) / 2
    d, v = np.array([1.0, -1.0, 0.0, 2.0]), np.array([1.0, 2.0, 3.0, 2.0])
    B, A = d.var(ddof=1), v.mean()
    infl = ((d - d.mean()) ** 2 - B) / B - (v - A) / A
    assert r.se == pytest.approx(r.value * infl.std(ddof=1) / 2)
    rng = np.random.default_rng(7)
    hits, T = 0, 1000
    for _ in range(T):
        z = rng.standard_normal(500)
        v = 0.5 + 0.5 * z ** 2 + rng.exponential(1.0, 500)    # E[v] = 2, correlated with d^2
        res = variance_ratio(np.sqrt(3) * z, v)                 # true ratio Var(d) / E[v] = 3 / 2
        hits += abs(res.value - 1.5) <= 1.96 * res.se
    assert stats.binomtest(hits, T, 0.95).pvalue > 1e-3


def test_loss_stability_table():
    """loss_stability: ratio = n Var(R_hat - R_n) / mean sigma_hat^2 per (n, subject) and the
    normal coverage 2 Phi(z / sqrt(ratio)) - 1 (hand-computed on 5 replicates)."""
    from simstudy.studies.cv_clt.aggregate import loss_stability

    rec = _records(estimate=[0.30, 0.32, 0.28, 0.35, 0.25], target=[0.30, 0.30, 0.30, 0.30, 0.30],
                   sigma_out=[0.4, 0.5, 0.4, 0.5, 0.4], sigma_in=[0.45] * 5)
    row = loss_stability(rec, 0.05).iloc[0]
    diff = np.array([0.0, 0.02, -0.02, 0.05, -0.05])
    ratio = 100 * diff.var(ddof=1) / np.mean(np.array([0.4, 0.5, 0.4, 0.5, 0.4]) ** 2)
    assert row.ratio_out == pytest.approx(ratio) and row.ratio_in == pytest.approx(100 * diff.var(ddof=1) / 0.45 ** 2)
    assert row.normal_coverage_out == pytest.approx(2 * stats.norm.cdf(1.959964 / np.sqrt(ratio)) - 1, abs=1e-6)
    assert row.mean_diff == pytest.approx(0.0, abs=1e-15) and row.replicates == 5
