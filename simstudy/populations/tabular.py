"""Finite tabular populations: a whole data set is the population, sampled uniformly.

The data come from OpenML (``sklearn.datasets.fetch_openml``, cached under ``data_home``),
from scikit-learn's CoverType fetcher (the raw UCI file), or from a local delimited file
(UCI style with the class first, or OpenML/CSV style with the class last).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from simstudy.populations.base import Population, Sample

__all__ = ["TabularPopulation", "load_table_file", "load_openml", "load_covtype", "binarize"]


from simstudy.errors import DataUnavailableError  # noqa: E402  (re-exported)


def _is_numeric(values: pd.Series) -> bool:
    return bool(pd.to_numeric(values, errors="coerce").notna().all())


def load_table_file(path: str | os.PathLike, label_column: str | int = "auto",
                    delimiter: str | None = None, header: str | bool = "auto"):
    """Read a delimited data file into features and labels.

    Parameters
    ----------
    path : path-like
        Text file, optionally gzip-compressed (``.gz``).
    label_column : "auto", "first", "last" or int
        Where the class is. "auto": the first column if it is non-numeric and the last one
        is numeric (UCI Letter), otherwise the last column (OpenML and most CSV files).
    delimiter : str or None
        Field separator; None sniffs "," then whitespace.
    header : "auto", True or False
        Whether the first row holds column names. "auto": yes when a non-label field of the
        first row is not a number.

    Returns
    -------
    X : ndarray of float64, shape (N, p)
    y : ndarray of str, shape (N,)
    """
    path = Path(path)
    if not path.is_file():
        raise DataUnavailableError(f"population.path={str(path)!r}: no such file.")
    sep = delimiter
    if sep is None:
        opener = __import__("gzip").open if path.suffix == ".gz" else open
        with opener(path, "rt") as fh:
            first = fh.readline()
        sep = "," if "," in first else r"\s+"
    raw = pd.read_csv(path, sep=sep, header=None, dtype=str, engine="python" if sep == r"\s+" else "c",
                      skipinitialspace=True)
    if raw.shape[1] < 2:
        raise ValueError(
            f"population.path={str(path)!r}: found {raw.shape[1]} column(s); need the class and "
            "at least one feature. Set population.delimiter if the separator is not ',' or blanks."
        )
    body = raw.iloc[1:] if len(raw) > 1 else raw
    if label_column == "auto":
        first_num, last_num = _is_numeric(body.iloc[:, 0]), _is_numeric(body.iloc[:, -1])
        col = 0 if (not first_num and last_num) else raw.shape[1] - 1
    elif label_column == "first":
        col = 0
    elif label_column == "last":
        col = raw.shape[1] - 1
    elif isinstance(label_column, int) and -raw.shape[1] <= label_column < raw.shape[1]:
        col = label_column % raw.shape[1]
    else:
        raise ValueError(
            f"population.label_column={label_column!r} is not valid: use 'auto', 'first', 'last' "
            f"or a column index in [0, {raw.shape[1]})."
        )
    feature_cols = [c for c in range(raw.shape[1]) if c != col]
    if header == "auto":
        has_header = not _is_numeric(raw.iloc[:1, feature_cols].stack())
    else:
        has_header = bool(header)
    data = raw.iloc[1:] if has_header else raw
    try:
        X = data.iloc[:, feature_cols].astype(float).to_numpy()
    except ValueError as exc:
        raise ValueError(
            f"population.path={str(path)!r}: non-numeric feature values ({exc}). Check "
            "population.label_column (where the class is) and population.header."
        ) from None
    y = data.iloc[:, col].str.strip().to_numpy(dtype=str)
    return X, y


def _frame_to_numeric(frame: pd.DataFrame) -> np.ndarray:
    cols = []
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, pd.CategoricalDtype) or col.dtype == object:
            converted = pd.to_numeric(col, errors="coerce")
            if converted.notna().all():
                cols.append(converted.to_numpy(float))
            else:  # nominal feature: ordinal codes in category order
                cols.append(pd.Categorical(col).codes.astype(float))
        else:
            cols.append(col.to_numpy(float))
    return np.column_stack(cols)


def load_openml(data_id: int, data_home: str | None = None):
    """Fetch an OpenML data set (cached under ``data_home``) as numeric features and labels.

    Raises
    ------
    DataUnavailableError
        When the download fails (for example without internet), with the ways out.
    """
    from sklearn.datasets import fetch_openml

    try:
        bunch = fetch_openml(data_id=int(data_id), data_home=data_home, as_frame=True, parser="auto")
    except Exception as exc:  # network errors come in many types (URLError, OSError, ...)
        raise DataUnavailableError(
            f"could not fetch OpenML data id {data_id} ({type(exc).__name__}: {exc}). "
            "Connect to the internet once (the file is then cached under population.data_home), "
            "or point population.path at a local copy of the data file."
        ) from exc
    X = _frame_to_numeric(bunch.data)
    y = np.asarray(bunch.target).astype(str)
    return X, y


def load_covtype(data_home: str | None = None):
    """CoverType (581,012 x 54, classes 1..7) through ``sklearn.datasets.fetch_covtype``."""
    from sklearn.datasets import fetch_covtype

    try:
        bunch = fetch_covtype(data_home=data_home, download_if_missing=True)
    except Exception as exc:
        raise DataUnavailableError(
            f"could not fetch CoverType ({type(exc).__name__}: {exc}). Connect to the internet "
            "once (scikit-learn caches it under population.data_home), or point population.path "
            "at the UCI file covtype.data.gz (class in the last column)."
        ) from exc
    return np.asarray(bunch.data, dtype=float), np.asarray(bunch.target).astype(str)


def binarize(labels: np.ndarray, positive: Sequence[str] | None):
    """Map class labels to {0, 1}: 1 for the labels in ``positive``.

    ``positive=None`` keeps the original classes, encoded 0..C-1 in sorted order.
    Raises ValueError naming ``population.positive`` when a class ends up empty.
    """
    labels = np.asarray(labels).astype(str)
    classes = np.unique(labels)
    if positive is None:
        if classes.size < 2:
            raise ValueError(f"the data hold a single class {classes.tolist()}; need at least two.")
        return np.searchsorted(classes, labels).astype(np.int64)
    pos = {str(p) for p in positive}
    y = np.isin(labels, list(pos)).astype(np.int64)
    if y.all() or not y.any():
        which = "negative" if y.all() else "positive"
        raise ValueError(
            f"population.positive={sorted(pos)} leaves the {which} class empty; the data's "
            f"labels are {classes.tolist()}. List some (not all) of them in population.positive."
        )
    return y


class TabularPopulation(Population):
    """A finite data set used as the population: training sets are drawn from its rows.

    Parameters
    ----------
    X : ndarray, shape (N, p)
    y : ndarray of int, shape (N,)
    name : str
    replace : bool
        Draw rows uniformly with replacement (the protocol of Grandvalet & Bengio's Table 2:
        examples are then i.i.d. from the empirical distribution) or without.
    seed_info : dict
        Parameters that identify the data (source, binarisation) for seed derivation.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, name: str = "tabular", replace: bool = True,
                 seed_info: dict[str, Any] | None = None):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.int64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"need X of shape (N, p) and y of shape (N,); got {X.shape} and {y.shape}.")
        self.X, self.y = X, y
        self.name = name
        self.replace = bool(replace)
        self._seed_info = dict(seed_info or {})
        self._cast: dict[np.dtype, np.ndarray] = {}

    @property
    def size(self) -> int:
        return self.X.shape[0]

    def features(self, dtype=np.float64) -> np.ndarray:
        """The full feature matrix in ``dtype`` (cached), e.g. float32 for tree kernels."""
        dtype = np.dtype(dtype)
        if dtype == self.X.dtype:
            return self.X
        if dtype not in self._cast:
            self._cast[dtype] = np.ascontiguousarray(self.X, dtype=dtype)
        return self._cast[dtype]

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "tabular", "name": self.name, "replace": self.replace, **self._seed_info}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rows": self.size, "features": self.X.shape[1],
                "positive_rate": float(np.mean(self.y == 1))}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        if self.replace:
            index = rng.integers(0, self.size, size=n)
        else:
            if n > self.size:
                raise ValueError(
                    f"cannot draw n={n} rows without replacement from {self.size}; "
                    "set population.replace=true or use smaller study.sizes."
                )
            index = rng.choice(self.size, size=n, replace=False)
        return Sample(X=self.X[index], y=self.y[index], index=index)

    @property
    def has_exact_error(self) -> bool:
        return True

    def exact_error(self, predict: Callable[[np.ndarray], np.ndarray], dtype=np.float64) -> float:
        """Error on the whole data set: exact, because training sets are drawn from it uniformly."""
        return float(np.mean(predict(self.features(dtype)) != self.y))

    def evaluation_set(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
        """The whole data set (features in ``dtype``, labels): the mean loss over it is a model's
        exact risk, because training sets are drawn from it uniformly."""
        return self.features(dtype), self.y
