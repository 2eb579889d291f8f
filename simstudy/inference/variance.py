"""Variance estimators of the K-fold cross-validation estimate.

Notation of Grandvalet & Bengio (2006): n residuals e_i in K blocks (folds) T_1..T_K of equal
size m = n / K; mu_hat = mean(e), mu_hat_k = mean of e over block k.

All functions accept a batch: the residual array may have leading axes (one per replicate),
with the last two axes being (K, m) in the "blocked" helpers.
"""
from __future__ import annotations

import numpy as np

from simstudy.inference.results import QuadraticForms, VarianceEstimates

__all__ = [
    "block_residuals",
    "quadratic_forms",
    "variance_estimates",
    "variance_estimates_from_blocks",
    "variance_estimates_from_forms",
]


def block_residuals(residuals, folds):
    """Arrange residuals into equal-sized blocks.

    Parameters
    ----------
    residuals : array_like, shape (..., n)
        Cross-validation residuals e_i (loss, or loss difference for a comparison).
    folds : array_like of int, shape (n,)
        Fold label of each residual. Every label must occur the same number of times
        (the estimators assume n = K m).

    Returns
    -------
    blocks : ndarray, shape (..., K, m)
        ``blocks[..., k, :]`` holds the residuals of the k-th distinct label (sorted order).
    """
    e = np.asarray(residuals, dtype=float)
    folds = np.asarray(folds)
    if e.ndim < 1 or folds.ndim != 1 or e.shape[-1] != folds.shape[0]:
        raise ValueError(
            f"folds must be a 1-D array with one label per residual; got residuals of shape "
            f"{e.shape} and folds of shape {folds.shape}."
        )
    labels, counts = np.unique(folds, return_counts=True)
    if labels.size < 2:
        raise ValueError(f"folds must contain at least 2 distinct labels (K >= 2); got {labels.size}.")
    if np.any(counts != counts[0]):
        raise ValueError(
            "folds must all have the same size (n must be a multiple of K for these estimators); "
            f"got fold sizes {dict(zip(labels.tolist(), counts.tolist()))}."
        )
    if counts[0] < 2:
        raise ValueError(
            "each fold must hold at least 2 residuals (m >= 2): theta2 and theta4 divide by m - 1; "
            "use leave-one-out formulas instead."
        )
    order = np.argsort(folds, kind="stable")
    return e[..., order].reshape(e.shape[:-1] + (labels.size, counts[0]))


def quadratic_forms(blocks) -> QuadraticForms:
    """The quadratic forms s1, s2, s3 of eq. 8 of Grandvalet & Bengio (2006).

    s1 = (1/n) sum_i e_i^2,
    s2 = 1/(n(m-1)) sum_k sum_{i != j in T_k} e_i e_j,
    s3 = 1/(n(n-m)) sum_k sum_{l != k} sum_{i in T_k, j in T_l} e_i e_j.

    Parameters
    ----------
    blocks : array_like, shape (..., K, m)

    Returns
    -------
    QuadraticForms
    """
    b = np.asarray(blocks, dtype=float)
    K, m = b.shape[-2:]
    n = K * m
    sq = np.sum(b * b, axis=(-2, -1))                 # sum_i e_i^2
    block_sums = b.sum(axis=-1)                        # (..., K)
    within = np.sum(block_sums**2, axis=-1) - sq       # sum_k sum_{i != j in T_k} e_i e_j
    total = block_sums.sum(axis=-1) ** 2 - sq - within # pairs in different blocks
    return QuadraticForms(s1=sq / n, s2=within / (n * (m - 1)), s3=total / (n * (n - m)))


def variance_estimates_from_forms(forms: QuadraticForms, K: int, m: int) -> VarianceEstimates:
    """theta1..theta5 as the linear combinations of s1, s2, s3 of Table 1 and section 3.5.

    This is the "representer" form of Lemma 2; :func:`variance_estimates_from_blocks` uses
    the compact forms in mu_hat, mu_hat_k and e_i instead. The two must agree.
    """
    n = K * m
    s1, s2, s3 = forms.s1, forms.s2, forms.s3
    return VarianceEstimates(
        theta1=s1 / n + (m - 1) / n * s2 + (n - m) / n * s3,
        theta2=s1 / n - (n + 1 - m) / n * s2 + (n - m) / n * s3,
        theta3=s1 / n + (m - 1) / n * s2 - m / n * s3,
        theta4=s1 / n - s2 / n,
        theta5=s1 / n - (m - 1) / ((n - 1) * n) * s2 - (n - m) / ((n - 1) * n) * s3,
    )


def variance_estimates_from_blocks(blocks) -> VarianceEstimates:
    """theta1..theta5 of Grandvalet & Bengio (2006) from residuals arranged in blocks.

    Compact forms (section 3):

    - theta1 = mu_hat^2                                                  (assumes mu = 0)
    - theta2 = s1/n - (n+1-m)/n s2 + (n-m)/n s3                          (assumes omega = 0)
    - theta3 = 1/(K(K-1)) sum_k (mu_hat_k - mu_hat)^2                    (assumes gamma = 0)
    - theta4 = 1/(nK) sum_k 1/(m-1) sum_{i in T_k} (e_i - mu_hat_k)^2   (gamma = -m omega/(n-m))
    - theta5 = 1/(n(n-1)) sum_i (e_i - mu_hat)^2                         (omega = gamma = 0)

    Parameters
    ----------
    blocks : array_like, shape (..., K, m)
        Residuals; axis -2 indexes the block, axis -1 the example within it. K >= 2, m >= 2.

    Returns
    -------
    VarianceEstimates
        Arrays of shape ``blocks.shape[:-2]`` (floats for a single replicate).
        theta2 can be negative (section 3.2); the others are >= 0.
    """
    b = np.asarray(blocks, dtype=float)
    K, m = b.shape[-2:]
    n = K * m
    fold_means = b.mean(axis=-1)
    mu = fold_means.mean(axis=-1)
    theta3 = np.sum((fold_means - mu[..., None]) ** 2, axis=-1) / (K * (K - 1))
    within_ss = np.sum((b - fold_means[..., None]) ** 2, axis=(-2, -1))
    theta4 = within_ss / ((m - 1) * n * K)
    theta5 = np.sum((b - mu[..., None, None]) ** 2, axis=(-2, -1)) / (n * (n - 1))
    forms = quadratic_forms(b)
    theta2 = variance_estimates_from_forms(forms, K, m).theta2
    return VarianceEstimates(theta1=mu**2, theta2=theta2, theta3=theta3, theta4=theta4, theta5=theta5)


def variance_estimates(residuals, folds) -> VarianceEstimates:
    """Variance estimates theta1..theta5 of the K-fold CV estimate (Grandvalet & Bengio 2006).

    Parameters
    ----------
    residuals : array_like, shape (..., n)
        Residuals e_i: the loss of the model trained without i's fold on example i, or for a
        comparison of two algorithms the difference of their losses. Leading axes are
        replicates.
    folds : array_like of int, shape (n,)
        Fold label of each residual; all folds must have the same size m >= 2.

    Returns
    -------
    VarianceEstimates
        theta1..theta5 (see :func:`variance_estimates_from_blocks` for the formulas).

    Examples
    --------
    >>> from simstudy.inference import variance_estimates
    >>> est = variance_estimates([0, 1, 1, 1], [0, 0, 1, 1])
    >>> float(est.theta3)  # fold means 0.5 and 1, mean 0.75: (2 * 0.25**2) / (2 * 1)
    0.0625
    """
    return variance_estimates_from_blocks(block_residuals(residuals, folds))
