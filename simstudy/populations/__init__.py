"""Populations: data-generating processes from which training sets are drawn."""
from __future__ import annotations

from typing import Any, Mapping

from simstudy.populations.base import Population, ResidualPopulation, Sample
from simstudy.populations.synthetic import GaussianFoldsPopulation, LogisticPopulation
from simstudy.populations.tabular import (
    DataUnavailableError,
    TabularPopulation,
    binarize,
    load_covtype,
    load_openml,
    load_table_file,
)

__all__ = ["DataUnavailableError", "GaussianFoldsPopulation", "LogisticPopulation", "Population",
           "ResidualPopulation", "Sample",
           "TabularPopulation", "build_population"]


def _build_tabular(cfg: Mapping[str, Any]) -> TabularPopulation:
    if cfg.get("path"):
        X, labels = load_table_file(cfg["path"], label_column=cfg.get("label_column", "auto"),
                                    delimiter=cfg.get("delimiter"), header=cfg.get("header", "auto"))
        source = "file"
    elif cfg.get("source") == "openml":
        X, labels = load_openml(cfg["openml_id"], data_home=cfg.get("data_home"))
        source = f"openml:{cfg['openml_id']}"
    elif cfg.get("source") == "covtype":
        X, labels = load_covtype(data_home=cfg.get("data_home"))
        source = "covtype"
    else:
        raise ValueError(f"population.source={cfg.get('source')!r}: use 'openml', 'covtype' or set population.path.")
    positive = cfg.get("positive")
    y = binarize(labels, None if positive is None else list(positive))
    seed_info = {"positive": None if positive is None else sorted(str(p) for p in positive),
                 "rows": int(X.shape[0]), "features": int(X.shape[1])}
    pop = TabularPopulation(X, y, name=cfg.get("name", "tabular"), replace=cfg.get("replace", True),
                            seed_info=seed_info)
    pop.source = source
    return pop


def build_population(cfg: Mapping[str, Any]) -> Population:
    """Instantiate the population described by a ``population`` config node.

    Parameters
    ----------
    cfg : mapping
        Must contain ``kind`` ("logistic", "tabular" or "gaussian_folds") and the fields of the matching schema
        in :mod:`simstudy.config`.
    """
    kind = cfg.get("kind")
    if kind == "logistic":
        return LogisticPopulation(bayes_error=cfg.get("bayes_error", 0.2))
    if kind == "tabular":
        return _build_tabular(cfg)
    if kind == "gaussian_folds":
        return GaussianFoldsPopulation(rho=cfg.get("rho", 0.5), mean=cfg.get("mean", 0.0), sigma=cfg.get("sigma", 1.0))
    raise ValueError(f"population.kind={kind!r} is unknown: choose logistic or tabular.")
