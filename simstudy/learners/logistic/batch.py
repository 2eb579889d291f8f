"""Many logistic fits at once: :func:`fit_logistic_batch` checks its inputs and runs the Newton
kernel (:mod:`.newton`) on every (replicate, fit) of a batch; :class:`BatchedLogistic` fits the
K folds of a chunk of samples; :func:`supported_logistic_params` says which ``LogisticRegression``
settings the kernel reproduces."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.learners.linear.batched import LinearRuleBatch
from simstudy.learners.logistic.newton import CONVERGED, OPTIMUM_TOL, SINGLE_CLASS, STATUS_NAMES, _fit_batch

__all__ = ["BatchedLogistic", "LogisticFit", "fit_logistic_batch", "supported_logistic_params"]


@dataclass(frozen=True)
class LogisticFit(LinearRuleBatch):
    """Fitted logistic rules "predict 1 iff x.w + b > 0" of shape (R, F), with solver diagnostics.

    Attributes
    ----------
    w : ndarray, shape (R, F, p)
        Coefficients (scikit-learn's ``coef_[0]``).
    b : ndarray, shape (R, F)
        Intercepts (``intercept_[0]``); +-1 for single-class fits.
    n_iter : ndarray of int, shape (R, F)
        Newton steps taken (``n_iter_``).
    status : ndarray of int8, shape (R, F)
        Index into :data:`STATUS_NAMES`.
    grad_max : ndarray, shape (R, F)
        max |gradient of L| at the last iterate (NaN for single-class fits).
    """

    n_iter: np.ndarray
    status: np.ndarray
    grad_max: np.ndarray

    @property
    def converged(self) -> np.ndarray:
        """(R, F) bool: the stopping rule was met (single-class fits count as converged)."""
        return (self.status == CONVERGED) | (self.status == SINGLE_CLASS)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Labels (R, F, M) in {0, 1} of every rule on X (R, M, p)."""
        return (self.decision(X) > 0).astype(np.int64)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """P(y = 1 | x) (R, F, M) of every rule on X (R, M, p): sigmoid of the decision value,
        exactly 1 or 0 for single-class fits."""
        from scipy.special import expit

        proba = expit(self.decision(X))
        single = (self.status == SINGLE_CLASS)[..., None]
        return np.where(single, (self.b > 0)[..., None].astype(float), proba)

    def summary(self) -> dict[str, Any]:
        """Fits with each status, and the mean and largest number of Newton steps of the solved fits."""
        steps = self.n_iter[self.status != SINGLE_CLASS]
        counts = {name: int((self.status == k).sum()) for k, name in enumerate(STATUS_NAMES)}
        return {"fits": int(self.status.size), **counts, "mean_steps": float(steps.mean()) if steps.size else 0.0,
                "most_steps": int(steps.max()) if steps.size else 0}


def _check_inputs(X, y, weights, init, fit_intercept):
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if X.ndim != 3 or y.shape != X.shape[:2] or weights.ndim != 3 or (weights.shape[0], weights.shape[2]) != y.shape:
        raise ValueError(f"need X (R, n, p), y (R, n), weights (R, F, n); got {X.shape}, {y.shape}, {weights.shape}.")
    if not ((y == 0.0) | (y == 1.0)).all():
        raise ValueError("y must hold binary labels 0 and 1.")
    if not np.isfinite(X).all() or not np.isfinite(weights).all():
        raise ValueError("X and weights must be finite.")
    if (weights < 0).any():
        raise ValueError("weights must be non-negative.")
    if (weights.sum(-1) <= 0).any():
        raise ValueError("every fit needs a positive total weight (a non-empty training set).")
    R, F, p = X.shape[0], weights.shape[1], X.shape[2]
    dim = p + int(fit_intercept)
    if init is None:
        init = np.zeros((R, F, dim))
    else:
        init = np.broadcast_to(np.asarray(init, dtype=np.float64), (R, F, dim)).copy()
    return X, y, weights, init


def fit_logistic_batch(X: np.ndarray, y: np.ndarray, weights: np.ndarray, C: float = 1.0,
                       fit_intercept: bool = True, tol: float = 1e-4, max_iter: int = 100,
                       init: np.ndarray | None = None) -> LogisticFit:
    """Fit L2-penalised logistic regressions for every (replicate, weight vector) pair.

    Minimises scikit-learn's objective (module docstring) by its Newton-Cholesky iterations,
    compiled: one call loops over all R * F fits without Python work per fit.

    Parameters
    ----------
    X : ndarray, shape (R, n, p)
        Features of each replicate's sample.
    y : ndarray, shape (R, n)
        Labels in {0, 1}.
    weights : ndarray, shape (R, F, n)
        Non-negative sample weights of fit f on replicate r: a 0/1 mask selects a training
        subset (rows with weight 0 are skipped), integer counts repeat rows (a bootstrap).
    C : float, default 1.0
        Inverse penalty strength, 0 < C < inf (scikit-learn's ``C``).
    fit_intercept : bool, default True
        Fit an unpenalised intercept.
    tol : float, default 1e-4
        Stop when max |gradient| <= tol and the half Newton decrement <= tol (scikit-learn's
        rule, gradient of the weight-averaged objective). The default is scikit-learn's; use
        e.g. :data:`OPTIMUM_TOL` for the optimum to rounding.
    max_iter : int, default 100
        Maximum Newton steps per fit.
    init : ndarray, shape (p + fit_intercept,), (R, F, p + fit_intercept) or broadcastable, optional
        Starting point (coefficients, then the intercept); zeros (scikit-learn's start) if None.

    Returns
    -------
    LogisticFit
        Coefficients ``w`` (R, F, p), intercepts ``b`` (R, F), ``n_iter``, ``status`` and
        ``converged`` per fit.

    Raises
    ------
    ValueError
        For C outside (0, inf), labels other than 0/1, negative or non-finite weights, or a fit
        whose weights are all zero.
    """
    if not 0 < C < np.inf:
        raise ValueError(f"C must be positive and finite; got {C}.")
    X, y, weights, init = _check_inputs(X, y, weights, init, fit_intercept)
    R, F, p = X.shape[0], weights.shape[1], X.shape[2]
    coef, intercept = np.empty((R, F, p)), np.empty((R, F))
    n_iter, status, grad_max = np.empty((R, F), np.int64), np.empty((R, F), np.int8), np.empty((R, F))
    _fit_batch(X, y, weights, init, float(C), bool(fit_intercept), float(tol), int(max_iter),
               coef, intercept, n_iter, status, grad_max)
    return LogisticFit(coef, intercept, n_iter, status, grad_max)


def _effective_penalty(params: dict[str, Any]) -> str | None:
    """The penalty scikit-learn fits with: 1.8+ spells it by ``l1_ratio`` (0 = L2, 1 = L1,
    between = elastic net) and C = inf (none), the deprecated ``penalty`` still overrides it."""
    penalty = params.get("penalty", "deprecated")
    l1_ratio = params.get("l1_ratio")
    if penalty == "deprecated":                  # scikit-learn >= 1.8 default
        if params["C"] == np.inf:
            return None
        return "l2" if l1_ratio in (0, None) else ("l1" if l1_ratio == 1 else "elasticnet")
    return penalty


def supported_logistic_params(estimator) -> tuple[bool, str]:
    """Whether :class:`BatchedLogistic` reproduces ``estimator``: ``(True, "")`` or ``(False, why)``.

    Supported: ``LogisticRegression`` with an L2 penalty (1.8+: ``l1_ratio=0`` (or None) and the
    default ``penalty``; or the deprecated ``penalty="l2"``), any finite C > 0, with or without
    intercept, ``class_weight=None``, ``dual=False`` and any solver but liblinear (which penalises
    the intercept: another objective). Problems must be binary (checked at fit time, labels 0/1)
    and fits unweighted (``sample_weight`` is a fit argument the estimator cannot show).

    ``tol`` and ``max_iter``: for ``solver="newton-cholesky"`` they are taken over with the same
    meaning, so the kernel follows scikit-learn's iterates; the other solvers reach the same
    optimum but stop by their own criteria, so the kernel then solves to :data:`OPTIMUM_TOL` and
    agrees with them to their accuracy only.
    """
    from sklearn.linear_model import LogisticRegression

    if type(estimator) is not LogisticRegression:
        return False, f"{type(estimator).__name__} is not LogisticRegression"
    params = estimator.get_params(deep=False)
    penalty = _effective_penalty(params)
    checks = [
        (penalty == "l2", f"penalty {penalty!r} (only L2: l1_ratio=0)"),
        (0 < params["C"] < np.inf, f"C={params['C']!r} (need 0 < C < inf)"),
        (params["solver"] != "liblinear", "solver='liblinear' penalises the intercept"),
        (params["class_weight"] is None, "class_weight is not None"),
        (not params["dual"], "dual=True"),
    ]
    why = "; ".join(reason for ok, reason in checks if not ok)
    return (not why), why


class BatchedLogistic:
    """``LogisticRegression`` (L2, binary) emulation fitting all training subsets of a chunk at once.

    Parameters
    ----------
    C, fit_intercept, tol, max_iter
        As :func:`fit_logistic_batch`.
    warm_start : bool, default False
        Start every fit from the replicate's full-sample fit (one extra fit per replicate)
        instead of zeros. Fewer Newton steps, but the start changes where a loose ``tol`` stops,
        so pair it with a tight ``tol`` (:data:`OPTIMUM_TOL`); then the fits are the optimum,
        which differs from scikit-learn's default-``tol`` fits by that tolerance's slack.
    name : str
        Name used in tables.
    """

    batched = True
    dtype = np.float64

    def __init__(self, C: float = 1.0, fit_intercept: bool = True, tol: float = 1e-4, max_iter: int = 100,
                 warm_start: bool = False, name: str = "logreg"):
        self.C, self.fit_intercept, self.tol, self.max_iter = float(C), bool(fit_intercept), float(tol), int(max_iter)
        self.warm_start = bool(warm_start)
        self.name = name

    @classmethod
    def from_estimator(cls, estimator, name: str = "logreg", warm_start: bool = False) -> "BatchedLogistic":
        """The kernel reproducing ``estimator`` (see :func:`supported_logistic_params`)."""
        ok, why = supported_logistic_params(estimator)
        if not ok:
            raise ValueError(f"no batched logistic kernel for these settings: {why}")
        params = estimator.get_params(deep=False)
        if params["solver"] == "newton-cholesky" and not warm_start:   # same iterates, same stopping rule
            tol, max_iter = params["tol"], params["max_iter"]
        else:                                   # their tol/max_iter mean something else: solve fully
            tol, max_iter = OPTIMUM_TOL, max(params["max_iter"], 100)
        return cls(params["C"], params["fit_intercept"], tol, max_iter, warm_start, name)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "LogisticRegression", "engine": "simstudy batched logistic",
                "C": self.C, "fit_intercept": self.fit_intercept, "tol": self.tol, "max_iter": self.max_iter,
                "warm_start": self.warm_start}

    def _fit(self, X, y, weights, init):
        return fit_logistic_batch(X, y, weights, self.C, self.fit_intercept, self.tol, self.max_iter, init)

    def full_sample_start(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Full-sample fits (R, 1, p + fit_intercept) used as warm starts (zeros if one class)."""
        full = self._fit(X, y, np.ones((X.shape[0], 1, X.shape[1])), None)
        theta = full.w if not self.fit_intercept else np.concatenate([full.w, full.b[..., None]], axis=-1)
        return np.where((full.status == SINGLE_CLASS)[..., None], 0.0, theta)

    def fit_weighted(self, X: np.ndarray, y: np.ndarray, weights: np.ndarray,
                     init: np.ndarray | None = None) -> LogisticFit:
        """Rules (R, F) fitted with sample weights ``weights`` (R, F, n) on each replicate.

        ``init`` overrides the start; without it, ``warm_start`` starts from the full-sample fit.
        """
        if init is None and self.warm_start:
            init = self.full_sample_start(X, y)
        return self._fit(X, y, weights, init)

    def fold_rules(self, X: np.ndarray, y: np.ndarray, labels: np.ndarray, K: int) -> LogisticFit:
        """Rules (R, K) fitted on each replicate's training folds (all but fold k)."""
        train = (labels[:, None, :] != np.arange(K)[None, :, None]).astype(np.float64)
        return self.fit_weighted(X, y, train)
