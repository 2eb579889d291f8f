"""Data held in memory as a finite population: ``population=(X, y)``, ``(frame, "target")`` or
``{"data": frame_or_X, "target": column_or_y, "task": ..., "replace": ...}`` (:func:`in_memory_population`).

The rows become a :class:`~simstudy.populations.finite.TabularPopulation`: training sets are
drawn from them uniformly (with replacement unless ``replace=False``), so a model's mean loss
over all rows is its exact risk. Class labels are coded 0..C-1 in sorted order; the task is
``classification`` unless the target holds non-integer numbers (then ``regression``), or as the
mapping's ``task`` says.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from simstudy.errors import ConfigError

__all__ = ["arrays_population", "in_memory_population", "is_in_memory"]

HOW = ("give population=(X, y), population=(frame, 'target_column') or population={'data': frame, 'target': "
       "'target_column'}")
MAPPING_KEYS = ("data", "target", "task", "replace", "name")


def _is_frame(value: Any) -> bool:
    return hasattr(value, "columns") and hasattr(value, "to_numpy")


def is_in_memory(spec: Any) -> bool:
    """Whether ``spec`` is one of the in-memory forms (or a bare data frame, refused with the fix)."""
    if _is_frame(spec) or isinstance(spec, np.ndarray):
        return True
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and hasattr(spec[0], "shape"):
        return True
    return isinstance(spec, Mapping) and "data" in spec and "kind" not in spec


def in_memory_population(spec: Any):
    """The finite population of an in-memory form (see the module docstring).

    Raises
    ------
    ConfigError
        For a frame without a named target, unknown mapping keys, shapes that do not match,
        non-numeric or non-finite features, or a single class.
    """
    from simstudy.schema import coerce, unknown_key

    options: dict[str, Any] = {}
    if _is_frame(spec) or isinstance(spec, np.ndarray):
        raise ConfigError(f"population=<{type(spec).__name__}> does not say which column is the target: {HOW}.")
    if isinstance(spec, Mapping):
        for key in spec:
            if key not in MAPPING_KEYS:
                raise unknown_key("population", str(key), MAPPING_KEYS, "in-memory data")
        if "target" not in spec:
            raise ConfigError(f"population.target is missing: {HOW}.")
        data, target = spec["data"], spec["target"]
        options = {k: spec[k] for k in ("task", "replace", "name") if k in spec}
    else:
        data, target = spec
    replace = coerce(options.get("replace", True), bool, "population.replace")
    name = coerce(options.get("name", "in_memory"), str, "population.name")
    return arrays_population(data, target, options.get("task"), name=name, replace=replace)


def arrays_population(data: Any, target: Any, task: str | None = None, *, name: str = "in_memory",
                      replace: bool = True, source: str = "in_memory", prefix: str = "population "):
    """The finite population of features ``data`` (an array, or a data frame with ``target`` a
    column name) and target ``target``, every check of the in-memory forms applied (shapes,
    numeric and finite features, a target of ``task``: at least two classes, or real values that
    vary). ``task`` None: inferred from the target. ``prefix`` starts the names in the messages
    (``"population "`` for ``population=(X, y)``; ``""`` where the user gave ``X=`` and ``y=``).

    Raises
    ------
    ConfigError
        Naming the array, what is wrong with it and the fix.
    """
    from simstudy.populations.finite import TabularPopulation

    X, y = _arrays(data, target, prefix)
    task = task or ("regression" if _real_valued(y) else "classification")
    if task not in ("classification", "regression"):
        raise ConfigError(f"population.task={task!r} is invalid: use 'classification' or 'regression'.")
    labels = _labels(y, task, prefix)
    seed_info = {"source": source} if task == "classification" else {"source": source, "task": task}
    return TabularPopulation(X, labels, name=name, replace=replace, seed_info=seed_info, task=task)


def _arrays(data: Any, target: Any, prefix: str = "population ") -> tuple[np.ndarray, np.ndarray]:
    """Features (float, 2-D, finite) and the target (1-D, same length)."""
    if _is_frame(data):
        if isinstance(target, str) or np.isscalar(target):
            if target not in data.columns:
                raise ConfigError(f"population.target={target!r} is not a column of the data frame (its columns: "
                                  f"{', '.join(map(str, data.columns))}).")
            data, target = data.drop(columns=[target]), data[target]
        try:
            X = data.to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise ConfigError("population.data holds non-numeric feature columns: encode them as numbers first "
                              "(e.g. pandas.get_dummies).") from None
    else:
        if isinstance(target, str):
            raise ConfigError(f"population.target={target!r} names a column, but the data are not a data frame: "
                              "give the target values (an array) instead.")
        try:
            X = np.asarray(data, dtype=float)
        except (TypeError, ValueError):
            raise ConfigError(f"{prefix}X holds non-numeric values: encode them as numbers first.") from None
    if target is None:
        raise ConfigError(f"{prefix}y is missing: give the target (class labels or real values) with X.")
    y = np.asarray(target)
    if X.ndim != 2 or y.ndim != 1 or len(y) != len(X):
        raise ConfigError(f"{prefix.strip() + ': ' if prefix else ''}X must be 2-D (rows x features) and y 1-D of the "
                          f"same length; got X of shape {X.shape} and y of shape {y.shape}.")
    if not np.all(np.isfinite(X)):
        raise ConfigError(f"{prefix}X holds missing or infinite values: remove those rows or impute them first.")
    return X, y


def _real_valued(y: np.ndarray) -> bool:
    return y.dtype.kind == "f" and bool(np.any(np.isfinite(y) & (y != np.round(y))))


def _labels(y: np.ndarray, task: str, prefix: str = "population ") -> np.ndarray:
    """Class codes 0..C-1 in sorted order (classification) or finite real targets that vary (regression)."""
    if task == "regression":
        try:
            values = y.astype(float)
        except (TypeError, ValueError):
            raise ConfigError(f"{prefix}y holds non-numeric values (e.g. {y[0]!r}) with task='regression': give a "
                              "real target, or a classification task (a classifier).") from None
        if not np.all(np.isfinite(values)):
            raise ConfigError(f"{prefix}y holds missing or infinite values: remove those rows first.")
        if values.size and np.ptp(values) == 0:
            raise ConfigError(f"{prefix}y is constant ({values[0]:g}): a regression needs a target that varies.")
        return values
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ConfigError(f"{prefix}y holds missing values: remove those rows first.")
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ConfigError(f"{prefix}y holds a single class ({classes[0]!r}); at least two are needed.")
    return codes.astype(np.int64)
