"""The one data fingerprint of simstudy: :func:`data_fingerprint` identifies a data set by its
content, so that a run directory refuses to resume or extend a run onto changed data (it enters
every run's identity, :mod:`simstudy.engine.identity`)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from simstudy.populations.io.files import _content_chunks

__all__ = ["data_fingerprint", "population_fingerprint"]


def data_fingerprint(data: bytes | str | os.PathLike | np.ndarray | Sequence[np.ndarray]) -> str:
    """SHA-256 (hex) identifying a data set, to refuse resuming a run onto changed data.

    Parameters
    ----------
    data : bytes, path-like, ndarray or sequence of ndarrays
        A file: its content is hashed, streamed (decompressed for gzip files, so that
        re-compressing the same text does not change it); ``bytes``: a file's content already
        read (the same digest). Arrays (e.g. ``(X, labels)`` of a download, or of a population
        given as arrays): the dtype, shape and bytes of each, in order.

    Returns
    -------
    str
        64 hexadecimal digits. Independent of the file's name and place.
    """
    digest = hashlib.sha256()
    if isinstance(data, bytes):
        digest.update(data)
        return digest.hexdigest()
    if isinstance(data, (str, os.PathLike)):
        for chunk in _content_chunks(Path(data)):
            digest.update(chunk)
        return digest.hexdigest()
    for array in (data,) if isinstance(data, np.ndarray) else tuple(data):
        array = np.asarray(array)
        if array.dtype == object:
            array = array.astype(str)
        array = np.ascontiguousarray(array)
        digest.update(f"{array.dtype.str}{array.shape};".encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


def population_fingerprint(population: Any) -> str | None:
    """The :func:`data_fingerprint` of a population's data: its ``fingerprint`` attribute when it
    has one (a loaded file's, a transform's base population's), else that of its ``X`` and ``y``
    arrays; None for a population without data (an infinite one)."""
    given = getattr(population, "fingerprint", None)
    if isinstance(given, str):
        return given
    X, y = getattr(population, "X", None), getattr(population, "y", None)
    if isinstance(X, np.ndarray) and isinstance(y, np.ndarray):
        return data_fingerprint((X, y))
    return None
