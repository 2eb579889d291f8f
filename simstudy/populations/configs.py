"""Config schemas of the populations and their presets (the ``population`` config group).

Each schema is a dataclass whose fields are the population's settings; a preset is an
instance of one (``letter`` is a ``tabular`` population with Letter's source and classes).
:mod:`simstudy.registry` names them and :func:`simstudy.config.register_configs` stores them as
Hydra group options, so ``population=letter population.path=...`` is type-checked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

from omegaconf import MISSING

__all__ = ["LogisticPopulationConfig", "GaussianFoldsPopulationConfig", "TabularPopulationConfig",
           "LOGISTIC", "GAUSSIAN_FOLDS", "TABULAR", "LETTER", "FOREST", "CUSTOM"]


@dataclass
class LogisticPopulationConfig:
    """Nedelko's 2-D logistic model: x ~ N(0, I_2), P(y=1|x) = sigmoid(alpha (x1 + x2))."""

    kind: str = "logistic"
    name: str = "logistic"
    #: Bayes error R0 in (0, 0.5); alpha is solved from it.
    bayes_error: float = 0.2


@dataclass
class GaussianFoldsPopulationConfig:
    """CV residuals drawn directly, fold means exchangeable Gaussian with between-block correlation rho."""

    kind: str = "gaussian_folds"
    name: str = "gaussian_folds"
    rho: float = 0.5
    mean: float = 0.0
    sigma: float = 1.0


@dataclass
class TabularPopulationConfig:
    """A finite data set as population (OpenML, the CoverType fetcher, or a local file)."""

    kind: str = "tabular"
    name: str = "tabular"
    #: "openml", "covtype" or "file"; a non-null ``path`` always means "file".
    source: str = "file"
    openml_id: Optional[int] = None
    path: Optional[str] = None
    #: Download cache (scikit-learn's default, ~/scikit_learn_data, when null).
    data_home: Optional[str] = None
    #: "auto", "first", "last" or a column index (files only).
    label_column: Any = "auto"
    delimiter: Optional[str] = None
    header: Any = "auto"
    #: Class labels mapped to 1 (the rest to 0); null keeps the original classes.
    positive: Optional[List[str]] = None
    #: Sample training sets with replacement (Table 2 protocol) or without.
    replace: bool = True
    #: Missing values (empty cell, ?, NA, N/A, NaN, nan, null, NULL, None): "error" refuses them,
    #: "drop_rows" leaves out the rows with a missing feature (a missing class is always an error).
    missing: str = "error"


LOGISTIC = LogisticPopulationConfig()
GAUSSIAN_FOLDS = GaussianFoldsPopulationConfig()
TABULAR = TabularPopulationConfig()
LETTER = TabularPopulationConfig(name="letter", source="openml", openml_id=6,
                                 positive=list("ABCDEFGHIJKLM"))
FOREST = TabularPopulationConfig(name="forest", source="covtype", label_column="last", positive=["2"])
#: A user's population: ``population=custom population._target_=package.module.Class`` (keyword
#: arguments with ``+population.<name>=value``).
CUSTOM: dict[str, Any] = {"kind": "custom", "name": "custom", "_target_": MISSING}
