"""Config schemas and presets of the benchmark's data-generating mechanisms (``population`` group).

Synthetic kinds (:mod:`simstudy.populations.gaussian_classes`, :mod:`simstudy.populations.hastie`,
:mod:`simstudy.populations.noisy_linear`), the data sets shipped inside scikit-learn and
statsmodels (:mod:`simstudy.populations.packaged`) and one task of an OpenML suite
(:mod:`simstudy.populations.openml_suite`). Each schema is a dataclass, so a misspelt key is
refused by Hydra at composition time and by :func:`simstudy.populations.validate_population_config`
in Python.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from omegaconf import MISSING

from simstudy.populations.configs import LabelNoiseFields

__all__ = ["GaussianClassesPopulationConfig", "HastiePopulationConfig", "SparseLinearPopulationConfig",
           "StudentTLinearPopulationConfig", "HeteroscedasticLinearPopulationConfig", "PackagedPopulationConfig",
           "OpenMLTaskPopulationConfig", "GAUSSIAN_CLASSES", "IMBALANCED_CLASSES", "SPARSE_CLASSES", "HASTIE_10_2",
           "SPARSE_LINEAR", "STUDENT_T_LINEAR", "HETEROSCEDASTIC_LINEAR", "OPENML_TASK", "PACKAGED", "BREAST_CANCER",
           "WINE", "DIGITS", "IRIS", "DIABETES", "FAIR", "ANES96",
           "MODECHOICE", "RANDHIE", "STAR98", "ENGEL", "GRUNFELD"]


@dataclass
class GaussianClassesPopulationConfig(LabelNoiseFields):
    """Classification: y ~ Bernoulli(positive_rate), x | y ~ N(+-d/2, Sigma) (exact 0-1 risk of linear rules)."""

    kind: str = "gaussian_classes"
    name: str = "gaussian_classes"
    p: int = 5
    #: Features on which the class means differ (the first ones; null: all p).
    support: Optional[int] = None
    #: Mahalanobis distance between the class means.
    separation: float = 2.0
    #: The share of the positive class, P(y = 1).
    positive_rate: float = 0.5
    correlation: float = 0.0
    #: Fixed sample giving the truth of models that are not linear rules (Monte Carlo error reported).
    evaluation_size: int = 100_000


@dataclass
class HastiePopulationConfig(LabelNoiseFields):
    """Classification: x ~ N(0, I_p), y = 1{|x|^2 > median of chi2(p)} (Hastie et al. 10.2; Bayes error 0)."""

    kind: str = "hastie_10_2"
    name: str = "hastie_10_2"
    p: int = 10
    #: Fixed sample giving the truth of models without a closed-form risk (Monte Carlo error reported).
    evaluation_size: int = 100_000


@dataclass
class SparseLinearPopulationConfig:
    """Regression: p features, y = signal (x_1 + ... + x_support) + sigma eps (exact risk of linear models)."""

    kind: str = "sparse_linear"
    name: str = "sparse_linear"
    p: int = 100
    #: Number of features with a nonzero coefficient (the first ones).
    support: int = 5
    #: The coefficient of each feature in the support.
    signal: float = 1.0
    sigma: float = 1.0
    correlation: float = 0.0
    #: Fixed sample giving the truth of models without a closed-form risk (Monte Carlo error reported).
    evaluation_size: int = 20_000


@dataclass
class StudentTLinearPopulationConfig:
    """Regression: y = x.beta + sigma T, T ~ t(df) (heavy tails; exact squared and absolute risk of linear models)."""

    kind: str = "student_t_linear"
    name: str = "student_t_linear"
    p: int = 5
    #: Coefficients (null: 1, 1/2, ..., 1/p).
    beta: Optional[List[float]] = None
    sigma: float = 1.0
    #: Degrees of freedom of the t noise (> 2).
    df: float = 3.0
    correlation: float = 0.0
    #: Fixed sample giving the truth of models without a closed-form risk (Monte Carlo error reported).
    evaluation_size: int = 100_000


@dataclass
class HeteroscedasticLinearPopulationConfig:
    """Regression: y = x.beta + sigma sqrt(1 + gamma x_1^2) eps (exact squared and absolute risk of linear models)."""

    kind: str = "heteroscedastic_linear"
    name: str = "heteroscedastic_linear"
    p: int = 5
    #: Coefficients (null: 1, 1/2, ..., 1/p).
    beta: Optional[List[float]] = None
    sigma: float = 1.0
    #: The noise variance at x is sigma^2 (1 + gamma x_1^2).
    gamma: float = 1.0
    correlation: float = 0.0
    #: Fixed sample giving the truth of models without a closed-form risk (Monte Carlo error reported).
    evaluation_size: int = 100_000


@dataclass
class PackagedPopulationConfig(LabelNoiseFields):
    """A data set shipped inside scikit-learn or statsmodels as a finite population (no download)."""

    kind: str = "packaged"
    name: str = "packaged"
    #: One of :data:`simstudy.populations.packaged.DATASETS` (e.g. breast_cancer, fair, randhie).
    dataset: str = MISSING
    #: Sample training sets with replacement (Table 2 protocol) or without.
    replace: bool = True


@dataclass
class OpenMLTaskPopulationConfig(LabelNoiseFields):
    """One OpenML task (e.g. of suite 396) as a finite population: its data set and target."""

    kind: str = "openml_task"
    name: str = "openml_task"
    #: The OpenML task id (e.g. one of suite 396's tasks).
    task_id: int = MISSING
    #: Download cache (scikit-learn's default, ~/scikit_learn_data, when null).
    data_home: Optional[str] = None
    #: Rows with missing values: error (refuse the data set) or drop_rows.
    missing: str = "error"
    #: Sample training sets with replacement (Table 2 protocol) or without.
    replace: bool = True


GAUSSIAN_CLASSES = GaussianClassesPopulationConfig()
IMBALANCED_CLASSES = GaussianClassesPopulationConfig(name="imbalanced_classes", separation=3.0, positive_rate=0.1)
SPARSE_CLASSES = GaussianClassesPopulationConfig(name="sparse_classes", p=100, support=5, separation=2.5,
                                                 evaluation_size=20_000)
HASTIE_10_2 = HastiePopulationConfig()
SPARSE_LINEAR = SparseLinearPopulationConfig()
STUDENT_T_LINEAR = StudentTLinearPopulationConfig()
HETEROSCEDASTIC_LINEAR = HeteroscedasticLinearPopulationConfig()
OPENML_TASK = OpenMLTaskPopulationConfig()
PACKAGED = PackagedPopulationConfig()



def _packaged(name: str) -> PackagedPopulationConfig:
    return PackagedPopulationConfig(name=name, dataset=name)


# the data sets of simstudy.populations.packaged.DATASETS, each a preset population=<name>
BREAST_CANCER, WINE, DIGITS, IRIS, DIABETES = (_packaged(n) for n in ("breast_cancer", "wine", "digits", "iris",
                                                                      "diabetes"))
FAIR, ANES96, MODECHOICE, RANDHIE, STAR98, ENGEL, GRUNFELD = (_packaged(n) for n in (
    "fair", "anes96", "modechoice", "randhie", "star98", "engel", "grunfeld"))
