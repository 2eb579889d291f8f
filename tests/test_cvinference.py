"""CV inference on the user's own model: losses against a hand-written CV loop, the no-refit routes
against refitting, every table row against the inference function it names, splitters, bad
input, an end-to-end calibration, and the README's code blocks."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import (
    GroupKFold, KFold, RepeatedKFold, ShuffleSplit, StratifiedKFold, cross_val_predict, cross_validate,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from simstudy.evaluate import COLUMNS, compare, cross_validate_losses, from_cross_validate, from_predictions
from simstudy.inference import (
    binomial_test, cv_clt_test, cv_t_test, holdout_test, mcnemar_test, repeated_kfold_t_test, resampled_t_test,
)

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return X[:, :5], y          # five features: fast fits, still 569 rows


def test_losses_match_a_hand_written_cv_loop(data):
    X, y = data
    splitter = KFold(10, shuffle=True, random_state=3)
    res = cross_validate_losses(GaussianNB(), X, y, cv=splitter, keep_models=True)
    assert res.losses.shape == (1, 569) and res.design == "kfold" and res.K == 10
    assert sorted(res.fold_sizes[0].tolist()) == [56] * 1 + [57] * 9
    for k, (train, test) in enumerate(splitter.split(X)):
        model = GaussianNB().fit(X[train], y[train])
        np.testing.assert_array_equal(res.losses[0, test], model.predict(X[test]) != y[test])
        assert np.all(res.folds[0, test] == k) and res.train_sizes[0, k] == len(train)
        assert res.fold_estimates[0, k] == pytest.approx(np.mean(model.predict(X[test]) != y[test]))
    assert len(res.models) == 10 and res.estimate == pytest.approx(res.losses.mean())


def test_routes_without_refitting_give_the_same_losses(data):
    X, y = data
    splitter = KFold(10, shuffle=True, random_state=0)
    model = GaussianNB()
    refit = cross_validate_losses(model, X, y, cv=splitter)
    pred = cross_val_predict(model, X, y, cv=splitter)
    tests = [test for _, test in splitter.split(X)]
    for folds in (tests, list(splitter.split(X)), refit.folds[0]):
        np.testing.assert_array_equal(from_predictions(y, pred, folds).losses, refit.losses)
    fitted = cross_validate(model, X, y, cv=splitter, return_estimator=True, return_indices=True)
    np.testing.assert_array_equal(from_cross_validate(fitted, X, y).losses, refit.losses)
    # log loss from predict_proba equals the refitting route's, and -log p(y) by hand
    proba = cross_val_predict(model, X, y, cv=splitter, method="predict_proba")
    ll = from_predictions(y, proba, tests, loss="log_loss")
    np.testing.assert_allclose(ll.losses[0], -np.log(proba[np.arange(len(y)), y]))
    np.testing.assert_allclose(cross_validate_losses(model, X, y, cv=splitter, loss="log_loss").losses, ll.losses)
    pd.testing.assert_frame_equal(ll.infer(), from_predictions(y, proba, refit.folds[0], "log_loss").infer())


def test_every_row_is_the_inference_function_it_names(data):
    X, y = data
    splitter = KFold(10, shuffle=True, random_state=1)
    a = cross_validate_losses(GaussianNB(), X, y, cv=splitter)
    b = cross_validate_losses(DecisionTreeClassifier(max_depth=2, random_state=0), X, y, cv=splitter)
    d = compare(a, b)
    table = d.infer(confidence_level=0.9, rhos=[0.0, 0.3]).set_index("procedure")
    assert list(d.infer().columns) == COLUMNS
    e, f = d.losses[0], d.folds[0]
    fm = np.array([e[f == k].mean() for k in range(10)])
    expected = {
        "cv_t_rho0": cv_t_test(fm, bounds=(-1, 1)),
        "cv_t_rho0.3": cv_t_test(fm, rho=0.3, bounds=(-1, 1)),
        "cv_clt_all_pairs": cv_clt_test(e, f, bounds=(-1, 1)),
        "cv_clt_within_fold": cv_clt_test(e, f, variance="within-fold", bounds=(-1, 1)),
        "holdout_fold1": holdout_test(e[f == 0], bounds=(-1, 1)),
    }
    for name, res in expected.items():
        ci = res.confidence_interval(0.9)
        row = table.loc[name]
        assert (row.estimate, row.se, row.low, row.high, row.pvalue) == pytest.approx(
            (res.estimate, res.se, ci.low, ci.high, res.pvalue)), name
    wa, wb = a.losses[0], b.losses[0]
    mc = mcnemar_test(int(np.sum((wa == 1) & (wb == 0))), int(np.sum((wa == 0) & (wb == 1))))
    assert table.loc["mcnemar_exact", "pvalue"] == pytest.approx(mc.pvalue)
    single = a.infer(mu0=0.1).set_index("procedure")
    assert single.loc["binomial_wilson", "pvalue"] == pytest.approx(binomial_test(int(wa.sum()), 569, 0.1).pvalue)
    assert a.infer()["pvalue"].isna().all()            # one model, no null value: intervals only


def test_repeated_kfold_and_train_validation_splits(data):
    X, y = data
    rep = cross_validate_losses(GaussianNB(), X, y, cv=RepeatedKFold(n_splits=5, n_repeats=3, random_state=0))
    assert rep.design == "kfold" and rep.rounds == 3 and rep.K == 5
    table = rep.infer(mu0=0.1).set_index("procedure")
    ref = repeated_kfold_t_test(rep.fold_estimates, 569 - 569 / 5, 569 / 5, 0.1)
    assert table.loc["bouckaert_frank", "pvalue"] == pytest.approx(ref.pvalue)
    assert table.loc["bouckaert_frank", "high"] == pytest.approx(ref.confidence_interval().high)
    assert "repeated_kfold_t" in table.index and "round 1 of 3" in table.loc["cv_t_rho0", "notes"]
    tv = cross_validate_losses(GaussianNB(), X, y, cv=ShuffleSplit(n_splits=8, test_size=50, random_state=0))
    assert tv.design == "splits" and tv.rounds == 8
    table = tv.infer(mu0=0.1).set_index("procedure")
    ref = resampled_t_test(np.nanmean(tv.losses, axis=1), 519, 50, 0.1)
    assert table.loc["nadeau_bengio", "pvalue"] == pytest.approx(ref.pvalue)
    assert "cv_t_rho0" not in table.index


def test_stratified_grouped_and_refit_procedures(data):
    X, y = data
    strat = cross_validate_losses(GaussianNB(), X, y, cv=StratifiedKFold(7, shuffle=True, random_state=0))
    assert strat.K == 7 and set(strat.fold_sizes[0]) <= {81, 82}
    groups = np.arange(569) % 23
    grouped = cross_validate_losses(GaussianNB(), X, y, cv=GroupKFold(5), groups=groups)
    for k in range(5):                                  # no group is split between folds
        assert len(set(groups[grouped.folds[0] == k]) & set(groups[grouped.folds[0] != k])) == 0
    with pytest.raises(ValueError, match="groups"):
        grouped.infer(five_by_two=True)
    table = strat.infer(five_by_two=True, nested=True, nested_repetitions=2, random_state=0).set_index("procedure")
    assert {"5x2cv_t", "nested_cv_paper"} <= set(table.index)
    assert table.loc["nested_cv_paper", "low"] >= 0


def test_regression_and_a_users_loss():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(103, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=103)
    sq = cross_validate_losses(LinearRegression(), X, y, loss="squared", cv=10, random_state=0)
    assert sq.bounds == (0.0, np.inf) and sorted(set(sq.fold_sizes[0])) == [10, 11]
    table = sq.infer().set_index("procedure")
    assert table.loc["cv_clt_all_pairs", "estimate"] == pytest.approx(np.mean(sq.losses))
    assert "binomial_wilson" not in table.index

    def pinball(y, y_hat):
        r = y - y_hat
        return np.maximum(0.9 * r, -0.1 * r)
    mine = cross_validate_losses(LinearRegression(), X, y, loss=pinball, cv=10, random_state=0)
    assert mine.loss.name == "pinball" and mine.bounds == (-np.inf, np.inf)
    np.testing.assert_array_equal(mine.folds, sq.folds)      # same seed, same folds


def test_bad_input_fails_with_clear_messages(data):
    X, y = data
    with pytest.raises(ValueError, match="regression loss but LogisticRegression is a classification model"):
        cross_validate_losses(LogisticRegression(), X, y, loss="squared")
    with pytest.raises(ValueError, match="non-finite"):
        cross_validate_losses(GaussianNB(), X, y, loss=lambda t, p: np.full(len(t), np.nan))
    with pytest.raises(ValueError, match="569 rows but y has 568"):
        cross_validate_losses(GaussianNB(), X, y[:-1])
    with pytest.raises(ValueError, match="needs groups"):
        cross_validate_losses(GaussianNB(), X, y, cv=GroupKFold(5))
    with pytest.raises(ValueError, match="predict_proba"):
        cross_validate_losses(LinearSVC(), X, y, loss="log_loss")
    with pytest.raises(ValueError, match="one prediction per row"):
        from_predictions(y, y[:-3], np.arange(569) % 10)
    with pytest.raises(ValueError, match="needs predicted probabilities"):
        from_predictions(y, y, np.arange(569) % 10, loss="log_loss")
    a = cross_validate_losses(GaussianNB(), X, y, cv=KFold(5, shuffle=True, random_state=0))
    b = cross_validate_losses(GaussianNB(), X, y, cv=KFold(5, shuffle=True, random_state=1))
    with pytest.raises(ValueError, match="same splits"):
        compare(a, b)
    with pytest.raises(ValueError, match="refits"):
        from_predictions(y, y, np.arange(569) % 10).infer(five_by_two=True)
    with pytest.raises(ValueError, match="not for a comparison"):
        compare(a, a).infer(nested=True)


@pytest.mark.slow
def test_end_to_end_calibration_with_independent_losses():
    """A majority-class classifier on labels ~ Bernoulli(0.3), n = 101: its CV losses are the labels
    themselves (i.i.d.) and every fold model's error is 0.3, so the CV CLT all-pairs row is Wald's
    interval for a proportion: its exact coverage, by enumerating the binomial, is the reference."""
    rng = np.random.default_rng(12)
    R, n, p, covered = 400, 101, 0.3, 0
    X = np.zeros((n, 1))
    for _ in range(R):
        y = (rng.random(n) < p).astype(int)
        res = cross_validate_losses(DummyClassifier(), X, y, cv=10, random_state=int(rng.integers(1 << 31)))
        np.testing.assert_array_equal(res.losses[0], y)
        row = res.infer(rhos=[]).set_index("procedure").loc["cv_clt_all_pairs"]
        covered += row.low <= p <= row.high
    k = np.arange(n + 1)
    rate = k / n
    half = stats.norm.ppf(0.975) * np.sqrt(rate * (1 - rate) / n)
    exact = stats.binom.pmf(k, n, p)[(rate - half <= p) & (p <= rate + half)].sum()     # 0.933
    assert stats.binomtest(int(covered), R, exact).pvalue > 1e-3
