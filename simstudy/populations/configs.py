"""Config schemas of the populations and their presets (the ``population`` config group).

Each schema is a dataclass whose fields are the population's settings; a preset is an
instance of one (``letter`` is a ``tabular`` population with Letter's source and classes).
:mod:`simstudy.registry` names them and :func:`simstudy.cli.hydra.register_configs` stores them as
Hydra group options, so ``population=letter population.path=...`` is type-checked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

from omegaconf import MISSING

__all__ = ["LogisticPopulationConfig", "GaussianFoldsPopulationConfig", "TabularPopulationConfig",
           "GaussianLinearPopulationConfig", "Friedman1PopulationConfig",
           "LOGISTIC", "GAUSSIAN_FOLDS", "TABULAR", "LETTER", "FOREST", "CUSTOM", "GAUSSIAN_LINEAR", "FRIEDMAN1",
           "TASKS"]

#: What a tabular population's target is.
TASKS = ("classification", "regression")


#: Values of ``population.missing``: refuse missing features, or drop the rows that have one.
MISSING_POLICIES = ("error", "drop_rows")

@dataclass
class LabelNoiseFields:
    """Label noise, a transform of any classification population (:mod:`simstudy.populations.noise`)."""

    #: Flip each training label with this probability (null: no transform). 0 applies the
    #: transform with no flips (the baseline of a noise curve: same random streams).
    label_noise: Optional[float] = None
    #: The truth refers to the "clean" population (true labels) or the "noisy" one.
    noise_truth: str = "clean"


@dataclass
class LogisticPopulationConfig(LabelNoiseFields):
    """Nedelko's 2-D logistic model: x ~ N(0, I_2), P(y=1|x) = sigmoid(alpha (x1 + x2))."""

    kind: str = "logistic"
    name: str = "logistic"
    #: Bayes error R0 in (0, 0.5); alpha is solved from it.
    bayes_error: float = 0.2


@dataclass
class GaussianLinearPopulationConfig:
    """Regression: x ~ N(0, Sigma) with Sigma_ij = correlation^|i-j|, y = x.beta + sigma eps."""

    kind: str = "gaussian_linear"
    name: str = "gaussian_linear"
    p: int = 5
    #: Coefficients (null: 1, 1/2, ..., 1/p).
    beta: Optional[List[float]] = None
    sigma: float = 1.0
    correlation: float = 0.0
    #: Fixed sample giving the truth of non-linear learners (linear ones: closed form).
    evaluation_size: int = 100_000


@dataclass
class Friedman1PopulationConfig:
    """Regression: Friedman #1, x ~ U[0,1]^p, y = 10 sin(pi x1 x2) + 20 (x3-1/2)^2 + 10 x4 + 5 x5 + sigma eps."""

    kind: str = "friedman1"
    name: str = "friedman1"
    p: int = 10
    sigma: float = 1.0
    #: Fixed sample giving the truth (its Monte Carlo error is reported).
    evaluation_size: int = 100_000


@dataclass
class GaussianFoldsPopulationConfig:
    """CV residuals drawn directly, fold means exchangeable Gaussian with between-block correlation rho."""

    kind: str = "gaussian_folds"
    name: str = "gaussian_folds"
    rho: float = 0.5
    mean: float = 0.0
    sigma: float = 1.0


@dataclass
class TabularPopulationConfig(LabelNoiseFields):
    """A finite data set as population (OpenML, the CoverType fetcher, or a local file)."""

    kind: str = "tabular"
    name: str = "tabular"
    #: "classification" (class labels) or "regression" (a real-valued target column).
    task: str = "classification"
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
GAUSSIAN_LINEAR = GaussianLinearPopulationConfig()
FRIEDMAN1 = Friedman1PopulationConfig()
FOREST = TabularPopulationConfig(name="forest", source="covtype", label_column="last", positive=["2"])
#: A user's population: ``population=custom population._target_=package.module.Class`` (keyword
#: arguments with ``+population.<name>=value``).
CUSTOM: dict[str, Any] = {"kind": "custom", "name": "custom", "_target_": MISSING}
