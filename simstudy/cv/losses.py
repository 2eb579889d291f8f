"""Loss functions: what a study scores a prediction with.

A :class:`Loss` turns labels/targets ``y`` and predictions ``y_hat`` (and, for losses that need
them, predicted class probabilities ``proba``) into one loss per point. The CV residual of
point i is ``loss(y_i, y_hat_i)`` for the model trained without i's fold; the true risk of a
model is its expected loss on the population.

Built-in losses (registered in :data:`simstudy.registry.LOSSES`): ``zero_one`` (classification; the default of the
classification studies), ``squared`` and ``absolute`` (regression), ``log_loss``
(classification, from predicted probabilities), ``brier`` (classification: half the multi-class Brier score,
from predicted probabilities). A user's loss is any function of
``(y, y_hat)`` or ``(y, y_hat, proba)`` returning per-point losses: pass the function (Python)
or its import path ``"package.module.function"`` (CLI/YAML); :func:`resolve_loss` wraps it.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from simstudy.cv.checks import checked_losses
from simstudy.errors import ConfigError, PartOutputError

__all__ = ["Loss", "check_loss", "resolve_loss", "zero_one", "squared", "absolute", "log_loss",
           "brier"]

#: The module the built-in losses are named by in :meth:`Loss.describe`: the description is part
#: of every run's identity hash (:mod:`simstudy.engine.rundir`), so this name stays fixed whatever
#: module defines them; a run directory written with it resumes and extends.
IDENTITY_MODULE = "simstudy.losses"

#: The most labels :func:`check_loss` scores (a probe sample is scored whole up to this length).
PROBE_POINTS = 4096

#: Tasks a loss applies to.
TASKS = ("classification", "regression", "any")


@dataclass(frozen=True)
class Loss:
    """A per-point loss with what the engine needs to know about it.

    Parameters
    ----------
    name : str
        Name used in tables and manifests.
    function : callable
        ``function(y, y_hat)`` or, with ``needs_proba``, ``function(y, y_hat, proba)``;
        returns one loss per point.
    task : {"classification", "regression", "any"}
        Which populations it is meaningful for (checked before a run starts).
    needs_proba : bool
        The loss needs predicted class probabilities ``proba`` of shape (n, classes).
    bounds : (low, high)
        Range of a per-point loss. Intervals for a mean loss are clipped to it (0-1 loss: an
        error rate lies in [0, 1]).
    """

    name: str
    function: Callable[..., Any] = field(compare=False)
    task: str = "any"
    needs_proba: bool = False
    bounds: tuple[float, float] = (-np.inf, np.inf)

    def __call__(self, y, y_hat, proba=None) -> np.ndarray:
        """Per-point losses as a float array of the shape of ``y``.

        Raises
        ------
        PartOutputError
            The function returned another shape or a non-finite value (:func:`~simstudy.cv.checks.checked_losses`).
        """
        if self.needs_proba:
            if proba is None:
                raise ValueError(f"loss {self.name!r} needs predicted probabilities; the learner gave none.")
            out = self.function(y, y_hat, proba)
        else:
            out = self.function(y, y_hat)
        return checked_losses(out, np.shape(y), self.name)

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable description (manifest, config hash)."""
        module = getattr(self.function, "__module__", None)
        if module == __name__:
            module = IDENTITY_MODULE
        qualname = getattr(self.function, "__qualname__", type(self.function).__name__)
        return {"name": self.name, "function": f"{module}.{qualname}", "task": self.task,
                "needs_proba": self.needs_proba}


def _zero_one(y, y_hat):
    # 1 for a misclassified point; the error rate is the mean
    return (np.asarray(y_hat) != np.asarray(y)).astype(float)


def _squared(y, y_hat):
    return (np.asarray(y_hat, dtype=float) - np.asarray(y, dtype=float)) ** 2


def _absolute(y, y_hat):
    return np.abs(np.asarray(y_hat, dtype=float) - np.asarray(y, dtype=float))


#: Probabilities are clipped to [eps, 1 - eps] so that log loss stays finite (as scikit-learn).
_LOG_EPS = 1e-15


def _log_loss(y, y_hat, proba):
    """-log p(y_i | x_i); ``proba[:, c]`` is the probability of class code c (labels 0..C-1)."""
    proba = np.asarray(proba, dtype=float)
    y = np.asarray(y).astype(np.int64)
    picked = np.take_along_axis(proba, y[:, None], axis=1)[:, 0]
    return -np.log(np.clip(picked, _LOG_EPS, 1.0))


def _brier(y, y_hat, proba):
    """Half the multi-class Brier score, (1/2) sum_c (q_c - 1{y = c})^2 = (sum_c q_c^2 - 2 q_y + 1) / 2.

    Strictly proper for any number of classes (the squared error of the probability of the true
    class alone, (1 - q_y)^2, is not when C > 2), in [0, 1], and for two classes equal to
    (1 - q_y)^2 = (q_1 - y)^2: scikit-learn's ``brier_score_loss`` and mlr3's ``classif.bbrier``.
    """
    proba = np.asarray(proba, dtype=float)
    y = np.asarray(y).astype(np.int64)
    picked = np.take_along_axis(proba, y[:, None], axis=1)[:, 0]
    return 0.5 * (np.sum(proba * proba, axis=1) - 2 * picked + 1)


