"""Data sets shipped inside scikit-learn and statsmodels as finite populations (no download).

Each data set is the whole population: training sets are drawn from its rows uniformly (with
replacement by default, the protocol of Grandvalet & Bengio's Table 2), so the true risk of a
fitted model is its mean loss over all rows, exactly (:class:`simstudy.populations.finite.TabularPopulation`).

The classification sets are made binary as stated in :data:`DATASETS` (class 1 listed first);
features are the shipped numeric columns (statsmodels' ``modechoice``: the travel mode one-hot).

============== ============ ====== ======== ==========================================================================
name           package      rows   features target
============== ============ ====== ======== ==========================================================================
breast_cancer  scikit-learn 569    30       1 = malignant (212), 0 = benign
wine           scikit-learn 178    13       1 = cultivar class_0 (59), 0 = class_1 or class_2
digits         scikit-learn 1797   64       1 = digits 5-9 (896), 0 = digits 0-4
iris           scikit-learn 150    4        1 = versicolor (50), 0 = setosa or virginica (not linearly separable)
diabetes       scikit-learn 442    10       disease progression after one year (regression)
fair           statsmodels  6366   8        1 = any extramarital affair (affairs > 0; 2053), 0 = none
anes96         statsmodels  944    9        1 = expected vote Dole (393), 0 = Clinton; logpopul dropped
modechoice     statsmodels  840    10       1 = the travel mode chosen (210), 0 = not (4 modes x 210 travellers)
randhie        statsmodels  20190  9        mdvis, number of outpatient visits (regression)
star98         statsmodels  303    20       share of students above the national median, NABOVE / (NABOVE + NBELOW)
engel          statsmodels  235    1        food expenditure from income (regression)
grunfeld       statsmodels  220    2        gross investment from firm value and capital stock (regression)
============== ============ ====== ======== ==========================================================================

statsmodels' ``spector`` (32 rows) and ``cpunish`` (17 rows) are too small to sample training
sets of the benchmark's sizes from and are not registered.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from simstudy.errors import ConfigError, DataUnavailableError

__all__ = ["DATASETS", "PackagedDataset", "load_packaged", "build_packaged_population"]


@dataclass(frozen=True)
class PackagedDataset:
    """A data set shipped in a package: how to load it and what its target is."""

    package: str            # the distribution that ships it (for messages)
    task: str               # "classification" or "regression"
    target: str             # what y is (class 1 for classification)
    load: Callable[[], tuple[np.ndarray, np.ndarray, tuple[str, ...]]]


def _sklearn(loader: str, to_y: Callable[[np.ndarray], np.ndarray]):
    def load():
        bunch = getattr(importlib.import_module("sklearn.datasets"), loader)()
        return np.asarray(bunch.data, dtype=float), to_y(np.asarray(bunch.target)), tuple(bunch.feature_names)
    return load


def _statsmodels(module: str, target: Callable[[Any], np.ndarray], drop: tuple[str, ...] = (),
                 one_hot: str | None = None):
    """Loader of ``statsmodels.datasets.<module>``: y = target(frame), X = the other columns."""
    def load():
        try:
            frame = importlib.import_module(f"statsmodels.datasets.{module}").load_pandas().data
        except ImportError:
            raise DataUnavailableError(f"population.dataset={module!r} is shipped inside statsmodels, which is not "
                                       "installed: pip install statsmodels (or pip install 'simstudy[benchmark]').") \
                from None
        y = np.asarray(target(frame), dtype=float)
        features = frame.drop(columns=list(drop))
        if one_hot is not None:
            import pandas as pd

            features = pd.get_dummies(features, columns=[one_hot], dtype=float)
        return features.to_numpy(dtype=float), y, tuple(str(c) for c in features.columns)
    return load


#: The data sets (see the module docstring): name -> PackagedDataset.
DATASETS: dict[str, PackagedDataset] = {
    "breast_cancer": PackagedDataset("scikit-learn", "classification", "1 = malignant (scikit-learn's target 0)",
                                     _sklearn("load_breast_cancer", lambda t: (t == 0).astype(np.int64))),
    "wine": PackagedDataset("scikit-learn", "classification", "1 = class_0, 0 = class_1 or class_2",
                            _sklearn("load_wine", lambda t: (t == 0).astype(np.int64))),
    "digits": PackagedDataset("scikit-learn", "classification", "1 = digits 5-9, 0 = digits 0-4",
                              _sklearn("load_digits", lambda t: (t >= 5).astype(np.int64))),
    "iris": PackagedDataset("scikit-learn", "classification", "1 = versicolor, 0 = setosa or virginica",
                            _sklearn("load_iris", lambda t: (t == 1).astype(np.int64))),
    "diabetes": PackagedDataset("scikit-learn", "regression", "disease progression after one year",
                                _sklearn("load_diabetes", lambda t: t.astype(float))),
    "fair": PackagedDataset("statsmodels", "classification", "1 = affairs > 0",
                            _statsmodels("fair", lambda f: f["affairs"] > 0, drop=("affairs",))),
    "anes96": PackagedDataset("statsmodels", "classification", "1 = expected vote Dole, 0 = Clinton",
                              _statsmodels("anes96", lambda f: f["vote"], drop=("vote", "logpopul"))),
    "modechoice": PackagedDataset("statsmodels", "classification", "1 = the mode chosen",
                                  _statsmodels("modechoice", lambda f: f["choice"], drop=("choice", "individual"),
                                               one_hot="mode")),
    "randhie": PackagedDataset("statsmodels", "regression", "mdvis (outpatient visits)",
                               _statsmodels("randhie", lambda f: f["mdvis"], drop=("mdvis",))),
    "star98": PackagedDataset("statsmodels", "regression", "NABOVE / (NABOVE + NBELOW)",
                              _statsmodels("star98", lambda f: f["NABOVE"] / (f["NABOVE"] + f["NBELOW"]),
                                           drop=("NABOVE", "NBELOW"))),
    "engel": PackagedDataset("statsmodels", "regression", "foodexp",
                             _statsmodels("engel", lambda f: f["foodexp"], drop=("foodexp",))),
    "grunfeld": PackagedDataset("statsmodels", "regression", "invest",
                                _statsmodels("grunfeld", lambda f: f["invest"], drop=("invest", "firm", "year"))),
}


def load_packaged(dataset: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(X, y, feature names) of a data set of :data:`DATASETS` (y: 0/1 labels or real targets)."""
    if dataset not in DATASETS:
        raise ConfigError(f"population.dataset={dataset!r} is invalid: choose one of {', '.join(DATASETS)}.")
    X, y, names = DATASETS[dataset].load()
    if DATASETS[dataset].task == "classification":
        y = y.astype(np.int64)
    return X, y, names


def build_packaged_population(cfg: Mapping[str, Any]):
    """The finite population of ``cfg["dataset"]`` (a :class:`TabularPopulation`)."""
    from simstudy.populations.finite import TabularPopulation

    dataset = cfg.get("dataset")
    X, y, _ = load_packaged(dataset)
    spec = DATASETS[dataset]
    seed_info = {"kind": "packaged", "dataset": dataset, "rows": int(X.shape[0]), "features": int(X.shape[1])}
    name = cfg.get("name") if cfg.get("name") not in (None, "packaged") else dataset
    return TabularPopulation(X, y, name=str(name), replace=bool(cfg.get("replace", True)), seed_info=seed_info,
                             source=f"{spec.package}:{dataset}", task=spec.task)
