"""Downloaded data sets: OpenML (``sklearn.datasets.fetch_openml``, cached under ``data_home``) and
CoverType (scikit-learn's fetcher of the raw UCI file), as numeric features and labels."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.errors import DataUnavailableError
from simstudy.populations.io.table import (
    MISSING_MARKERS, TabularData, _assemble, _check_missing_policy, _check_numeric, _Column, _Labels, _Origin,
)

__all__ = ["load_covtype", "load_openml"]


def _download_origin(where: str, n_rows: int, missing_note: str) -> _Origin:
    return _Origin(where, "row", np.arange(1, n_rows + 1), missing_note,
                   "Save a cleaned copy of the data as a file and set population.path to it.")


def _data_home(data_home: str | os.PathLike | None) -> str | None:
    """The download cache directory (``~`` expanded, created if missing), or None for the default."""
    if data_home is None:
        return None
    home = Path(os.path.expanduser(str(data_home)))
    shown = f"population.data_home={str(data_home)!r}"
    if home.exists() and not home.is_dir():
        raise DataUnavailableError(
            f"{shown} is a file, not a directory; point it at a directory for the download cache "
            "(created if missing), or null for scikit-learn's default ~/scikit_learn_data.")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataUnavailableError(
            f"{shown}: cannot create the download cache ({type(exc).__name__}: {exc}); point it at a "
            "writable directory, or null for scikit-learn's default ~/scikit_learn_data.") from exc
    return str(home)


def _frame_column(series: pd.Series, index: int) -> _Column:
    """One downloaded column as numbers: nominal values become ordinal codes in category order."""
    name = str(series.name)
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return _Column(index, name, values, np.isnan(values), np.isinf(values))
    missing = series.isna().to_numpy() | series.astype(object).isin(MISSING_MARKERS).to_numpy()
    present = series.astype(object).where(~missing)
    numbers = pd.to_numeric(present, errors="coerce")
    if int(numbers.notna().sum()) == int((~missing).sum()):
        values = numbers.to_numpy(dtype=np.float64)
    else:
        codes = pd.Categorical(series.where(~missing)).remove_unused_categories().codes
        values = np.where(missing, np.nan, codes.astype(np.float64))
    return _Column(index, name, values, missing, ~missing & np.isinf(values))


def _openml_target(target: Any, where: str) -> pd.Series:
    if isinstance(target, pd.DataFrame) and target.shape[1] == 1:
        target = target.iloc[:, 0]
    if target is None or isinstance(target, pd.DataFrame):
        what = "no default target column" if target is None else f"{target.shape[1]} target columns"
        raise ValueError(
            f"{where}: the data set has {what}, so the class is unknown. Save it as a CSV file and set "
            "population.path and population.label_column, or choose another population.openml_id.")
    return pd.Series(target)


def _openml_failure(data_id: Any, home: str | None, exc: Exception) -> Exception:
    """A refused request (unknown id: ValueError) or a failed download (DataUnavailableError)."""
    what = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ValueError):
        return ValueError(
            f"population.openml_id={data_id}: OpenML refused the request ({what}). Check the data id "
            "(Letter is 6), or set population.path to a local copy of the data file.")
    return DataUnavailableError(
        f"population.openml_id={data_id}: the download failed ({what}). Connect to the internet once "
        f"(the data are then cached under population.data_home={home!r}; null means "
        "~/scikit_learn_data), or set population.path to a local copy of the data file.")


def load_openml(data_id: int, data_home: str | os.PathLike | None = None,
                missing: str = "error") -> TabularData:
    """Fetch an OpenML data set (cached under ``data_home``) as numeric features and labels.

    Parameters
    ----------
    data_id : int
        OpenML data id (Letter is 6).
    data_home : path-like or None
        Download cache (``~`` expanded, created if missing); None: scikit-learn's default.
    missing : "error" or "drop_rows"
        As in :func:`load_table_file`; missing cells are those OpenML marks (and
        :data:`MISSING_MARKERS` in nominal columns).

    Returns
    -------
    TabularData
        Nominal features as ordinal codes in category order; ``fingerprint`` of the arrays.

    Raises
    ------
    DataUnavailableError
        The download failed (e.g. no internet) or ``data_home`` is unusable.
    ValueError
        OpenML refused the id, the data set has no single target, or the checks of
        :func:`load_table_file` fail (missing values, missing class, single class).
    """
    from sklearn.datasets import fetch_openml

    _check_missing_policy(missing)
    try:
        data_id = int(data_id)
    except (TypeError, ValueError):
        raise ValueError(f"population.openml_id={data_id!r} is not an integer; use the OpenML data id "
                         "(Letter is 6).") from None
    home = _data_home(data_home)
    try:
        bunch = fetch_openml(data_id=data_id, data_home=home, as_frame=True, parser="auto")
    except Exception as exc:  # network errors come in many types (URLError, OSError, ...)
        raise _openml_failure(data_id, home, exc) from exc
    where = f"population.openml_id={data_id}"
    target = _openml_target(bunch.target, where)
    frame = pd.DataFrame(bunch.data)
    features = [_frame_column(frame.iloc[:, j], j) for j in range(frame.shape[1])]
    label = _Labels(target.astype(object).where(target.notna(), "").astype(str).to_numpy(),
                    target.isna().to_numpy(), f"OpenML's target column {str(target.name)!r}",
                    "Choose another population.openml_id, or save the data as a file and set population.path.")
    origin = _download_origin(where, len(target), "cells OpenML marks as missing")
    _check_numeric(features, origin, label)
    return _assemble(features, label, origin, missing, f"openml:{data_id}", tuple(frame.columns.astype(str)))


def load_covtype(data_home: str | os.PathLike | None = None, missing: str = "error") -> TabularData:
    """CoverType (581,012 x 54, classes 1..7) through ``sklearn.datasets.fetch_covtype``.

    Parameters
    ----------
    data_home : path-like or None
        Download cache, as in :func:`load_openml`.
    missing : "error" or "drop_rows"
        As in :func:`load_table_file` (the UCI data have no missing values).

    Returns
    -------
    TabularData
        ``fingerprint`` of the arrays.
    """
    from sklearn.datasets import fetch_covtype

    _check_missing_policy(missing)
    home = _data_home(data_home)
    try:
        bunch = fetch_covtype(data_home=home, download_if_missing=True)
    except Exception as exc:
        raise DataUnavailableError(
            f"population.source=covtype: the download failed ({type(exc).__name__}: {exc}). Connect to "
            f"the internet once (scikit-learn caches it under population.data_home={home!r}; null means "
            "~/scikit_learn_data), or set population.path to the UCI file covtype.data.gz (class in the "
            "last column).") from exc
    X = np.asarray(bunch.data, dtype=np.float64)
    features = [_Column(j, None, X[:, j], np.isnan(X[:, j]), np.isinf(X[:, j])) for j in range(X.shape[1])]
    labels = np.asarray(bunch.target).astype(str)
    label = _Labels(labels, np.zeros(labels.size, dtype=bool), "the CoverType target",
                    "Delete the cache under population.data_home so that it is downloaded again.")
    origin = _download_origin("population.source=covtype", labels.size, "NaN")
    _check_numeric(features, origin, label)
    return _assemble(features, label, origin, missing, "covtype")
