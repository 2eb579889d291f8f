"""Chunk-level kernels for linear classifiers: all folds of all replicates in one go.

The runner hands a kernel a chunk of replicates; every (replicate, fold) training set is then
described by class sums computed once per replicate and downdated by the fold's sums, and
all the small linear systems are solved together with batched linear algebra. Binary labels
{0, 1} only.

Emulated estimators (same decision rule as scikit-learn's, checked in the tests):

- ``RidgeClassifier(alpha >= 0)`` (``alpha = 0`` is least squares): targets -1/+1, centred
  features and targets, w = (Xc'Xc + alpha I)^-1 Xc'yc, intercept = mean(y) - mean(x).w;
  predict 1 iff x.w + intercept > 0. With alpha = 0 and a singular Xc'Xc (collinear features,
  fewer points than features) we return the minimum-norm least-squares solution; scikit-learn's
  Cholesky path then returns a numerically arbitrary one, so the two can differ there.
- ``LinearDiscriminantAnalysis(solver="lsqr", no shrinkage)``: class means m_k,
  priors pi_k = n_k / n, pooled covariance S = sum_k pi_k S_k with S_k the biased class
  covariance; coef_k = S^+ m_k (minimum norm), intercept_k = -m_k.coef_k / 2 + log pi_k;
  predict 1 iff the class-1 score exceeds the class-0 score.

A training fold holding one class gives the constant rule predicting it (w = 0, intercept
+-1), as for the other learners.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.learners.base import BatchFolds, SampleArrays
from simstudy.learners.contracts import KernelInputError, require_fold_labels

__all__ = ["LinearRuleBatch", "BatchedLinearLearner", "BatchedRidge", "BatchedLDA", "batched_linear_learner",
           "fold_weights"]


@dataclass(frozen=True)
class LinearRuleBatch:
    """Rules "predict 1 iff x.w + b > 0" of shape (R, K)."""

    w: np.ndarray  # (R, K, p)
    b: np.ndarray  # (R, K)

    def decision(self, X: np.ndarray) -> np.ndarray:
        """Decision values (R, K, M) of every rule on X (R, M, p)."""
        return np.einsum("rkp,rmp->rkm", self.w, X) + self.b[..., None]


def fold_weights(labels: np.ndarray, K: int) -> np.ndarray:
    """Training weights (R, K, n) of K-fold CV: 1 outside fold k, 0 in it."""
    onehot = (labels[:, None, :] == np.arange(K)[None, :, None]).astype(float)    # (R, K, n)
    return 1.0 - onehot


def _class_counts(train: np.ndarray, y: np.ndarray):
    """Weighted class counts (R, F) of each fit's training set.

    Callers centre X per replicate first, which keeps the Gram matrices well conditioned.
    """
    n1 = np.einsum("rkn,rn->rk", train, (y == 1).astype(float))
    n0 = train.sum(-1) - n1
    return n0, n1


def _constant_rules(w, b, n0, n1):
    only1 = (n0 == 0) & (n1 > 0)
    only0 = n1 == 0
    w = np.where((only1 | only0)[..., None], 0.0, w)
    b = np.where(only1, 1.0, np.where(only0, -1.0, b))
    return w, b


def _pinv_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Minimum-norm least-squares solution of A x = B for stacks of symmetric A."""
    return np.einsum("...ij,...j->...i", np.linalg.pinv(A, rcond=np.finfo(float).eps * A.shape[-1], hermitian=True), B)


class BatchedLinearLearner:
    """The learner protocol for linear rules fitted from weighted class sums (subclasses
    implement :meth:`fit_weighted`). Binary labels {0, 1}; deterministic (``rng`` unused)."""

    dtype = np.float64
    name = "linear"
    task = "classification"

    def fit_weighted(self, X: np.ndarray, y: np.ndarray, train: np.ndarray) -> LinearRuleBatch:
        raise NotImplementedError

    def fold_rules(self, X: np.ndarray, y: np.ndarray, labels: np.ndarray, K: int) -> LinearRuleBatch:
        """Rules (R, K) fitted on each replicate's training folds (all but fold k)."""
        return self.fit_weighted(X, y, fold_weights(labels, K))

    def start(self, sample) -> SampleArrays:
        return SampleArrays(np.ascontiguousarray(sample.X, dtype=np.float64), np.asarray(sample.y))

    def fit(self, state: SampleArrays, rows: np.ndarray, rng: np.random.Generator) -> LinearRuleBatch:
        """One rule trained on the rows ``rows`` (repeated rows count with their multiplicity)."""
        weights = np.bincount(rows, minlength=state.y.shape[0]).astype(float)
        return self.fit_weighted(state.X[None], state.y[None], weights[None, None])

    def predict(self, state: SampleArrays, model: LinearRuleBatch, rows: np.ndarray) -> np.ndarray:
        return self.predict_features(model, state.X[rows])

    def predict_features(self, model: LinearRuleBatch, X: np.ndarray) -> np.ndarray:
        """Label 1 where x.w + b > 0 (a rule of a batch of one)."""
        return (X @ model.w[0, 0] + model.b[0, 0] > 0).astype(np.int64)

    def cross_validate_batch(self, X: np.ndarray, y: np.ndarray, labels: np.ndarray, K: int) -> BatchFolds:
        """K-fold CV of R samples (X (R, n, p), y (R, n), fold labels (R, n)) in one go."""
        if X.ndim != 3 or y.shape != X.shape[:2]:
            raise KernelInputError(f"batched linear kernel: X of shape {X.shape} and y of shape {y.shape}; it needs X "
                                   "(R, n, p) and y (R, n).")
        require_fold_labels("batched linear kernel", labels, X.shape[1], K)
        rules = self.fold_rules(X, y, labels, K)
        own = np.take_along_axis(rules.decision(X), labels[:, None, :], axis=1)[:, 0, :]   # (R, n)
        return BatchFolds((own > 0).astype(int), rules)

    def batch_predict_features(self, rules: LinearRuleBatch, X: np.ndarray, block: int = 64) -> np.ndarray:
        """Labels (R*K, N) of every rule of a batch on features X (N, p), in blocks of rules."""
        W, b = rules.w.reshape(-1, rules.w.shape[-1]), rules.b.reshape(-1)
        out = np.empty((W.shape[0], X.shape[0]), dtype=np.int64)
        for s in range(0, W.shape[0], block):  # blocks of rules keep memory at N x block
            out[s:s + block] = ((X @ W[s:s + block].T + b[s:s + block]) > 0).T
        return out


