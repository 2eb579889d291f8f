"""Finite tabular populations: a whole data set is the population, sampled uniformly.

:func:`build_tabular_population` turns a ``population`` config of kind tabular into a
:class:`TabularPopulation`: the data read by :mod:`simstudy.populations.io` (a file, an OpenML id
or CoverType), the labels turned into classes, or a real target for regression. The data's
fingerprint (:func:`~simstudy.populations.io.fingerprint.data_fingerprint`) identifies them in a
run's identity; it is separate from :meth:`TabularPopulation.seed_params`, so moving or
re-compressing a file changes no seed.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

import numpy as np

from simstudy.contracts import GuaranteedOutputs
from simstudy.populations.base import Population, Sample
from simstudy.populations.io.fingerprint import data_fingerprint
from simstudy.populations.io.openml import load_covtype, load_openml
from simstudy.populations.io.table import TabularData, binarize
from simstudy.populations.io.text import load_table_file

__all__ = ["TabularPopulation", "build_tabular_population", "load_tabular"]

log = logging.getLogger("simstudy")


def load_tabular(cfg: Mapping[str, Any]) -> TabularData:
    """Load the data a ``population`` config node (kind tabular) describes.

    A non-null ``path`` means a file; else ``source`` is "openml" (with ``openml_id``) or
    "covtype". Reads ``label_column``, ``delimiter``, ``header``, ``data_home`` and ``missing``
    (default "error").
    """
    missing = cfg.get("missing", "error")
    source = cfg.get("source")
    if cfg.get("path"):
        return load_table_file(cfg["path"], label_column=cfg.get("label_column", "auto"),
                               delimiter=cfg.get("delimiter"), header=cfg.get("header", "auto"), missing=missing)
    if source == "openml" and cfg.get("openml_id") is not None:
        return load_openml(cfg["openml_id"], data_home=cfg.get("data_home"), missing=missing)
    if source == "covtype":
        return load_covtype(data_home=cfg.get("data_home"), missing=missing)
    if source == "openml":
        raise ValueError("population.openml_id=None: population.source=openml needs the OpenML data id "
                         "(Letter is 6); or set population.path to a local file.")
    raise ValueError(
        f"population.source={source!r} without population.path: set population.path to the data file, or "
        "use population.source=openml (with population.openml_id) or covtype.")


# ----------------------------------------------------------------------------- the population
def _check_finite(X: np.ndarray, name: str) -> None:
    finite = np.isfinite(X)
    if not finite.all():
        row, col = np.argwhere(~finite)[0]
        raise ValueError(
            f"population {name!r}: the features hold {int((~finite).sum())} NaN or infinite value(s), the "
            f"first at row {row}, column {col}; learners would silently misuse them. Set "
            "population.missing=drop_rows, or clean the data.")


class TabularPopulation(GuaranteedOutputs, Population):
    """A finite data set used as the population: training sets are drawn from its rows.

    Parameters
    ----------
    X : ndarray, shape (N, p)
        Finite numbers only.
    y : ndarray of int, shape (N,)
        Class labels 0..C-1 (classification) or real targets (regression).
    name : str
    replace : bool
        Draw rows uniformly with replacement (the protocol of Grandvalet & Bengio's Table 2:
        examples are then i.i.d. from the empirical distribution) or without.
    seed_info : dict
        Parameters that identify the data (source, binarisation) for seed derivation.
    fingerprint : str or None
        :func:`data_fingerprint` of the data as loaded (a loader's ``TabularData.fingerprint``);
        None: computed from ``X`` and ``y`` when first asked for.
    source : str or None
        Where the data come from ("file", "openml:6", "covtype"), for messages.
    task : {"classification", "regression"}
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, name: str = "tabular", replace: bool = True,
                 seed_info: dict[str, Any] | None = None, fingerprint: str | None = None,
                 source: str | None = None, task: str = "classification"):
        if task not in ("classification", "regression"):
            raise ValueError(f"population.task={task!r} is invalid: use 'classification' or 'regression'.")
        self.task = task
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.int64 if task == "classification" else np.float64)
        if task == "regression" and not np.all(np.isfinite(y)):
            raise ValueError(f"population {name!r}: the regression target holds NaN or infinite values.")
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"need X of shape (N, p) and y of shape (N,); got {X.shape} and {y.shape}.")
        _check_finite(X, name)
        self.X, self.y = X, y
        self.name = name
        self.replace = bool(replace)
        self.source = source
        self._seed_info = dict(seed_info or {})
        self._fingerprint = fingerprint
        self._cast: dict[np.dtype, np.ndarray] = {}

    @property
    def size(self) -> int:
        return self.X.shape[0]

    @property
    def fingerprint(self) -> str:
        """SHA-256 identifying the data (see :func:`data_fingerprint`); not part of the seed."""
        if self._fingerprint is None:
            self._fingerprint = data_fingerprint((self.X, self.y))
        return self._fingerprint

    def check_size(self, max_n: int, replace: bool | None = None) -> None:
        """Check that training sets of up to ``max_n`` rows can be drawn, before any work starts.

        Parameters
        ----------
        max_n : int
            The largest training size (the maximum of ``study.sizes``).
        replace : bool or None
            ``population.replace``; None: this population's own setting.

        Raises
        ------
        ValueError
            Naming ``study.sizes`` and ``population.replace`` when drawing without replacement
            needs more rows than the population has. With replacement, fewer rows than ``max_n``
            only log a warning.
        """
        replace = self.replace if replace is None else bool(replace)
        where = f"population {self.name!r}" + (f" ({self.source})" if self.source else "")
        if max_n < 1:
            raise ValueError(f"study.sizes: the largest training size is n={max_n}; use sizes of at least 1.")
        if max_n <= self.size:
            return
        if not replace:
            raise ValueError(
                f"study.sizes asks for training sets of up to n={max_n} rows drawn without replacement "
                f"(population.replace=false), but {where} has only {self.size} rows. Lower study.sizes to at "
                f"most {self.size}, or set population.replace=true (rows drawn with replacement, the Table 2 "
                "protocol).")
        log.warning("%s has %d rows, fewer than the largest training size n=%d in study.sizes: with "
                    "population.replace=true each training set of %d repeats rows (%.1f draws per row on "
                    "average), so results describe only %d distinct examples. Use a larger data set or "
                    "smaller study.sizes if that is not intended.", where, self.size, max_n, max_n,
                    max_n / self.size, self.size)

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
        out = {**super().describe(), "rows": self.size, "features": self.X.shape[1]}
        if self.task == "regression":
            return {**out, "task": "regression", "target_mean": float(self.y.mean()), "target_sd": float(self.y.std())}
        return {**out, "positive_rate": float(np.mean(self.y == 1))}

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

    def finite_data(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
        """The whole data set (features in ``dtype``, labels): this population is finite."""
        return self.features(dtype), self.y

    def evaluation_set(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
        """The whole data set (features in ``dtype``, labels): the mean loss over it is a model's
        exact risk, because training sets are drawn from it uniformly."""
        return self.features(dtype), self.y


def build_tabular_population(cfg: Mapping[str, Any]) -> TabularPopulation:
    """The population a ``population`` config node of kind tabular describes, with its fingerprint.

    Seeds (:meth:`TabularPopulation.seed_params`) are those of the former builder: name, replace,
    positive labels, rows and features; the fingerprint stays out of them.
    """
    if cfg.get("task", "classification") == "regression":
        return _regression_population(cfg)
    data = load_tabular(cfg)
    positive = cfg.get("positive")
    positive = None if positive is None else [str(p) for p in positive]
    y = binarize(data.labels, positive)
    seed_info = {"positive": None if positive is None else sorted(positive),
                 "rows": int(data.X.shape[0]), "features": int(data.X.shape[1])}
    return TabularPopulation(data.X, y, name=cfg.get("name", "tabular"), replace=cfg.get("replace", True),
                             seed_info=seed_info, fingerprint=data.fingerprint, source=data.source)


def _regression_target(labels: np.ndarray, where: str) -> np.ndarray:
    """The target column's cells as floats; refuses text, naming the first offending cell."""
    try:
        return labels.astype(np.float64)
    except ValueError:
        bad = next(i for i, v in enumerate(labels) if not _is_number(v))
        raise ValueError(f"{where}: population.task=regression needs a numeric target, but the target column holds "
                         f"{str(labels[bad])!r} (row {bad + 1} of the data); point population.label_column at "
                         "the numeric target column, or use population.task=classification.") from None


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _regression_population(cfg: Mapping[str, Any]) -> TabularPopulation:
    """A file or OpenML data set with a real-valued target (``population.task=regression``).

    ``label_column=auto`` means the last column for regression (the class-detection rules of
    classification do not apply to real targets).
    """
    if cfg.get("label_column", "auto") == "auto":
        cfg = {**cfg, "label_column": "last"}
    data = load_tabular(cfg)
    where = f"population.path={cfg.get('path')!r}" if cfg.get("path") else f"population.openml_id={cfg.get('openml_id')}"
    y = _regression_target(np.asarray(data.labels), where)
    seed_info = {"task": "regression", "rows": int(data.X.shape[0]), "features": int(data.X.shape[1])}
    return TabularPopulation(data.X, y, name=cfg.get("name", "tabular"), replace=cfg.get("replace", True),
                             seed_info=seed_info, fingerprint=data.fingerprint, source=data.source, task="regression")
