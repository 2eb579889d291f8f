"""One registry of studies, populations, learners and losses.

Every name a user can type (``study=cv_clt``, ``population=letter``, ``learner=knn``,
``study.loss=squared``) is an entry here, and everything that dispatches on a name derives from
these tables: the Hydra config groups (:func:`simstudy.cli.hydra.register_configs`), validation,
building the parts, ``simstudy --help``. Entries name their code by import path
(``"package.module:attribute"``) and are imported on first use, so registering costs nothing
and a worker process imports only what its run needs.

A user's own part needs no entry: pass the object (Python) or its ``_target_`` (CLI/YAML). To
give it a name, register it::

    import simstudy
    simstudy.STUDIES.register("bootstrap632", "examples.bootstrap632.study:Bootstrap632Study",
                              "the .632+ bootstrap against K-fold CV and LOO")
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = ["Entry", "Registry", "STUDIES", "POPULATIONS", "LEARNERS", "LOSSES", "import_path"]


def import_path(path: str) -> Any:
    """The object named by ``"package.module:attribute"`` (or ``"package.module.attribute"``)."""
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Entry:
    """One named part.

    Attributes
    ----------
    name : str
        What users type.
    target : str
        Import path of the implementation (a class, or for presets the kind's class).
    description : str
        One line for ``simstudy --help`` and the README.
    config : str or None
        Import path of the config schema (a dataclass) or of a preset instance of it.
    kind : str
        For presets: the kind they are an instance of (``letter`` is a ``tabular`` population).
    """

    name: str
    target: str
    description: str = ""
    config: str | None = None
    kind: str = ""

    def load(self) -> Any:
        """The implementation (imported on first use)."""
        return import_path(self.target)

    def load_config(self) -> Any:
        """The config schema class or preset instance (None when the entry has none)."""
        return import_path(self.config) if self.config else None


class Registry(Mapping):
    """Named parts of one kind (``registry[name]`` is an :class:`Entry`)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, target: str, description: str = "", config: str | None = None,
                 kind: str = "", replace: bool = False) -> Entry:
        """Add an entry; a second entry of the same name needs ``replace=True``."""
        if name in self._entries and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered; pass replace=True to replace it.")
        entry = Entry(name, target, description, config, kind or name)
        self._entries[name] = entry
        return entry

    def __getitem__(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self._entries))}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def preset(self, name: str, field_name: str, alternative: str) -> dict[str, Any]:
        """The config mapping of the preset ``name``.

        Raises
        ------
        ConfigError
            ``name`` is not registered (the message lists the names and ``alternative``).
        """
        from dataclasses import asdict

        from simstudy.errors import ConfigError

        if name not in self._entries:
            raise ConfigError(f"{field_name}={name!r} is invalid: choose one of {', '.join(self._entries)}, or pass "
                              f"{alternative}.")
        preset = self._entries[name].load_config()
        return asdict(preset) if not isinstance(preset, dict) else dict(preset)

    def describe(self) -> list[tuple[str, str]]:
        """(name, description) of every entry, in registration order."""
        return [(e.name, e.description) for e in self._entries.values()]


STUDIES = Registry("study")
POPULATIONS = Registry("population")
LEARNERS = Registry("learner")
LOSSES = Registry("loss")

# ----------------------------------------------------------------------------- studies
_S = "simstudy.studies"
STUDIES.register("cv_variance", f"{_S}.cv_variance.study:CVVarianceStudy",
                 "Grandvalet & Bengio (2006): rho and the type-I error of CV t-tests (Table 2)",
                 f"{_S}.cv_variance.config:CVVarianceConfig")
STUDIES.register("cv_clt", f"{_S}.cv_clt.study:CVCLTStudy",
                 "Bayle et al. (2020): coverage of CV intervals, size and power of CV tests",
                 f"{_S}.cv_clt.config:CVCLTConfig")
STUDIES.register("cv_clt_regression", f"{_S}.cv_clt.study:CVCLTStudy",
                 "cv_clt with ridge, 10-NN and tree regressors and the squared loss (for regression populations)",
                 f"{_S}.cv_clt.config:CV_CLT_REGRESSION", kind="cv_clt")
STUDIES.register("nedelko_fisher", f"{_S}.nedelko_fisher.study:NedelkoFisherStudy",
                 "Nedelko: LOO vs K-fold vs empirical risk for Fisher's discriminant (Figure 3)",
                 f"{_S}.nedelko_fisher.config:NedelkoFisherConfig")
STUDIES.register("nedelko_histogram", f"{_S}.nedelko_histogram.study:NedelkoHistogramStudy",
                 "Nedelko: the histogram classifier, computed exactly (Figure 4)",
                 f"{_S}.nedelko_histogram.config:NedelkoHistogramConfig")
STUDIES.register("rho_hat", f"{_S}.rho_hat.study:RhoHatStudy",
                 "data-driven rho_hat for the K-fold CV t-test: size and power against n",
                 f"{_S}.rho_hat.config:RhoHatConfig")

# ----------------------------------------------------------------------------- populations
_P = "simstudy.populations"
POPULATIONS.register("logistic", f"{_P}.builders:logistic",
                     "Nedelko's 2-D logistic model (field bayes_error)", f"{_P}.configs:LOGISTIC")
POPULATIONS.register("gaussian_folds", f"{_P}.builders:gaussian_folds",
                     "CV residuals with exchangeable Gaussian fold means of known rho (no learner)",
                     f"{_P}.configs:GAUSSIAN_FOLDS")
POPULATIONS.register("tabular", f"{_P}.builders:tabular",
                     "any data file (population.path) or OpenML id as a finite population",
                     f"{_P}.configs:TABULAR")