class BatchedRidge(BatchedLinearLearner):
    """RidgeClassifier emulation (see module docstring); ``alpha = 0`` is least squares."""

    def __init__(self, alpha: float = 1.0, name: str = "ridge"):
        self.alpha = float(alpha)
        self.name = name

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "RidgeClassifier", "engine": "simstudy batched linear",
                "alpha": self.alpha}

    def fit_weighted(self, X: np.ndarray, y: np.ndarray, train: np.ndarray) -> LinearRuleBatch:
        """Rules (R, F) fitted with the training weights ``train`` (R, F, n) on samples X (R, n, p)."""
        xbar = X.mean(axis=1)
        X = X - xbar[:, None, :]
        t = 2.0 * (y == 1) - 1.0                                                    # -1 / +1 targets
        n0, n1 = _class_counts(train, y)
        n = train.sum(-1)                                                           # (R, K)
        mx = np.einsum("rkn,rnp->rkp", train, X) / n[..., None]
        my = np.einsum("rkn,rn->rk", train, t) / n
        gram = np.einsum("rkn,rnp,rnq->rkpq", train, X, X) - n[..., None, None] * mx[..., :, None] * mx[..., None, :]
        xty = np.einsum("rkn,rnp,rn->rkp", train, X, t) - n[..., None] * mx * my[..., None]
        p = X.shape[-1]
        if self.alpha > 0:
            w = np.linalg.solve(gram + self.alpha * np.eye(p), xty[..., None])[..., 0]
        else:
            w = _pinv_solve(gram, xty)
        b = my - np.einsum("rkp,rkp->rk", mx, w)
        return _raw_coordinates(w, b, xbar, n0, n1)


class BatchedLDA(BatchedLinearLearner):
    """LinearDiscriminantAnalysis (lsqr solver, no shrinkage) emulation."""

    def __init__(self, name: str = "lda"):
        self.name = name

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "LinearDiscriminantAnalysis", "engine": "simstudy batched linear"}

    def fit_weighted(self, X: np.ndarray, y: np.ndarray, train: np.ndarray) -> LinearRuleBatch:
        """Rules (R, F) fitted with the training weights ``train`` (R, F, n) on samples X (R, n, p)."""
        xbar = X.mean(axis=1)
        X = X - xbar[:, None, :]
        n0, n1 = _class_counts(train, y)
        n = n0 + n1
        coefs, intercepts = [], []
        scatter = 0.0
        means = {}
        for label, count in ((0, n0), (1, n1)):
            wts = train * (y == label)[:, None, :]
            with np.errstate(invalid="ignore", divide="ignore"):
                m = np.einsum("rkn,rnp->rkp", wts, X) / count[..., None]
            m = np.nan_to_num(m)
            means[label] = m
            scatter = scatter + (np.einsum("rkn,rnp,rnq->rkpq", wts, X, X)
                                 - count[..., None, None] * m[..., :, None] * m[..., None, :])
        cov = scatter / n[..., None, None]                  # sum_k (n_k/n) S_k, S_k biased
        for label, count in ((0, n0), (1, n1)):
            coef = _pinv_solve(cov, means[label])
            with np.errstate(divide="ignore"):
                intercepts.append(-0.5 * np.einsum("rkp,rkp->rk", means[label], coef) + np.log(count / n))
            coefs.append(coef)
        w = coefs[1] - coefs[0]
        b = intercepts[1] - intercepts[0]
        return _raw_coordinates(w, np.nan_to_num(b), xbar, n0, n1)


def _raw_coordinates(w, b, xbar, n0, n1) -> LinearRuleBatch:
    """Rules fitted on features centred by xbar (R, p), expressed on the raw features;
    single-class folds become constant rules."""
    b = b - np.einsum("rp,rkp->rk", xbar, w)
    w, b = _constant_rules(w, b, n0, n1)
    return LinearRuleBatch(w, b)


def batched_linear_learner(estimator, name: str):
    """The batched kernel reproducing ``estimator``, or (None, reason) when there is none."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import RidgeClassifier

    params = estimator.get_params(deep=False)
    if type(estimator) is RidgeClassifier:
        ok = (params["fit_intercept"] and params["class_weight"] is None and params["solver"] in ("auto", "cholesky", "svd")
              and not params.get("positive", False))
        return (BatchedRidge(params["alpha"], name), "") if ok else (None, "RidgeClassifier settings")
    if type(estimator) is LinearDiscriminantAnalysis:
        # lsqr's lstsq is the minimum-norm solution, like ours; eigen needs a positive definite
        # within-class covariance (it fails where ours would not), svd truncates by a tolerance
        ok = (params["solver"] == "lsqr" and params["shrinkage"] is None and params["priors"] is None
              and params.get("covariance_estimator") is None)
        return (BatchedLDA(name), "") if ok else (None, f"LDA solver={params['solver']!r} / shrinkage / priors")
    return None, f"{type(estimator).__name__} has no batched kernel"