zero_one = Loss("zero_one", _zero_one, task="classification", bounds=(0.0, 1.0))
squared = Loss("squared", _squared, task="regression", bounds=(0.0, np.inf))
absolute = Loss("absolute", _absolute, task="regression", bounds=(0.0, np.inf))
log_loss = Loss("log_loss", _log_loss, task="classification", needs_proba=True, bounds=(0.0, np.inf))
brier = Loss("brier", _brier, task="classification", needs_proba=True, bounds=(0.0, 1.0))


def _builtin_names() -> str:
    from simstudy.registry import LOSSES

    return ", ".join(LOSSES)


def _import(path: str, field_name: str):
    module_name, _, attr = path.rpartition(".")
    if not module_name:
        raise ConfigError(f"{field_name}={path!r} is invalid: use a built-in loss ({_builtin_names()}) or the "
                         "import path of a function, e.g. mypackage.losses.pinball.")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{field_name}={path!r} is invalid: cannot import it ({type(exc).__name__}: {exc}); "
                         f"use a built-in loss ({_builtin_names()}) or a function importable from the "
                         "current directory or an installed package.") from None


def _from_callable(function: Callable, field_name: str) -> Loss:
    try:
        params = [p for p in inspect.signature(function).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):  # builtins without a signature: assume (y, y_hat)
        params = [None, None]
    if len(params) not in (2, 3):
        raise ConfigError(f"{field_name}: the loss function {getattr(function, '__name__', function)!r} takes "
                         f"{len(params)} required argument(s); a loss takes (y, y_hat) or (y, y_hat, proba).")
    name = getattr(function, "__name__", type(function).__name__)
    return Loss(name, function, task="any", needs_proba=len(params) == 3)


def resolve_loss(spec: Any, field_name: str = "study.loss") -> Loss:
    """A :class:`Loss` from a name, an import path, a callable, a ``{_target_: ...}`` mapping or a Loss.

    Parameters
    ----------
    spec : str, callable, mapping or Loss
        ``"zero_one"``, ``"squared"``, ``"absolute"``, ``"log_loss"``; ``"pkg.module.function"``;
        a function of ``(y, y_hat)`` or ``(y, y_hat, proba)``; ``{"_target_": "pkg.module.factory",
        **kwargs}`` (the factory is called with the keyword arguments and must return a loss
        function or a Loss).
    field_name : str
        The config field named in error messages.

    Raises
    ------
    ValueError
        Naming ``field_name``, the value and the fix.
    """
    if isinstance(spec, Loss):
        return spec
    if isinstance(spec, str):
        from simstudy.registry import LOSSES

        if spec in LOSSES:
            return LOSSES[spec].load()
        return resolve_loss(_import(spec, field_name), field_name)
    if isinstance(spec, dict) or hasattr(spec, "items") and not callable(spec):
        spec = dict(spec)
        target = spec.pop("_target_", None)
        if not target:
            raise ConfigError(f"{field_name}={spec!r} is invalid: a mapping needs _target_ (the import path of a "
                             "loss factory).")
        made = _import(str(target), f"{field_name}._target_")(**spec)
        return resolve_loss(made, field_name)
    if callable(spec):
        return _from_callable(spec, field_name)
    raise ConfigError(f"{field_name}={spec!r} is invalid: give a built-in loss name ({_builtin_names()}), "
                     "an import path, or a function of (y, y_hat).")


def check_loss(loss: Loss, y: np.ndarray, task: str, field_name: str = "study.loss") -> None:
    """Refuse a loss that does not fit the population's task or gives non-finite values.

    The loss is evaluated on ``y`` (its first :data:`PROBE_POINTS` values: a whole probe
    sample of the study's smallest size, so that a loss misbehaving only on vectors of a
    training set's length is caught before the run) against itself and against a shifted
    prediction (for classification: the other class); it must return one finite value per point.
    """
    if loss.task != "any" and task in TASKS and loss.task != task:
        hint = "squared or absolute" if task == "regression" else "zero_one, log_loss or brier"
        raise ConfigError(f"{field_name}={loss.name!r} is a {loss.task} loss but the population is a {task} "
                         f"problem: use {hint} (or your own loss function).")
    y = np.asarray(y)[:PROBE_POINTS]
    if task == "classification":
        classes = np.unique(y)
        other = np.where(y == classes[0], classes[-1], classes[0])
        proba = np.full((len(y), max(int(np.max(y)) + 1, 2)), 0.5) if loss.needs_proba else None
        probes = [(y, proba), (other, proba)]
    else:
        probes = [(y, None), (np.asarray(y, dtype=float) + 1.0, None)]
    for y_hat, proba in probes:
        try:
            values = loss(y, y_hat, proba)
        except PartOutputError as exc:  # the wrong shape or a non-finite value
            raise ConfigError(f"{field_name}={loss.name!r} on a probe of the population's labels: {exc}; fix the "
                              "loss function.") from None
        except Exception as exc:
            raise ConfigError(f"{field_name}={loss.name!r} failed on a probe of the population's labels "
                             f"({type(exc).__name__}: {exc}); a loss takes (y, y_hat[, proba]) arrays.") from None
        if values.shape != y.shape:
            raise ConfigError(f"{field_name}={loss.name!r} returned shape {values.shape} for {y.shape[0]} points; "
                             "a loss returns one value per point.")
        if not np.all(np.isfinite(values)):
            raise ConfigError(f"{field_name}={loss.name!r} returned a non-finite value (NaN or inf) on the "
                             "population's labels; fix the loss function.")