POPULATIONS.register("letter", f"{_P}.builders:tabular",
                     "UCI Letter (20,000 x 16), letters A-M vs N-Z; OpenML id 6 or population.path",
                     f"{_P}.configs:LETTER", kind="tabular")
POPULATIONS.register("forest", f"{_P}.builders:tabular",
                     "Forest CoverType (581,012 x 54), class 2 vs the rest",
                     f"{_P}.configs:FOREST", kind="tabular")
POPULATIONS.register("gaussian_linear", f"{_P}.builders:gaussian_linear",
                     "regression: x ~ N(0, Sigma), y = x.beta + sigma eps (exact risk of linear models)",
                     f"{_P}.configs:GAUSSIAN_LINEAR")
POPULATIONS.register("friedman1", f"{_P}.builders:friedman1",
                     "regression: Friedman #1 (truth from a fixed sample, Monte Carlo error reported)",
                     f"{_P}.configs:FRIEDMAN1")
# the benchmark's mechanisms: synthetic kinds with exact (or Monte Carlo) truth, packaged data sets, OpenML tasks
for _name, _kind, _description in (
        ("gaussian_classes", "gaussian_classes", "two Gaussian classes, 5 features (exact 0-1 risk of linear rules)"),
        ("imbalanced_classes", "gaussian_classes", "two Gaussian classes with 10% positives (exact 0-1 risk of linear "
                                                   "rules)"),
        ("sparse_classes", "gaussian_classes", "two Gaussian classes, 100 features, 5 informative (exact 0-1 risk of "
                                               "linear rules)"),
        ("hastie_10_2", "hastie_10_2", "the sphere in 10 dimensions, Hastie et al. 10.2 (exact 0-1 risk of linear "
                                       "rules)"),
        ("sparse_linear", "sparse_linear", "regression: 100 features, 5 non-zero coefficients (exact risk of linear "
                                           "models)"),
        ("student_t_linear", "student_t_linear", "regression: Student t(3) noise (exact squared and absolute risk of "
                                                 "linear models)"),
        ("heteroscedastic_linear", "heteroscedastic_linear", "regression: noise sd sigma sqrt(1 + x_1^2) (exact "
                                                             "squared and absolute risk of linear models)"),
        ("packaged", "packaged", "a data set shipped in scikit-learn or statsmodels (population.dataset)"),
        ("breast_cancer", "packaged", "scikit-learn's breast cancer (569 x 30), malignant vs benign"),
        ("wine", "packaged", "scikit-learn's wine (178 x 13), class_0 vs the rest"),
        ("digits", "packaged", "scikit-learn's digits (1,797 x 64), 5-9 vs 0-4"),
        ("iris", "packaged", "scikit-learn's iris (150 x 4), versicolor vs the rest"),
        ("diabetes", "packaged", "regression: scikit-learn's diabetes (442 x 10)"),
        ("fair", "packaged", "statsmodels' fair (6,366 x 8), any affair vs none"),
        ("anes96", "packaged", "statsmodels' anes96 (944 x 9), expected vote Dole vs Clinton"),
        ("modechoice", "packaged", "statsmodels' modechoice (840 x 10), travel mode chosen or not"),
        ("randhie", "packaged", "regression: statsmodels' randhie (20,190 x 9), outpatient visits"),
        ("star98", "packaged", "regression: statsmodels' star98 (303 x 20), share above the national median"),
        ("engel", "packaged", "regression: statsmodels' engel (235 x 1), food expenditure from income"),
        ("grunfeld", "packaged", "regression: statsmodels' grunfeld (220 x 2), investment"),
        ("openml_task", "openml_task", "one OpenML task (population.task_id), e.g. of suite 396")):
    POPULATIONS.register(_name, f"{_P}.mechanism_builders:{_kind}", _description,
                         f"{_P}.mechanism_configs:{_name.upper()}", kind=_kind)
POPULATIONS.register("custom", f"{_P}.builders:custom",
                     "your own population class: population._target_=package.module.Class",
                     f"{_P}.configs:CUSTOM")

# ----------------------------------------------------------------------------- learners
_L = "simstudy.learners.presets"
for _name, _description in (
        ("tree", "CART, scikit-learn's DecisionTreeClassifier defaults (numba kernel)"),
        ("ridge", "RidgeClassifier (alpha=0: least squares; batched kernel)"),
        ("lda", "LinearDiscriminantAnalysis, lsqr solver (batched kernel)"),
        ("logistic_regression", "LogisticRegression"),
        ("knn", "5-nearest neighbours"),
        ("random_forest", "RandomForestClassifier, 100 trees"),
        ("ols", "regression: LinearRegression (ordinary least squares)"),
        ("ridge_regressor", "regression: Ridge (alpha=1)"),
        ("tree_regressor", "regression: DecisionTreeRegressor"),
        ("knn_regressor", "regression: 5-nearest-neighbours regressor"),
        ("gradient_boosting", "HistGradientBoostingClassifier, 50 rounds of 15-leaf trees"),
        ("gradient_boosting_regressor", "regression: HistGradientBoostingRegressor, 50 rounds of 15-leaf trees"),
        ("random_forest_regressor", "regression: RandomForestRegressor, 50 trees"),
        ("custom", "your own learner object: learner._target_=package.module.Class")):
    LEARNERS.register(_name, "simstudy.learners.dispatch:build_learner", _description, f"{_L}:{_name.upper()}")

# ----------------------------------------------------------------------------- losses
for _name, _description in (("zero_one", "misclassification (0-1) loss"), ("squared", "squared error"),
                            ("absolute", "absolute error"), ("log_loss", "negative log-likelihood of the class"),
                            ("brier", "half the multi-class Brier score (binary: (q_1 - y)^2)")):
    LOSSES.register(_name, f"simstudy.cv.losses:{_name}", _description)
