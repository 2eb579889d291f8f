"""Batched logistic regression kernel against scikit-learn, a closed-form check and its edge cases."""
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize
from sklearn.linear_model import LogisticRegression

from simstudy.learners.logistic.batch import BatchedLogistic, fit_logistic_batch, supported_logistic_params
from simstudy.learners.logistic.newton import (
    CONVERGED, HESSIAN_UNDERFLOW, MAX_ITER, OPTIMUM_TOL, SINGLE_CLASS, SINGULAR_HESSIAN,
)
from simstudy.populations.io.table import binarize
from simstudy.populations.io.text import load_table_file

from conftest import LETTER_FILE

#: the cv_clt study's binarisation (conf/population/letter.yaml): A-M are class 1
POSITIVE = list("ABCDEFGHIJKLM")


def _letter_file() -> Path | None:
    """conftest's LETTER_FILE, else shared/data/ beside any ancestor (a git worktree lives one
    level deeper than the main checkout)."""
    relative = LETTER_FILE.relative_to(LETTER_FILE.parents[2])
    candidates = [LETTER_FILE] + [parent / relative for parent in Path(__file__).resolve().parents]
    return next((path for path in candidates if path.is_file()), None)


@pytest.fixture(scope="module")
def letter():
    path = _letter_file()
    if path is None:
        pytest.skip(f"{LETTER_FILE} not available")
    X, labels = load_table_file(path)
    return X, binarize(labels, POSITIVE)


