"""Nested CV, both methods ("paper", "package"), against a brute-force implementation written
from scratch here: plain loops over repetitions, outer folds and inner folds, refitting the
learner every time, with the standard library's statistics (no numpy in the arithmetic), plus
one case worked by hand with exact fractions."""
import math
import statistics
from statistics import NormalDist

import numpy as np
import pytest

from simstudy.cv.loop import nested_cv_losses
from simstudy.inference.nested import bias_factor, nested_cv_interval


# ------------------------------------------------------------------ the learners, twice
def _mean_fit(xs, ys):
    return sum(ys) / len(ys)


def _mean_predict(model, x):
    return model


def _nn_fit(xs, ys):
    return list(zip(xs, ys))


def _nn_predict(model, x):
    best = min(range(len(model)), key=lambda i: (abs(model[i][0] - x), i))
    return model[best][1]


def _squared(pred, y):
    return (pred - y) ** 2


def _zero_one(pred, y):
    return float(pred != y)


LEARNERS = {"mean/squared": (_mean_fit, _mean_predict, _squared), "1-NN/0-1": (_nn_fit, _nn_predict, _zero_one)}


def _vectorised_losses(name, x, y):
    """The same learners as numpy callables for :func:`nested_cv_losses` (a second implementation)."""
    def mean_losses(train, test):
        return (y[test] - y[train].mean()) ** 2

    def nn_losses(train, test):
        d = np.abs(x[test][:, None] - x[train][None, :])
        return (y[train][np.argmin(d, axis=1)] != y[test]).astype(float)
    return mean_losses if name == "mean/squared" else nn_losses


# ------------------------------------------------------------------ brute force
def _fit_and_score(learner, x, y, train, test):
    fit, predict, loss = learner
    model = fit([x[i] for i in train], [y[i] for i in train])
    return [loss(predict(model, x[i]), y[i]) for i in test]


def _brute_force(learner, x, y, labels_by_rep, K, alpha):
    """Both methods from their definitions, one model fit per (repetition, outer fold, inner fold)."""
    n, R = len(y), len(labels_by_rep)
    a_list, b_list, pivots, ho_errs, outer_all = [], [], [], [], []
    for labels in labels_by_rep:
        for k in range(K):
            outer_train = [i for i in range(n) if labels[i] != k]
            e_in = []
            for j in range(K):                                  # inner CV on the outer training set
                if j == k:
                    continue
                inner_train = [i for i in outer_train if labels[i] != j]
                e_in += _fit_and_score(learner, x, y, inner_train, [i for i in range(n) if labels[i] == j])
            e_out = _fit_and_score(learner, x, y, outer_train, [i for i in range(n) if labels[i] == k])
            diff = statistics.fmean(e_in) - statistics.fmean(e_out)
            a_list.append(diff ** 2)
            b_list.append(statistics.variance(e_out) / len(e_out))
            pivots.append((diff, statistics.variance(e_out) / len(e_out)))
            ho_errs += e_in
            outer_all += e_out
    z = NormalDist().inv_cdf(1 - alpha / 2)
    # the paper: Algorithm 1, bias 1 + (K-2)/K, SE sqrt((K-1)/K MSE) clipped by the naive CV SE
    mse = statistics.fmean(a_list) - statistics.fmean(b_list)
    err_ncv, err_cv = statistics.fmean(ho_errs), statistics.fmean(outer_all)
    est = err_ncv - (1 + (K - 2) / K) * (err_ncv - err_cv)
    se_raw = math.sqrt((K - 1) / K * max(mse, 0.0))
    se_naive = statistics.stdev(outer_all) / math.sqrt(n)
    se = min(max(se_raw, se_naive), math.sqrt(K) * se_naive)
    paper = {"estimate": est, "mse_hat": mse, "err_ncv": err_ncv, "err_cv": err_cv, "se_raw": se_raw, "se": se,
             "low": est - z * se, "high": est + z * se}
    # the package: R/core.R nested_cv, transcribed statement by statement
    n_sub = math.floor(n * (K - 1) / K)
    ugp_infl = math.sqrt(max(0.0, statistics.fmean([p1 ** 2 - p2 for p1, p2 in pivots]))) / (
        statistics.stdev(ho_errs) / math.sqrt(n_sub))
    ugp_infl = max(1.0, min(ugp_infl, math.sqrt(K)))
    bias_reps = math.ceil(R / 5)
    cv_means = []
    for labels in labels_by_rep[:bias_reps]:                    # naive_cv: a fresh ordinary K-fold CV
        errors = []
        for k in range(K):
            errors += _fit_and_score(learner, x, y, [i for i in range(n) if labels[i] != k],
                                     [i for i in range(n) if labels[i] == k])
        cv_means.append(statistics.fmean(errors))
    bias_est = (statistics.fmean(ho_errs) - statistics.fmean(cv_means)) * (1 + ((K - 2) / K) ** 1.5)
    pred_est = statistics.fmean(ho_errs) - bias_est
    half = z * statistics.stdev(ho_errs) / math.sqrt(n) * ugp_infl
    package = {"estimate": pred_est, "mse_hat": mse, "err_ncv": statistics.fmean(ho_errs),
               "err_cv": statistics.fmean(cv_means), "se": half / z, "inflation": ugp_infl,
               "low": pred_est - half, "high": pred_est + half}
    return {"paper": paper, "package": package}


