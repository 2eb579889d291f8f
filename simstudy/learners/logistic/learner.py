"""``LogisticRegression`` behind the learner protocol, fitted by the batched Newton kernel.

:class:`LogisticLearner` stands in for ``SklearnLearner(LogisticRegression(...))`` (the
protocol: :mod:`simstudy.learners.base`) and gives the same records:

- fits: the kernel of :mod:`simstudy.learners.logistic.newton` follows scikit-learn's
  ``newton-cholesky`` iterates from its zero start with its ``tol`` and ``max_iter`` (the cold
  start: a warm start would change where ``tol=1e-4`` stops), so coefficients agree to rounding
  (1e-13 on Letter) and predictions are the same. Where scikit-learn's Newton solver gives up and
  switches to L-BFGS (line search failed, not a descent direction, singular Hessian, Hessians
  underflowing), the fit is redone by scikit-learn itself on the same rows with the same seed;
  running out of ``max_iter`` keeps the last iterate, as scikit-learn does (it warns);
- random numbers: a fit whose training rows hold two classes draws one integer seed from the
  replicate's generator when the estimator's ``random_state`` is None, exactly as
  :class:`~simstudy.learners.sklearn.SklearnLearner` does (it passes the seed to scikit-learn;
  ``newton-cholesky`` does not use it); a single-class training set gives the constant rule and
  draws nothing. The replicate's random stream is therefore consumed identically;
- single-class training sets: the constant rule predicting that class, probabilities exactly 0
  and 1 (``SklearnLearner``'s :class:`~simstudy.learners.sklearn.ConstantClassifier`);
- predictions: 1 where ``X @ coef.T + intercept > 0`` (scikit-learn's ``decision_function``,
  same array shapes), probabilities ``expit`` of it.

``cross_validate`` fits the K training folds of a sample in one compiled call; every other
split design goes through ``fit`` one training set at a time (one compiled call each).

Binary problems with labels 0 and 1 only (:func:`simstudy.learners.dispatch.fast_kernel` checks the
population, :meth:`LogisticLearner.start` every sample).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.learners.base import Folds, finite_population_data
from simstudy.learners.contracts import require_fold_labels, require_sample
from simstudy.learners.logistic.batch import supported_logistic_params
from simstudy.learners.logistic.newton import CONVERGED, MAX_ITER, OPTIMUM_TOL, SINGLE_CLASS, STATUS_NAMES, _fit_batch

__all__ = ["LogisticLearner", "LogisticModel", "LogisticState", "logistic_learner"]

log = logging.getLogger("simstudy")

#: Statuses after which scikit-learn's Newton solver falls back to L-BFGS: such fits are redone
#: by scikit-learn (``_newton_solver.py``, ``NewtonSolver.solve``).
_SKLEARN_FALLBACK = frozenset(range(len(STATUS_NAMES))) - {CONVERGED, MAX_ITER, SINGLE_CLASS}


@dataclass(frozen=True)
class LogisticModel:
    """A fitted rule "predict 1 iff x.w + b > 0".

    Attributes
    ----------
    w : ndarray (p,)
        Coefficients (scikit-learn's ``coef_[0]``).
    b : float
        Intercept; +1 / -1 for the constant rule of a single-class training set.
    status : int
        Index into :data:`simstudy.learners.logistic.newton.STATUS_NAMES`; a fit redone by scikit-learn
        keeps the kernel's status and has ``by_sklearn`` set.
    n_iter : int
        Newton steps (scikit-learn's ``n_iter_``).
    by_sklearn : bool
        The kernel's Newton solver gave up and scikit-learn (L-BFGS fallback) fitted this model.
    """

    w: np.ndarray
    b: float
    status: int
    n_iter: int
    by_sklearn: bool = False

    @property
    def constant(self) -> bool:
        """Fitted on one class: predicts it everywhere."""
        return self.status == SINGLE_CLASS


@dataclass(frozen=True)
class LogisticState:
    """A sample prepared for the kernel: X (n, p) float64, labels y (n,) in {0, 1} as given,
    and the kernel's views X3 (1, n, p), y3 (1, n) float64."""

    X: np.ndarray
    y: np.ndarray
    X3: np.ndarray
    y3: np.ndarray


class LogisticLearner:
    """``LogisticRegression`` (binary, L2) by the batched Newton kernel (see the module docstring).

    Parameters
    ----------
    estimator : LogisticRegression
        Settings accepted by :func:`~simstudy.learners.logistic.batch.supported_logistic_params`.
        With ``solver="newton-cholesky"`` the fits are scikit-learn's; with another solver the
        kernel solves to the optimum (``tol`` = :data:`~simstudy.learners.logistic.newton.OPTIMUM_TOL`),
        which that solver reaches only to its own tolerance (:func:`logistic_learner` uses the
        kernel there only when asked to, ``engine="numba"``).
    name : str
        Name used in tables.
    """

    dtype = np.float64
    task = "classification"

    def __init__(self, estimator, name: str = "logreg"):
        ok, why = supported_logistic_params(estimator)
        if not ok:
            raise ValueError(f"the batched logistic kernel cannot reproduce this estimator: {why}")
        params = estimator.get_params(deep=False)
        self.name = name
        self.params = dict(params)          # plain values: workers rebuild the estimator only to refit
        self.exact = params["solver"] == "newton-cholesky"
        self.C, self.fit_intercept = float(params["C"]), bool(params["fit_intercept"])
        self.tol, self.max_iter = ((float(params["tol"]), int(params["max_iter"])) if self.exact
                                   else (OPTIMUM_TOL, max(int(params["max_iter"]), 100)))
        self._seed_random_state = params["random_state"] is None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "estimator": "sklearn.linear_model._logistic.LogisticRegression",
                "engine": "simstudy batched logistic (newton-cholesky iterates)" if self.exact
                else "simstudy batched logistic (optimum to 1e-10)",
                "params": {k: repr(v) for k, v in self.params.items()}, "tol": self.tol, "max_iter": self.max_iter}

    # ------------------------------------------------------------------ protocol
    def start(self, sample) -> LogisticState:
        """Check the sample (finite features, labels 0/1) and lay it out for the kernel."""
        X = np.ascontiguousarray(sample.X, dtype=np.float64)
        y = np.asarray(sample.y)
        require_sample("logistic regression", X, y)
        if not np.isin(y, (0, 1)).all():
            raise ValueError(f"learner {self.name!r}: the batched logistic kernel needs labels 0 and 1; this sample "
                             f"has {np.unique(y)[:5].tolist()}. Use engine=sklearn for other labels.")
        if not np.isfinite(X).all():
            raise ValueError(f"learner {self.name!r}: the sample has non-finite features.")
        return LogisticState(X, y, X[None], y.astype(np.float64)[None])

    def _seed(self, rng: np.random.Generator) -> int | None:
        """The seed ``SklearnLearner.fit`` would hand scikit-learn (drawn from ``rng``), or None."""
        return int(rng.integers(0, 2**31 - 1)) if self._seed_random_state else None

    def fit(self, state: LogisticState, rows: np.ndarray, rng: np.random.Generator) -> LogisticModel:
        """The model trained on the sample's rows ``rows`` (repeats count as sample weights)."""
        y = state.y[rows]
        if np.all(y == y[0]):               # SklearnLearner's test, before any draw
            return _constant(int(y[0]), state.X.shape[1])
        seed = self._seed(rng)
        weights = np.bincount(rows, minlength=state.y.shape[0]).astype(np.float64)
        model = self._solve(state, weights[None])[0]
        return self._sklearn_refit(state, rows, seed, model) if model.status in _SKLEARN_FALLBACK else model

    def predict(self, state: LogisticState, model: LogisticModel, rows: np.ndarray) -> np.ndarray:
        return self.predict_features(model, state.X[rows])

    def predict_features(self, model: LogisticModel, X: np.ndarray) -> np.ndarray:
        """Labels 0/1 of features X: 1 where the decision value is positive."""
        return (self._decision(model, X) > 0).astype(np.int64)

    def predict_proba(self, state: LogisticState, model: LogisticModel, rows: np.ndarray) -> np.ndarray:
        """Class probabilities (rows, 2), column c for class c."""
        return self.predict_features_proba(model, state.X[rows])

    def predict_features_proba(self, model: LogisticModel, X: np.ndarray, n_classes: int | None = None) -> np.ndarray:
        """Class probabilities (rows, max(2, n_classes)) of features X: (1 - p, p) with
        p = expit(decision) (scikit-learn's ``predict_proba``); one-hot for a constant rule."""
        from scipy.special import expit

        out = np.zeros((X.shape[0], max(2, int(n_classes or 0))))
        if model.constant:
            out[:, int(model.b > 0)] = 1.0
            return out
        p = expit(self._decision(model, X))
        out[:, 0], out[:, 1] = 1 - p, p
        return out

    def probability_rule(self, model: LogisticModel) -> tuple[np.ndarray, float] | None:
        """(w, b): :meth:`predict_features_proba` is (1 - q, q) with q = expit(x.w + b); None for
        the constant rule (one-hot probabilities)."""
        return None if model.constant else (np.asarray(model.w, dtype=float), float(model.b))

    def cross_validate(self, state: LogisticState, labels: np.ndarray, K: int, rng: np.random.Generator,
                       keep_models: bool = True) -> Folds:
        """K-fold CV, the K fits in one compiled call: the same models, seeds and predictions as
        ``fit`` and ``predict`` fold by fold (seeds drawn in fold order, none for a single-class
        training fold)."""
        labels = np.asarray(labels)
        require_fold_labels("logistic regression cross-validation", labels, state.X.shape[0], K)
        train = labels[None, :] != np.arange(K)[:, None]                     # (K, n)
        seeds = []
        for k in range(K):
            y = state.y[train[k]]
            seeds.append(None if np.all(y == y[0]) else self._seed(rng))
        models = self._solve(state, train.astype(np.float64))
        everyone = np.arange(labels.shape[0])
        models = [self._sklearn_refit(state, everyone[train[k]], seeds[k], m) if m.status in _SKLEARN_FALLBACK else m
                  for k, m in enumerate(models)]
        predictions = np.empty(labels.shape[0], np.int64)
        for k, model in enumerate(models):
            test = ~train[k]
            predictions[test] = self.predict_features(model, state.X[test])
        return Folds(predictions, models if keep_models else None)

    def split_predictions(self, state: LogisticState, trains, tests, rng: np.random.Generator) -> list[np.ndarray]:
        """Predictions of one model per train/test split, the fits in one compiled call: the same
        models, seeds and predictions as :meth:`fit` and :meth:`predict` split by split (seeds
        drawn in split order, none for a single-class training set)."""
        n = state.y.shape[0]
        models: list[LogisticModel | None] = [None] * len(trains)
        seeds: list[int | None] = [None] * len(trains)
        solve = []
        for s, rows in enumerate(trains):
            y = state.y[rows]
            if np.all(y == y[0]):               # fit's constant rule, before any draw
                models[s] = _constant(int(y[0]), state.X.shape[1])
            else:
                seeds[s] = self._seed(rng)
                solve.append(s)
        if solve:
            weights = np.stack([np.bincount(trains[s], minlength=n) for s in solve]).astype(np.float64)
            for s, model in zip(solve, self._solve(state, weights)):
                models[s] = (self._sklearn_refit(state, trains[s], seeds[s], model)
                             if model.status in _SKLEARN_FALLBACK else model)
        return [self.predict(state, model, test) for model, test in zip(models, tests)]

    # ------------------------------------------------------------------ kernel and fallback
    def _solve(self, state: LogisticState, weights: np.ndarray) -> list[LogisticModel]:
        """The kernel's fits for the weight vectors ``weights`` (F, n) on one sample."""
        F, p = weights.shape[0], state.X.shape[1]
        dim = p + int(self.fit_intercept)
        coef, intercept = np.empty((1, F, p)), np.empty((1, F))
        n_iter, status, grad_max = np.empty((1, F), np.int64), np.empty((1, F), np.int8), np.empty((1, F))
        _fit_batch(state.X3, state.y3, weights[None], np.zeros((1, F, dim)), self.C, self.fit_intercept, self.tol,
                   self.max_iter, coef, intercept, n_iter, status, grad_max)
        return [LogisticModel(coef[0, f], float(intercept[0, f]), int(status[0, f]), int(n_iter[0, f]))
                for f in range(F)]

    def _sklearn_refit(self, state: LogisticState, rows: np.ndarray, seed: int | None,
                       model: LogisticModel) -> LogisticModel:
        """scikit-learn's own fit where its Newton solver falls back to L-BFGS (same rows, same seed)."""
        import warnings

        from sklearn.linear_model import LogisticRegression

        log.debug("learner %s: Newton step failed (%s); refitting with scikit-learn", self.name,
                  STATUS_NAMES[model.status])
        params = dict(self.params, **({"random_state": seed} if seed is not None else {}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = LogisticRegression(**params).fit(state.X[rows], state.y[rows])
        return LogisticModel(np.array(est.coef_[0], dtype=np.float64), float(est.intercept_[0]), model.status,
                             int(est.n_iter_[0]), by_sklearn=True)

    @staticmethod
    def _decision(model: LogisticModel, X: np.ndarray) -> np.ndarray:
        """X @ coef.T + intercept with scikit-learn's shapes ((N, p) @ (p, 1))."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        return (X @ model.w[None, :].T)[:, 0] + model.b


def _constant(label: int, p: int) -> LogisticModel:
    """The constant rule predicting ``label`` (w = 0, b = +1 for class 1, -1 for class 0)."""
    return LogisticModel(np.zeros(p), 1.0 if label == 1 else -1.0, SINGLE_CLASS, 0)


def logistic_learner(estimator, name: str, population: Any = None, engine: str = "auto"):
    """``(LogisticLearner, "")`` for ``estimator``, or ``(None, why not)``.

    With ``engine="auto"`` only ``solver="newton-cholesky"`` is taken (the kernel then gives
    scikit-learn's fits); other solvers stop by their own criteria, short of the optimum the
    kernel reaches, so they run on the kernel only with ``engine="numba"``. A finite population
    whose labels are not 0/1 rules the kernel out.
    """
    ok, why = supported_logistic_params(estimator)
    if not ok:
        return None, why
    solver = estimator.get_params(deep=False)["solver"]
    if engine == "auto" and solver != "newton-cholesky":
        return None, (f"solver={solver!r} stops by its own tolerance, short of the optimum the kernel reaches; set "
                      "solver='newton-cholesky' for scikit-learn's own fits on the kernel, or engine=numba for the "
                      "optimum")
    data = finite_population_data(population)
    labels = data[1] if data is not None else None
    if labels is not None and not np.isin(np.unique(labels), (0, 1)).all():
        return None, "the batched logistic kernel needs binary labels 0 and 1"
    return LogisticLearner(estimator, name), ""
