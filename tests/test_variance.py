"""theta1..theta5 of Grandvalet & Bengio (2006): hand values, eq. 8 forms, Lemma 2 exactly, MC."""
import numpy as np
import pytest
from scipy import stats

from simstudy.inference import (
    block_residuals,
    quadratic_forms,
    variance_estimates,
    variance_estimates_from_blocks,
    variance_estimates_from_forms,
)

THETAS = ("theta1", "theta2", "theta3", "theta4", "theta5")


def test_hand_computed_case():
    # e = (0, 1 | 1, 1 | 0, 0), K = 3, m = 2, n = 6; fold means 0.5, 1, 0; mu_hat = 0.5
    est = variance_estimates([0, 1, 1, 1, 0, 0], [0, 0, 1, 1, 2, 2])
    assert est.theta1 == pytest.approx(0.25)
    # theta3 = sum (0, 0.25, 0.25) / (3 * 2)
    assert est.theta3 == pytest.approx(0.5 / 6)
    # theta4 = 1/(nK) sum_k 1/(m-1) sum (e - mu_k)^2 = (0.5 + 0 + 0) / 18
    assert est.theta4 == pytest.approx(0.5 / 18)
    # theta5 = sum (e - 0.5)^2 / (n (n-1)) = 1.5 / 30
    assert est.theta5 == pytest.approx(1.5 / 30)
    # s1 = 3/6; s2 = (2 * (0*1 + 1*1 + 0*0)) / (6 * 1) = 1/3;
    # s3 = ((sum e)^2 - sum e^2 - 2) / (6 * 4) = (9 - 3 - 2) / 24 = 1/6
    forms = quadratic_forms(block_residuals([0, 1, 1, 1, 0, 0], [0, 0, 1, 1, 2, 2]))
    assert (forms.s1, forms.s2, forms.s3) == pytest.approx((0.5, 1 / 3, 1 / 6))
    # theta2 = s1/n - (n+1-m)/n s2 + (n-m)/n s3 = 1/12 - 5/18 + 1/9 = -1/12 (negative: sec. 3.2)
    assert est.theta2 == pytest.approx(1 / 12 - 5 / 18 + 1 / 9)
    assert est.theta2 < 0


@pytest.mark.parametrize("K,m", [(2, 2), (3, 5), (10, 2), (10, 20), (5, 7)])
def test_compact_forms_agree_with_eq8_forms(K, m):
    rng = np.random.default_rng(K * 100 + m)
    blocks = rng.normal(size=(50, K, m)) + rng.normal(size=(50, 1, 1))
    compact = variance_estimates_from_blocks(blocks)
    forms = variance_estimates_from_forms(quadratic_forms(blocks), K, m)
    for name in THETAS:
        np.testing.assert_allclose(getattr(compact, name), getattr(forms, name), rtol=1e-10, atol=1e-14)


def test_fold_labels_in_any_order_and_batches():
    rng = np.random.default_rng(0)
    e = rng.random((4, 12))
    folds = rng.permutation(np.repeat([7, 3, 5], 4))
    batch = variance_estimates(e, folds)
    for i in range(4):
        single = variance_estimates(e[i], folds)
        assert single.theta3 == pytest.approx(batch.theta3[i])
    # theta3 is the variance of fold means / K
    means = np.array([e[0][folds == lab].mean() for lab in (3, 5, 7)])
    assert batch.theta3[0] == pytest.approx(means.var(ddof=1) / 3)


@pytest.mark.parametrize("folds,match", [
    ([0, 0, 1], "at least 2 residuals"),       # unequal folds are fine, a fold of one point is not
    ([0, 0, 0, 0], "at least 2 distinct"),
    ([0, 1, 2, 3], "at least 2 residuals"),
])
def test_invalid_folds_are_rejected(folds, match):
    with pytest.raises(ValueError, match=match):
        variance_estimates(np.zeros(len(folds)), folds)


def _block_covariance(K, m, sigma2, omega, gamma):
    n = K * m
    labels = np.repeat(np.arange(K), m)
    same = labels[:, None] == labels[None, :]
    C = np.where(same, omega, gamma).astype(float)
    C[np.diag_indices(n)] = sigma2
    return C


def _quadratic_matrix(fn, n):
    """Matrix A with fn(e) = e' A e, recovered by polarisation on basis vectors."""
    eye = np.eye(n)
    diag = np.array([fn(eye[i]) for i in range(n)])
    A = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            A[i, j] = diag[i] if i == j else (fn(eye[i] + eye[j]) - diag[i] - diag[j]) / 2
    return A


@pytest.mark.parametrize("K,m", [(3, 2), (4, 3), (5, 4)])
def test_expectations_match_table1_biases_exactly(K, m):
    """Lemma 2 / Table 1: E[theta_j] = theta + bias_j, computed exactly as tr(A C) + mu' A mu."""
    n = K * m
    mu, sigma2, omega, gamma = 0.3, 1.0, 0.25, 0.1
    C = _block_covariance(K, m, sigma2, omega, gamma)
    mean = np.full(n, mu)
    theta = sigma2 / n + (m - 1) / n * omega + (n - m) / n * gamma  # Lemma 1, eq. 5
    assert theta == pytest.approx(C.sum() / n**2)
    labels = np.repeat(np.arange(K), m)
    expected_bias = {
        "theta1": mu**2,
        "theta2": -omega,
        "theta3": -gamma,
        "theta4": -m / n * omega - (n - m) / n * gamma,
        "theta5": -(m - 1) / (n - 1) * omega - (n - m) / (n - 1) * gamma,
    }
    for name in THETAS:
        A = _quadratic_matrix(lambda e: float(getattr(variance_estimates(e, labels), name)), n)
        expectation = np.trace(A @ C) + mean @ A @ mean
        assert expectation == pytest.approx(theta + expected_bias[name], rel=1e-9), name


def test_monte_carlo_unbiasedness_of_theta3_when_gamma_is_zero():
    """theta3 is unbiased when gamma = 0 (Table 1): a z-test on 40,000 Gaussian replicates."""
    K, m, R = 5, 4, 40_000
    C = _block_covariance(K, m, 1.0, 0.3, 0.0)
    rng = np.random.default_rng(123)
    e = rng.multivariate_normal(np.zeros(K * m), C, size=R)
    t3 = variance_estimates(e, np.repeat(np.arange(K), m)).theta3
    theta = C.sum() / (K * m) ** 2
    z = (t3.mean() - theta) / (t3.std(ddof=1) / np.sqrt(R))
    assert 2 * stats.norm.sf(abs(z)) > 1e-3