def _design(letter, n, R=1, K=10, seed=0):
    """R samples of n Letter rows (with replacement, as the study) and the weights of the K
    CV training folds plus the full sample: (X (R, n, p), y (R, n), weights (R, K + 1, n))."""
    X, y = letter
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(y), (R, n))
    labels = np.stack([rng.permutation(np.repeat(np.arange(K), n // K)) for _ in range(R)])
    folds = labels[:, None, :] != np.arange(K)[None, :, None]
    weights = np.concatenate([folds, np.ones((R, 1, n), bool)], axis=1).astype(float)
    return X[idx], y[idx].astype(float), weights


def _sklearn(X, y, mask, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # a convergence warning would invalidate the reference
        return LogisticRegression(solver="newton-cholesky", **params).fit(X[mask > 0], y[mask > 0])


def _theta(w, b):
    return np.concatenate([w, np.atleast_1d(b)])


def _mismatches(Xpop, w1, b1, w2, b2, rounding=1e-9):
    """Population points predicted differently by two rules, and those not within rounding of 0."""
    d1, d2 = Xpop @ w1 + b1, Xpop @ w2 + b2
    differ = (d1 > 0) != (d2 > 0)
    return int(differ.sum()), int((differ & (np.abs(d1) > rounding) & (np.abs(d2) > rounding)).sum())


@pytest.mark.parametrize("n", [100, 800])
@pytest.mark.parametrize("tol", [1e-4, 1e-10])
def test_folds_and_full_fit_equal_sklearn_on_letter(letter, n, tol):
    """Same start, steps and stopping rule as scikit-learn: same fits (to rounding) and the
    same number of Newton steps, at its default tol as at a tight one."""
    X, y, weights = _design(letter, n, seed=n)
    fit = fit_logistic_batch(X, y, weights, tol=tol)
    assert fit.converged.all()
    for f in range(weights.shape[1]):
        est = _sklearn(X[0], y[0], weights[0, f], tol=tol)
        ours, ref = _theta(fit.w[0, f], fit.b[0, f]), _theta(est.coef_[0], est.intercept_[0])
        np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)
        assert np.abs(ours - ref).max() < 1e-10
        assert fit.n_iter[0, f] == est.n_iter_[0]
        assert _mismatches(letter[0], fit.w[0, f], fit.b[0, f], est.coef_[0], est.intercept_[0]) == (0, 0)


def test_sklearn_default_tol_stops_short_of_the_optimum(letter):
    """Why the kernel follows scikit-learn's iterates: at tol=1e-4 its fit is up to ~1e-3 (in
    decision values) from the optimum, enough to flip some population predictions."""
    X, y, weights = _design(letter, 1600, R=1, seed=3)
    default = fit_logistic_batch(X, y, weights)                       # scikit-learn's tol=1e-4
    optimum = fit_logistic_batch(X, y, weights, tol=OPTIMUM_TOL)
    gap = np.abs(default.decision(letter[0][None]) - optimum.decision(letter[0][None])).max()
    assert 1e-6 < gap < 1e-2
    assert (optimum.n_iter > default.n_iter).all()


@pytest.mark.parametrize("C", [0.01, 0.3, 10.0, 1000.0])
def test_other_C_equal_sklearn(letter, C):
    X, y, weights = _design(letter, 100, R=2, seed=7)
    fit = fit_logistic_batch(X, y, weights[:, :4], C=C, tol=1e-10)
    for r in range(2):
        for f in range(4):
            est = _sklearn(X[r], y[r], weights[r, f], C=C, tol=1e-10, max_iter=200)
            ref = _theta(est.coef_[0], est.intercept_[0])
            np.testing.assert_allclose(_theta(fit.w[r, f], fit.b[r, f]), ref, rtol=1e-6, atol=1e-6)


def test_no_intercept_equals_sklearn(letter):
    X, y, weights = _design(letter, 200, seed=11)
    fit = fit_logistic_batch(X, y, weights[:, :3], fit_intercept=False, tol=1e-10)
    assert (fit.b == 0).all()
    for f in range(3):
        est = _sklearn(X[0], y[0], weights[0, f], fit_intercept=False, tol=1e-10)
        np.testing.assert_allclose(fit.w[0, f], est.coef_[0], rtol=1e-6, atol=1e-6)


def test_bootstrap_counts_equal_repeated_rows(letter):
    """Integer weights are sample weights: the same fit as the rows repeated (and as scikit-learn
    with sample_weight); the penalty scales with the sum of the weights."""
    X, y, _ = _design(letter, 100, seed=5)
    counts = np.random.default_rng(5).multinomial(100, np.full(100, 0.01)).astype(float)
    fit = fit_logistic_batch(X, y, counts[None, None], tol=1e-10)
    rows = np.repeat(np.arange(100), counts.astype(int))
    repeated = LogisticRegression(solver="newton-cholesky", tol=1e-10).fit(X[0, rows], y[0, rows])
    weighted = LogisticRegression(solver="newton-cholesky", tol=1e-10).fit(X[0], y[0], sample_weight=counts)
    for est in (repeated, weighted):
        np.testing.assert_allclose(_theta(fit.w[0, 0], fit.b[0, 0]), _theta(est.coef_[0], est.intercept_[0]), atol=1e-8)


def _objective_gradient(X, y, s, w, b, C):
    """Gradient of 1/S sum s_i l(y_i, x_i.w + b) + ||w||^2 / (2 C S), written out in NumPy."""
    S = s.sum()
    r = s * (1 / (1 + np.exp(-(X @ w + b))) - y) / S
    return np.concatenate([X.T @ r + w / (C * S), [r.sum()]])


def test_gradient_vanishes_at_the_solution(letter):
    X, y, weights = _design(letter, 400, R=2, seed=9)
    for C in (0.1, 1.0, 50.0):
        fit = fit_logistic_batch(X, y, weights, C=C, tol=OPTIMUM_TOL)
        for r in range(2):
            for f in range(weights.shape[1]):
                g = _objective_gradient(X[r], y[r], weights[r, f], fit.w[r, f], fit.b[r, f], C)
                assert np.abs(g).max() <= OPTIMUM_TOL     # the stopping rule, checked independently


def test_one_feature_equals_scipy_minimize():
    """The textbook form C sum_i l_i + w^2 / 2 (same optimum) minimised by BFGS."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=50) * 3 + 1
    y = (x + rng.logistic(size=50) > 1).astype(float)
    for C in (0.05, 1.0, 20.0):
        def f(theta):
            z = theta[0] * x + theta[1]
            return C * np.sum(np.logaddexp(0, z) - y * z) + theta[0] ** 2 / 2

        ref = optimize.minimize(f, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
        fit = fit_logistic_batch(x[None, :, None], y[None], np.ones((1, 1, 50)), C=C, tol=OPTIMUM_TOL)
        np.testing.assert_allclose([fit.w[0, 0, 0], fit.b[0, 0]], ref, atol=1e-6)


def test_single_class_subset_is_the_constant_rule():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1, 8, 2))
    y = np.array([[1, 1, 1, 1, 1, 1, 0, 0]], float)
    weights = np.array([[[1, 1, 1, 1, 0, 0, 0, 0],      # only class 1
                         [0, 0, 0, 0, 0, 0, 1, 1],      # only class 0
                         [1, 1, 1, 1, 1, 1, 1, 1]]], float)
    fit = fit_logistic_batch(X, y, weights)
    assert fit.status[0].tolist() == [SINGLE_CLASS, SINGLE_CLASS, CONVERGED]
    assert fit.converged.all() and fit.n_iter[0, :2].tolist() == [0, 0]
    assert (fit.w[0, :2] == 0).all() and fit.b[0, :2].tolist() == [1.0, -1.0]
    pop = rng.normal(size=(1, 5, 2))
    assert (fit.predict(pop)[0, 0] == 1).all() and (fit.predict(pop)[0, 1] == 0).all()
    proba = fit.predict_proba(pop)
    assert (proba[0, 0] == 1).all() and (proba[0, 1] == 0).all() and ((proba[0, 2] > 0) & (proba[0, 2] < 1)).all()
    summary = fit.summary()
    assert (summary["fits"], summary["single_class"], summary["converged"]) == (3, 2, 1)
    assert summary["most_steps"] == fit.n_iter[0, 2] > 0


def test_separable_data_converge_to_a_finite_optimum():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1, 60, 3))
    y = (X[..., 0] + X[..., 1] > 0).astype(float)
    norms = []
    for C in (1.0, 1e4, 1e8):
        fit = fit_logistic_batch(X, y, np.ones((1, 1, 60)), C=C, tol=OPTIMUM_TOL, max_iter=100)
        assert fit.status[0, 0] == CONVERGED
        est = _sklearn(X[0], y[0], np.ones(60), C=C, tol=OPTIMUM_TOL)
        np.testing.assert_allclose(fit.w[0, 0], est.coef_[0], rtol=1e-9)
        if C >= 1e4:                                     # weak penalty: the separating rule
            assert (fit.predict(X)[0, 0] == y[0]).all()
        norms.append(np.linalg.norm(fit.w[0, 0]))
    assert norms[0] < norms[1] < norms[2] < 1e3          # grows with C, finite for C < inf
    # at C = 1e12 most pointwise Hessians underflow to 0: scikit-learn switches to L-BFGS, we flag it
    fit = fit_logistic_batch(X, y, np.ones((1, 1, 60)), C=1e12, tol=OPTIMUM_TOL)
    assert fit.status[0, 0] == HESSIAN_UNDERFLOW and not fit.converged[0, 0]


def test_hessian_positive_definite_unless_numerically_singular():
    """Duplicated (collinear) features: the penalty keeps H positive definite at C = 1; with
    C = 1e300 the penalty vanishes in rounding and the Cholesky factorisation reports it."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1, 40, 2))
    X = np.concatenate([X, X[..., :1]], axis=-1)
    y = (X[..., 0] + rng.normal(size=(1, 40)) > 0).astype(float)
    fit = fit_logistic_batch(X, y, np.ones((1, 1, 40)), tol=OPTIMUM_TOL)
    assert fit.status[0, 0] == CONVERGED
    np.testing.assert_allclose(fit.w[0, 0, 0], fit.w[0, 0, 2], rtol=1e-9)   # the penalty splits the weight evenly
    fit = fit_logistic_batch(X, y, np.ones((1, 1, 40)), C=1e300)
    assert fit.status[0, 0] == SINGULAR_HESSIAN and not fit.converged[0, 0]


@pytest.mark.parametrize("dim", range(1, 10))
def test_tiled_hessian_and_pointwise_pass_against_numpy(dim):
    """The 2 x 4 tiled Hessian (zero rows padding the design to a multiple of 4) and the
    vectorised pointwise pass, for every width the tiles can leave ragged, against the same
    quantities from NumPy's exp, log1p and matrix products."""
    from simstudy.learners.logistic.newton import _hessian, _padded_rows, _pointwise

    rng = np.random.default_rng(dim)
    m, n, p = 37, 40, dim - 1            # the last row is the intercept's ones; only m of n columns active
    XT = np.zeros((_padded_rows(dim), n))
    XT[:p] = rng.normal(size=(p, n))
    XT[p] = 1.0
    z = rng.normal(0, 4, n)
    z[:2] = (760.0, -760.0)               # exp(-|z|) underflows: h = 0 there
    y = (rng.random(n) < 0.5).astype(float)
    s = rng.integers(0, 3, n).astype(float)
    S = s[:m].sum()
    gw, hw, e, lg = (np.empty(n) for _ in range(4))
    loss, zero = _pointwise(y, z, s, m, S, gw, hw, e, lg, np.empty(n, np.int64))
    zm, ym, sm = z[:m], y[:m], s[:m]
    ex = np.exp(-np.abs(zm))
    ref_loss = np.sum(sm * (np.log1p(ex) + np.maximum(zm, 0.0) - ym * zm)) / S
    from scipy.special import expit

    sig = expit(zm)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-14)
    ref_gw, ref_hw = sm * (sig - ym) / S, sm * ex / (1.0 + ex) ** 2 / S   # sig - y cancels near y: absolute
    np.testing.assert_allclose(gw[:m], ref_gw, rtol=1e-13, atol=1e-15 * np.abs(ref_gw).max())
    np.testing.assert_allclose(hw[:m], ref_hw, rtol=1e-13, atol=1e-300)
    assert zero == pytest.approx(sm[:2].sum() / S)
    lam = 0.3
    H = np.empty((dim, dim))
    _hessian(XT, dim, hw, m, p, lam, H, np.empty((XT.shape[0], XT.shape[0])))
    Xa = XT[:dim, :m]
    ref = (Xa * hw[:m]) @ Xa.T + lam * np.diag([1.0] * p + [0.0])
    np.testing.assert_allclose(H, ref, rtol=1e-13, atol=1e-15)
    assert np.array_equal(H, H.T)


def test_non_convergence_is_reported(letter):
    X, y, weights = _design(letter, 100, seed=1)
    fit = fit_logistic_batch(X, y, weights, max_iter=2)
    assert (fit.status == MAX_ITER).all() and not fit.converged.any() and (fit.n_iter == 2).all()
    assert (fit.grad_max > 1e-4).all()
    start = fit_logistic_batch(X, y, weights, max_iter=0, init=np.arange(17.0))
    assert (start.w == np.arange(16.0)).all() and (start.b == 16).all()


def test_warm_start_reaches_the_same_optimum_in_fewer_steps(letter):
    X, y, weights = _design(letter, 400, R=3, seed=4)
    cold = BatchedLogistic(tol=OPTIMUM_TOL).fit_weighted(X, y, weights)
    warm = BatchedLogistic(tol=OPTIMUM_TOL, warm_start=True).fit_weighted(X, y, weights)
    np.testing.assert_allclose(warm.w, cold.w, atol=1e-9)
    np.testing.assert_allclose(warm.b, cold.b, atol=1e-9)
    assert warm.n_iter[:, -1].max() <= 1                 # the full sample starts at its own optimum
    assert warm.n_iter.sum() + 3 * 6 < cold.n_iter.sum()  # even counting the extra full-sample fits


def test_fold_rules_are_the_masked_fits(letter):
    X, y, weights = _design(letter, 100, R=2, seed=6)
    labels = np.argmin(weights[:, :10], axis=1)          # the fold each row is held out of
    learner = BatchedLogistic()
    folds = learner.fold_rules(X, y, labels, 10)
    masked = learner.fit_weighted(X, y, weights[:, :10])
    np.testing.assert_array_equal(folds.w, masked.w)
    assert learner.describe()["estimator"] == "LogisticRegression"


@pytest.mark.parametrize("params, ok", [
    ({"solver": "newton-cholesky"}, True),
    ({}, True),                                          # lbfgs: same objective
    ({"solver": "sag", "C": 0.1, "fit_intercept": False}, True),
    ({"l1_ratio": None}, True),                          # deprecated spelling of L2
    ({"penalty": "l2"}, True),                           # deprecated spelling of L2
    ({"solver": "liblinear"}, False),                    # penalised intercept
    ({"solver": "saga", "l1_ratio": 1.0}, False),
    ({"solver": "saga", "l1_ratio": 0.5}, False),
    ({"C": np.inf}, False),                              # no penalty
    ({"class_weight": "balanced"}, False),
])
def test_supported_params(params, ok):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        est = LogisticRegression(**params)
        got, why = supported_logistic_params(est)
    assert got is ok and (why == "") is ok


def test_from_estimator_takes_over_tol_only_for_newton_cholesky():
    same = BatchedLogistic.from_estimator(LogisticRegression(solver="newton-cholesky", tol=1e-3, max_iter=7))
    assert (same.tol, same.max_iter) == (1e-3, 7)
    other = BatchedLogistic.from_estimator(LogisticRegression(max_iter=1000))
    assert (other.tol, other.max_iter) == (OPTIMUM_TOL, 1000)
    warm = BatchedLogistic.from_estimator(LogisticRegression(solver="newton-cholesky"), warm_start=True)
    assert warm.tol == OPTIMUM_TOL and warm.warm_start
    with pytest.raises(ValueError, match="liblinear"):
        BatchedLogistic.from_estimator(LogisticRegression(solver="liblinear"))


@pytest.mark.parametrize("bad, match", [
    ({"y": np.array([[0, 2, 1, 0]])}, "binary"),
    ({"weights": -np.ones((1, 1, 4))}, "non-negative"),
    ({"weights": np.zeros((1, 1, 4))}, "positive total weight"),
    ({"C": 0.0}, "C must be"),
    ({"C": np.inf}, "C must be"),
])
def test_invalid_inputs(bad, match):
    args = {"X": np.ones((1, 4, 2)), "y": np.array([[0, 1, 1, 0]]), "weights": np.ones((1, 1, 4)), **bad}
    with pytest.raises(ValueError, match=match):
        fit_logistic_batch(**args)
