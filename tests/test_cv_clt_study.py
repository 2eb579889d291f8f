"""The cv_clt study (Bayle et al.): records against independent recomputation, invariance to
chunking and workers, end-to-end calibration with a learner whose losses are i.i.d., config errors."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from simstudy.errors import ConfigError
from simstudy.learners import build_learner
from simstudy.losses import zero_one
from simstudy.populations import TabularPopulation
from simstudy.rng import replicate_rng
from simstudy.runner import run_chunks
from simstudy.schemes import KFold
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
    return run_chunks(worker, [replicates] * len(worker.conditions), chunk_size=chunk, n_jobs=n_jobs,
                      backend=backend, progress=False).records


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
    # identical learners on identical splits: zero differences, no test rejects
    assert (tests.rejection_rate == 0).all() and set(tests.test) >= {"cv_clt_all_pairs", "nadeau_bengio"}


def test_config_errors_name_the_field(compose_config, letter_like_file):
    path = letter_like_file[0]
    base = ["study=cv_clt", "population=letter", f"population.path={path}"]
    validate(compose_config(*base))
    cases = [
        (["study=cv_clt"], "population"),                                   # logistic: no finite population
        (base + ["study.sizes=[15]"], "study.sizes"),
        (base + ["study.comparisons=[[tree,svm]]"], "study.comparisons"),
        (base + ["study.K=2"], "study.K"),
        (base + ["study.repeated_splits=1"], "study.repeated_splits"),
        (base + ["+study.learners.bad._target_=sklearn.linear_model.LinearRegression"], "study.learners.bad"),
    ]
    for overrides, field in cases:
        with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
            validate(compose_config(*overrides))