def _data(name, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    if name == "mean/squared":
        y = np.round(rng.normal(2 * x, 1.0), 1)
    else:
        y = ((x + rng.normal(0, 0.3, n)) > 0.5).astype(int)
    return x, y


@pytest.mark.parametrize("name,n,K,R", [
    ("mean/squared", 12, 3, 2),
    ("mean/squared", 8, 4, 6),       # the package's ceil(R/5) = 2 bias repetitions
    ("1-NN/0-1", 15, 5, 3),
    ("1-NN/0-1", 12, 4, 1),
    # unequal folds (n not a multiple of K): the brute force is written for any fold sizes
    ("mean/squared", 13, 3, 2),
    ("1-NN/0-1", 17, 5, 3),
    ("mean/squared", 11, 4, 6),
])
def test_both_methods_match_brute_force(name, n, K, R):
    x, y = _data(name, n, seed=n + K + R)
    out = nested_cv_losses(_vectorised_losses(name, x, y), n, K, R, np.random.default_rng(7))
    brute = _brute_force(LEARNERS[name], x.tolist(), y.tolist(), out.labels.tolist(), K, alpha=0.1)
    for method in ("paper", "package"):
        res = nested_cv_interval(out.pair_losses, out.outer_losses, confidence_level=0.9, method=method)
        ref = brute[method]
        for field, value in ref.items():
            assert getattr(res, field) == pytest.approx(value, rel=1e-12, abs=1e-12), (method, field)
    unclipped = nested_cv_interval(out.pair_losses, out.outer_losses, confidence_level=0.9, clip=False)
    assert unclipped.se == pytest.approx(brute["paper"]["se_raw"], rel=1e-12, abs=1e-15)


def test_hand_computed_mean_predictor():
    """n = 6, K = 3, folds {0,1}, {2,3}, {4,5}, y = (0, 2 | 2, 4 | 6, 8), mean predictor, squared loss.

    Pair models are single-fold means (A = 1, B = 3, C = 7); outer models two-fold means.
    Outer fold A: e_in = (2-7)^2, (4-7)^2, (6-3)^2, (8-3)^2 = 25, 9, 9, 25 (mean 17);
                  e_out = (0-5)^2, (2-5)^2 = 25, 9 (mean 17); a = 0, b = var(25, 9)/2 = 64.
    Outer fold B: e_in = 49, 25, 25, 49 (mean 37); e_out = 4, 0 (mean 2); a = 1225, b = 4.
    Outer fold C: e_in = 9, 1, 1, 9 (mean 5); e_out = 16, 36 (mean 26); a = 441, b = 100.
    MSE_hat = (0 + 1225 + 441)/3 - (64 + 4 + 100)/3 = 1498/3; Err_NCV = 59/3; Err_CV = 15.
    Paper: bias = (4/3)(59/3 - 15) = 56/9, estimate = 121/9; SE_raw = sqrt((2/3)(1498/3));
      outer losses 25, 9, 4, 0, 16, 36 have variance 924/5, so SE_naive = sqrt(924/30) and
      SE_raw > sqrt(3) SE_naive: SE = sqrt(3 * 924/30) = sqrt(92.4).
    Package: bias = (14/3)(1 + 3^-1.5), estimate = 15 - 14/(9 sqrt 3); the 12 inner losses have
      variance 8960/33, so SE = sqrt(3) sqrt(8960/33 / 6) = sqrt(4480/33) (clipped at the top).
    """
    y = np.array([0.0, 2, 2, 4, 6, 8])
    labels = np.array([0, 0, 1, 1, 2, 2])
    out = nested_cv_losses(lambda train, test: (y[test] - y[train].mean()) ** 2, 6, 3, 1,
                           np.random.default_rng(0), first_labels=labels)
    z = NormalDist().inv_cdf(0.975)
    paper = nested_cv_interval(out.pair_losses, out.outer_losses)
    assert paper.mse_hat == pytest.approx(1498 / 3) and paper.err_ncv == pytest.approx(59 / 3)
    assert paper.err_cv == pytest.approx(15) and paper.bias == pytest.approx(56 / 9)
    assert paper.estimate == pytest.approx(121 / 9)
    assert paper.se_raw == pytest.approx(math.sqrt(2 / 3 * 1498 / 3))
    assert paper.se_naive == pytest.approx(math.sqrt(924 / 30)) and paper.se == pytest.approx(math.sqrt(92.4))
    assert (paper.low, paper.high) == pytest.approx((121 / 9 - z * math.sqrt(92.4), 121 / 9 + z * math.sqrt(92.4)))
    package = nested_cv_interval(out.pair_losses, out.outer_losses, method="package")
    assert package.bias == pytest.approx(14 / 3 * (1 + 3 ** -1.5))
    assert package.estimate == pytest.approx(15 - 14 / (9 * math.sqrt(3)))
    assert package.se_naive == pytest.approx(math.sqrt(8960 / 33 / 6)) and package.se == pytest.approx(
        math.sqrt(4480 / 33))
    assert package.inflation == pytest.approx(math.sqrt(3))
    assert nested_cv_interval(out.pair_losses, out.outer_losses, clip=False).se == pytest.approx(
        math.sqrt(2 / 3 * 1498 / 3))


def test_bias_factors_and_their_learning_curve_reading():
    def f(gamma, K):             # exact factor when the excess error decays like size^-gamma
        return ((K / (K - 2)) ** gamma - 1) / ((K / (K - 2)) ** gamma - (K / (K - 1)) ** gamma)
    for K, paper, package in ((3, 4 / 3, 1.19245), (5, 1.6, 1.46476), (10, 1.8, 1.71554)):
        assert bias_factor(K) == pytest.approx(paper) == pytest.approx(f(1, K))
        assert bias_factor(K, "package") == pytest.approx(package, abs=1e-5)
        assert abs(bias_factor(K, "package") - f(2, K)) < 0.008


def test_repetitions_roles():
    """The paper pools every repetition; the package's Err_CV uses only the first ceil(R/5)."""
    rng = np.random.default_rng(3)
    pair, outer = rng.random((6, 4, 4, 3)), rng.random((6, 4, 3))
    perm = rng.permutation(6)
    a, b = nested_cv_interval(pair, outer), nested_cv_interval(pair[perm], outer[perm])
    assert (a.estimate, a.se) == pytest.approx((b.estimate, b.se))
    res = nested_cv_interval(pair, outer, method="package")
    assert res.bias_repetitions == 2 and res.err_cv == pytest.approx(outer[:2].mean())
    assert nested_cv_interval(pair, outer, method="package", bias_repetitions=6).err_cv == pytest.approx(outer.mean())
    assert nested_cv_interval(pair, outer, bias_correction=False).estimate == pytest.approx(a.err_ncv)
    with pytest.raises(ValueError, match="method='package' only"):
        nested_cv_interval(pair, outer, bias_repetitions=2)
    with pytest.raises(ValueError, match="1..R=6"):
        nested_cv_interval(pair, outer, method="package", bias_repetitions=7)
    with pytest.raises(ValueError, match="method"):
        nested_cv_interval(pair, outer, method="bates")


def test_unequal_folds_run_and_too_small_folds_are_refused():
    """n = 103, K = 10: folds of 11 and 10 points, NaN-padded; folds below 2 points are refused."""
    out = nested_cv_losses(lambda tr, te: np.zeros(len(te)), 103, 10, 1, np.random.default_rng(0))
    assert out.pair_losses.shape == (1, 10, 10, 11) and out.outer_losses.shape == (1, 10, 11)
    assert sorted(np.sum(~np.isnan(out.outer_losses[0]), axis=1).tolist()) == [10] * 7 + [11] * 3
    with pytest.raises(ValueError, match="smallest valid n is 8"):
        nested_cv_losses(lambda tr, te: np.zeros(len(te)), 6, 4, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="fold sizes"):
        nested_cv_losses(lambda tr, te: np.zeros(len(te)), 6, 3, 1, np.random.default_rng(0),
                         first_labels=np.array([0, 0, 0, 1, 1, 2]))
    with pytest.raises(ValueError, match="non-finite"):
        nested_cv_losses(lambda tr, te: np.full(len(te), np.nan), 9, 3, 1, np.random.default_rng(0))


@pytest.mark.parametrize("method", ["paper", "package"])
def test_padded_path_equals_the_equal_fold_path(method):
    """The NaN-aware computation (unequal folds) gives the equal-fold numbers when nothing is padded."""
    rng = np.random.default_rng(11)
    pair, outer = rng.random((3, 4, 4, 5)), rng.random((3, 4, 5))
    pair[:, np.arange(4), np.arange(4)] = np.nan
    padded_pair = np.concatenate([pair, np.full((3, 4, 4, 1), np.nan)], axis=3)
    padded_outer = np.concatenate([outer, np.full((3, 4, 1), np.nan)], axis=2)
    a = nested_cv_interval(pair, outer, method=method)
    b = nested_cv_interval(padded_pair, padded_outer, method=method)
    for field in ("estimate", "se", "mse_hat", "err_ncv", "err_cv", "se_naive", "low", "high"):
        assert getattr(b, field) == pytest.approx(getattr(a, field), rel=1e-12), field
    with pytest.raises(ValueError, match="exactly where"):
        broken = padded_pair.copy()
        broken[0, 1, 2, 0] = np.nan
        nested_cv_interval(broken, padded_outer)
