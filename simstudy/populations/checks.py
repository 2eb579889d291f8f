"""What a population must return, checked where its output enters the engine.

:func:`draw_sample` calls ``population.sample(n, rng)`` and checks the result before any learner
(and so any compiled kernel) sees it: a :class:`~simstudy.populations.base.Sample` (or an object
with ``X`` and ``y``), ``X`` a 2-D array of numbers with ``n`` rows, ``y`` one label or target per
row, every value finite, class labels whole numbers. :func:`checked_evaluation_set` does the same
for ``population.evaluation_set()``, from which true risks are computed. The checks are
vectorised passes over the arrays (no copy of an array that is already one), so they cost a small
fraction of the fits that follow; they change no number of a valid sample.

A violation raises :class:`~simstudy.errors.PartOutputError` naming the part
(``population.sample``, ``population.evaluation_set``) and what it returned: inside a replicate
that fails the replicate (recorded); on the probe a study draws before the run, it stops the run.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from simstudy.contracts import guarantees_outputs
from simstudy.errors import PartOutputError
from simstudy.populations.base import Sample

__all__ = ["checked_arrays", "checked_evaluation_set", "checked_sample", "draw_sample"]

_FIX = "return simstudy.Sample(X=X, y=y) with X a 2-D array of finite numbers (n, p) and y of length n"


def draw_sample(population: Any, n: int, rng: np.random.Generator) -> Any:
    """``population.sample(n, rng)``, checked (:func:`checked_sample`; the labels not, when the
    population declares :class:`~simstudy.contracts.GuaranteedOutputs`)."""
    return checked_sample(population.sample(n, rng), n, getattr(population, "task", "classification"),
                          guaranteed=guarantees_outputs(population))


def checked_sample(sample: Any, n: int | None, task: str, part: str = "population.sample",
                   guaranteed: bool = False) -> Any:
    """``sample`` if it is a valid training set of ``n`` rows for ``task`` (lists become arrays;
    ``guaranteed``: the labels' values are not checked, shapes, dtypes and features are).

    Raises
    ------
    PartOutputError
        Naming ``part`` and what it returned.
    """
    if sample is None or isinstance(sample, (tuple, list)) or not (hasattr(sample, "X") and hasattr(sample, "y")):
        what = "None" if sample is None else f"a {type(sample).__name__}"
        raise PartOutputError(f"{part} returned {what}, not a Sample: {_FIX}.")
    X, y = checked_arrays(sample.X, sample.y, task, part, n, guaranteed)
    if X is sample.X and y is sample.y:
        return sample
    if dataclasses.is_dataclass(sample):
        return dataclasses.replace(sample, X=X, y=y)
    return Sample(X=X, y=y, index=getattr(sample, "index", None))


def checked_evaluation_set(population: Any, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """``population.evaluation_set(dtype)`` checked as a sample of any size (:func:`checked_arrays`)."""
    returned = population.evaluation_set(dtype)
    part = "population.evaluation_set"
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise PartOutputError(f"{part} returned {type(returned).__name__}; return a tuple (X, y) of a 2-D array of "
                              "finite numbers and one label or target per row.")
    return checked_arrays(returned[0], returned[1], getattr(population, "task", "classification"), part)


def checked_arrays(X: Any, y: Any, task: str, part: str, n: int | None = None,
                   guaranteed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``y`` as arrays, checked: shapes, numeric dtypes, finite values, class labels
    (not with ``guaranteed``: the part declares :class:`~simstudy.contracts.GuaranteedOutputs`).

    Arrays are returned as given (same objects) when they are arrays already.
    """
    X = X if isinstance(X, np.ndarray) else _as_array(X, part, "X")
    y = y if isinstance(y, np.ndarray) else _as_array(y, part, "y")
    if X.ndim != 2:
        raise PartOutputError(f"{part} returned X of shape {X.shape} ({X.ndim}-D); X must be 2-D, one row per "
                              "example (use X.reshape(-1, 1) for one feature).")
    if y.ndim != 1:
        raise PartOutputError(f"{part} returned y of shape {y.shape}; y must be 1-D, one value per row of X.")
    if X.shape[0] != y.shape[0] or (n is not None and X.shape[0] != n):
        asked = f" for n={n}" if n is not None else ""
        raise PartOutputError(f"{part} returned X with {X.shape[0]} rows and y of length {y.shape[0]}{asked}; "
                              f"return exactly {n if n is not None else 'as many labels as'} rows.")
    if X.dtype.kind not in "biuf":
        raise PartOutputError(f"{part} returned X of dtype {X.dtype}; X must hold numbers (int or float).")
    if X.dtype.kind == "f" and not np.isfinite(X).all():
        bad = ~np.isfinite(X)
        row, col = np.argwhere(bad)[0]
        kinds = "NaN" if np.isnan(X[bad]).all() else "inf" if not np.isnan(X[bad]).any() else "NaN or inf"
        raise PartOutputError(f"{part} returned X with {int(bad.sum())} non-finite value(s) ({kinds}), the first "
                              f"at row {row}, column {col} ({X[row, col]}); the features must be finite numbers.")
    if not guaranteed:
        _check_labels(y, task, part)
    return X, y


def _as_array(values: Any, part: str, name: str) -> np.ndarray:
    try:
        return np.asarray(values)
    except Exception as exc:  # ragged lists and the like
        raise PartOutputError(f"{part} returned {name} that is no array ({type(exc).__name__}: {exc}); {_FIX}.") \
            from None


def _check_labels(y: np.ndarray, task: str, part: str) -> None:
    """Class labels are whole numbers; regression targets finite numbers."""
    if y.dtype.kind not in "biuf":
        wanted = "class labels as whole numbers" if task == "classification" else "real targets"
        raise PartOutputError(f"{part} returned y of dtype {y.dtype}; y must hold numbers ({wanted}).")
    if y.dtype.kind != "f":
        return
    finite = np.isfinite(y)
    if not finite.all():
        first = int(np.argmin(finite))
        raise PartOutputError(f"{part} returned y with {int((~finite).sum())} non-finite label(s) or target(s) "
                              f"({y[first]} at row {first}); every label or target must be a finite number.")
    if task == "classification" and not np.array_equal(y, np.round(y)):
        odd = y[y != np.round(y)][0]
        raise PartOutputError(f"{part} returned class labels that are not whole numbers (e.g. {odd}); return class "
                              "labels as whole numbers (0, 1, ...), or set task = 'regression'.")
