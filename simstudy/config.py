"""Structured-config schemas (registered in Hydra's ConfigStore) and config validation.

The YAML files in ``simstudy/conf`` (also reachable as ``conf/`` at the project root)
extend these schemas, so a misspelt key or a value of the wrong type fails at composition
time. :func:`validate_config` then checks the relations between fields (K <= n, n a
multiple of K, ...) before any computation starts.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

__all__ = [
    "ConfigError",
    "GaussianFoldsPopulationConfig",
    "CVVarianceStudyConfig",
    "LearnerConfig",
    "LogisticPopulationConfig",
    "NedelkoFisherStudyConfig",
    "NedelkoHistogramStudyConfig",
    "RunnerConfig",
    "TabularPopulationConfig",
    "register_configs",
    "validate_config",
]


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the field, the value and the fix."""


# ----------------------------------------------------------------------------- populations
@dataclass
class LogisticPopulationConfig:
    """Nedelko's 2-D logistic model (STUDIES.md section 2)."""

    kind: str = "logistic"
    name: str = "logistic"
    bayes_error: float = 0.2


@dataclass
class GaussianFoldsPopulationConfig:
    """Residuals drawn directly, fold means exchangeable Gaussian with between-block correlation rho."""

    kind: str = "gaussian_folds"
    name: str = "gaussian_folds"
    rho: float = 0.5
    mean: float = 0.0
    sigma: float = 1.0


@dataclass
class TabularPopulationConfig:
    """A finite data set as population (OpenML, CoverType fetcher, or a local file)."""

    kind: str = "tabular"
    name: str = MISSING
    #: "openml", "covtype" or "file"; a non-null ``path`` always means "file".
    source: str = "openml"
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


# ----------------------------------------------------------------------------- learners
@dataclass
class LearnerConfig:
    """A scikit-learn classifier given by ``estimator._target_`` and its parameters."""

    name: str = MISSING
    estimator: Dict[str, Any] = MISSING
    #: Use ``check_input=False`` fits/predictions where the estimator supports them.
    fast_path: bool = True
    #: "auto": simstudy's numba CART for DecisionTreeClassifier settings it reproduces, else
    #: scikit-learn; "numba": require the numba tree; "sklearn": always scikit-learn.
    engine: str = "auto"


# ----------------------------------------------------------------------------- studies
@dataclass
class CVVarianceStudyConfig:
    """Grandvalet & Bengio (2006): rho and the type-I error of CV t-tests (Table 2)."""

    name: str = "cv_variance"
    sizes: List[int] = field(default_factory=lambda: [20, 40, 80, 160])
    K: int = 10
    replicates: int = 1000
    seed: int = 2006
    alpha: float = 0.05
    rho_hats: List[float] = field(default_factory=lambda: [round(0.1 * i, 1) for i in range(10)])
    #: Compute each fold model's exact error on the population (needs a finite population).
    truth: bool = False
    #: H0 value of the t-tests: "auto" (exact mean error when truth=true, else mean of mu_hat),
    #: "exact" or "mean_cv".
    mu_true: str = "auto"
    #: Paper row to compare with in table2.md: "letter", "forest" or null.
    paper: Optional[str] = None


@dataclass
class NedelkoFisherStudyConfig:
    """Nedelko: LOO vs K-fold vs empirical risk (and R_hat, .632, .632+) for Fisher's discriminant."""

    name: str = "nedelko_fisher"
    #: N: an integer or a list of integers (each a multiple of K).
    sample_size: Any = field(default_factory=lambda: [20, 30, 50])
    #: R0 grid: a float or a list of floats in (0, 0.5).
    bayes_error: Any = field(default_factory=lambda: [0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3,
                                                      0.35, 0.4, 0.45, 0.48])
    replicates: int = 10000
    K: int = 5
    #: Bootstrap resamples for the .632 and .632+ estimates (0: skip them).
    bootstrap: int = 50
    seed: int = 2013
    #: R_hat: the family grid and samples per grid point used to find the maximal optimism.
    rhat_grid: List[float] = field(default_factory=lambda: [round(0.01 + 0.02 * i, 2) for i in range(25)])
    #: Calibration samples per family member for R_hat (0: skip R_hat).
    rhat_calibration_replicates: int = 4000
    #: "mean_curve" or "conditional_max" (see simstudy.studies.risk_estimates.optimism_table).
    rhat_method: str = "mean_curve"
    rhat_min_count: int = 30


@dataclass
class NedelkoHistogramStudyConfig:
    """Nedelko's Figure 4: the histogram classifier computed exactly over a grid of distributions."""

    name: str = "nedelko_histogram"
    cells: int = 3
    sample_size: int = 12
    K: int = 4
    #: Grid over the simplex of (cell, class) distributions: coordinates in multiples of 1/grid_steps.
    grid_steps: int = 6
    seed: int = 0  # unused (exact computation); kept for a uniform manifest


def _default_clt_learners() -> Dict[str, Any]:
    return {
        "logreg": {"_target_": "sklearn.linear_model.LogisticRegression", "solver": "newton-cholesky"},
        "tree": {"_target_": "sklearn.tree.DecisionTreeClassifier"},
        "knn": {"_target_": "sklearn.neighbors.KNeighborsClassifier", "n_neighbors": 5},
    }


@dataclass
class CVCLTStudyConfig:
    """Bayle et al. (2020): coverage of CV intervals and size/power of CV tests for test error."""

    name: str = "cv_clt"
    sizes: List[int] = field(default_factory=lambda: [100, 200, 400])
    K: int = 10
    replicates: int = 200
    seed: int = 2020
    alpha: float = 0.05
    #: Learners by name: a scikit-learn classifier (``_target_`` and parameters) each.
    learners: Dict[str, Any] = field(default_factory=_default_clt_learners)
    #: Pairs [A, B] for the one-sided tests of "A better than B". [A, A] compares A with itself
    #: under an independent fitting seed (equal expected error: the tests' size).
    comparisons: List[Any] = field(default_factory=lambda: [["tree", "tree"], ["knn", "tree"], ["logreg", "tree"]])
    #: J of the repeated train/validation t-tests (n_test = n/K).
    repeated_splits: int = 15
    #: Nested CV runs on the first this-many replicates of each size (0: no nested CV).
    nested_cv_replicates: int = 50
    #: Repetitions R of nested CV (each costs K(K-1)/2 + K fits).
    nested_cv_repetitions: int = 3


# ----------------------------------------------------------------------------- runner
@dataclass
class RunnerConfig:
    """How replicates are dealt out: joblib over chunks of replicates."""

    #: Worker processes/threads (-1: all cores).
    n_jobs: int = -1
    #: Replicates per chunk (one joblib task).
    chunk_size: int = 250
    #: "loky" (processes), "threading", "sequential" or "dask" (dask.distributed).
    backend: str = "loky"
    #: Show a progress bar on a terminal (log lines every 10% otherwise).
    progress: bool = True
    #: "record" a failing replicate and go on, or "raise" at the first failure.
    on_error: str = "record"
    #: Abort when more than this share of the replicates done so far failed.
    max_failure_rate: float = 0.2
    #: dask: address of a running scheduler (e.g. tcp://10.0.0.5:8786); null starts a LocalCluster.
    scheduler_address: Optional[str] = None
    #: Run only this replicate index of each condition (debugging a failure); no shards.
    only_replicate: Optional[int] = None
    #: Discard an existing run of a different configuration in the same run directory.
    overwrite: bool = False


@dataclass
class Config:
    population: Any = MISSING
    learner: LearnerConfig = MISSING
    study: Any = MISSING
    runner: RunnerConfig = field(default_factory=RunnerConfig)


def register_configs() -> None:
    """Register the schemas with Hydra's ConfigStore (idempotent)."""
    cs = ConfigStore.instance()
    cs.store(name="config_schema", node=Config)
    cs.store(group="population", name="logistic_schema", node=LogisticPopulationConfig)
    cs.store(group="population", name="tabular_schema", node=TabularPopulationConfig)
    cs.store(group="population", name="gaussian_folds_schema", node=GaussianFoldsPopulationConfig)
    cs.store(group="learner", name="learner_schema", node=LearnerConfig)
    cs.store(group="study", name="cv_variance_schema", node=CVVarianceStudyConfig)
    cs.store(group="study", name="nedelko_fisher_schema", node=NedelkoFisherStudyConfig)
    cs.store(group="study", name="nedelko_histogram_schema", node=NedelkoHistogramStudyConfig)
    cs.store(group="study", name="cv_clt_schema", node=CVCLTStudyConfig)
    cs.store(group="runner", name="runner_schema", node=RunnerConfig)


# ----------------------------------------------------------------------------- validation
_BACKENDS = ("loky", "threading", "sequential", "dask")
_ON_ERROR = ("record", "raise")


def _fail(field_name: str, value: Any, fix: str) -> None:
    raise ConfigError(f"{field_name}={value!r} is invalid: {fix}")


def _validate_sizes(sizes, K: int, equal_blocks_reason: str, two_per_fold_reason: str) -> None:
    """study.sizes: non-empty, distinct, each a multiple of K with at least 2 points per fold."""
    if len(sizes) == 0:
        _fail("study.sizes", list(sizes), "give at least one training-set size, e.g. study.sizes=[20,400].")
    for n in sizes:
        if n < K:
            _fail("study.sizes", list(sizes), f"every size must be >= K={K} (got n={n}); raise the sizes or lower study.K.")
        if n % K:
            _fail("study.sizes", list(sizes),
                  f"n={n} is not a multiple of K={K}; {equal_blocks_reason}: use n={n - n % K} or n={n + K - n % K}.")
        if n // K < 2:
            _fail("study.sizes", list(sizes),
                  f"n={n} with K={K} gives folds of {n // K} example(s); {two_per_fold_reason}.")
    if len(set(sizes)) != len(sizes):
        _fail("study.sizes", list(sizes), "remove the repeated sizes.")


def _validate_study_cv_variance(study: DictConfig) -> None:
    K = study.K
    if not isinstance(K, int) or K < 2:
        _fail("study.K", K, "K-fold cross-validation needs K >= 2 (for example study.K=10).")
    _validate_sizes(study.sizes, K, "the Grandvalet-Bengio estimators assume equal blocks",
                    "theta2/theta4 need m = n/K >= 2")
    if study.replicates < 3:
        _fail("study.replicates", study.replicates, "need at least 3 replicates to estimate Var(mu_hat).")
    if not 0 < study.alpha < 1:
        _fail("study.alpha", study.alpha, "the test level must lie in (0, 1), e.g. 0.05.")
    for r in study.rho_hats:
        if not 0 <= r < 1:
            _fail("study.rho_hats", list(study.rho_hats), f"each rho_hat must lie in [0, 1); got {r}.")
    if study.mu_true not in ("auto", "exact", "mean_cv"):
        _fail("study.mu_true", study.mu_true, "use 'auto', 'exact' or 'mean_cv'.")
    if study.mu_true == "exact" and not study.truth:
        _fail("study.mu_true", study.mu_true, "'exact' needs the fold models' exact errors: set study.truth=true.")
    if study.paper not in (None, "letter", "forest"):
        _fail("study.paper", study.paper, "use 'letter', 'forest' or null.")


def _validate_study_cv_clt(study: DictConfig, population: DictConfig) -> None:
    if population.kind != "tabular":
        _fail("population", population.get("name", population.kind),
              "study=cv_clt needs the exact error of every model, i.e. a finite population: use population=letter "
              "(or population=tabular with population.path=...).")
    K = study.K
    if K < 2:
        _fail("study.K", K, "use at least 2 folds (3 with nested CV).")
    if study.nested_cv_replicates > 0 and K < 3:
        _fail("study.K", K, "nested CV needs K >= 3; raise study.K or set study.nested_cv_replicates=0.")
    _validate_sizes(study.sizes, K, "the fold statistics assume equal folds",
                    "the within-fold and hold-out variances need m = n/K >= 2")
    if study.replicates < 2:
        _fail("study.replicates", study.replicates, "need at least 2 replicates.")
    if not 0 < study.alpha < 1:
        _fail("study.alpha", study.alpha, "the level must lie in (0, 1), e.g. 0.05.")
    if study.repeated_splits < 2:
        _fail("study.repeated_splits", study.repeated_splits, "the repeated train/validation t needs J >= 2 (e.g. 15).")
    if study.nested_cv_replicates < 0 or study.nested_cv_repetitions < 1:
        _fail("study.nested_cv_replicates" if study.nested_cv_replicates < 0 else "study.nested_cv_repetitions",
              study.nested_cv_replicates if study.nested_cv_replicates < 0 else study.nested_cv_repetitions,
              "use nested_cv_replicates >= 0 and nested_cv_repetitions >= 1.")
    if not study.learners:
        _fail("study.learners", {}, "name at least one learner, e.g. study.learners={tree: {_target_: ...}}.")
    for name, spec in study.learners.items():
        _validate_learner(OmegaConf.create({"estimator": spec}), where=f"study.learners.{name}")
    for pair in study.comparisons:
        if len(pair) != 2 or any(p not in study.learners for p in pair):
            _fail("study.comparisons", OmegaConf.to_container(study.comparisons),
                  f"each comparison is a pair [A, B] of names in study.learners ({list(study.learners)}); "
                  f"got {list(pair)}.")


def _as_list(value):
    return list(value) if OmegaConf.is_list(value) or isinstance(value, (list, tuple)) else [value]


def _validate_study_nedelko_fisher(study: DictConfig) -> None:
    K = study.K
    if not isinstance(K, int) or K < 2:
        _fail("study.K", K, "K-fold CV needs K >= 2 (Nedelko uses K=5).")
    sizes = _as_list(study.sample_size)
    if not sizes:
        _fail("study.sample_size", sizes, "give at least one sample size, e.g. study.sample_size=20.")
    for N in sizes:
        if not isinstance(N, int) or N < 2 * K or N % K:
            _fail("study.sample_size", sizes, f"each N must be an integer multiple of K={K} with N >= 2K (got {N!r}).")
    grid = _as_list(study.bayes_error)
    if not grid:
        _fail("study.bayes_error", grid, "give at least one Bayes error, e.g. study.bayes_error=[0.1,0.3].")
    for r0 in grid + list(study.rhat_grid):
        if not isinstance(r0, (int, float)) or not 0 < r0 < 0.5:
            _fail("study.bayes_error" if r0 in grid else "study.rhat_grid", grid if r0 in grid else list(study.rhat_grid),
                  f"Bayes errors must lie strictly between 0 and 0.5 (got {r0!r}).")
    if study.replicates < 2:
        _fail("study.replicates", study.replicates, "need at least 2 samples per point.")
    if study.bootstrap < 0:
        _fail("study.bootstrap", study.bootstrap, "use 0 (no bootstrap estimates) or a positive number of resamples.")
    if study.rhat_method not in ("mean_curve", "conditional_max"):
        _fail("study.rhat_method", study.rhat_method, "use 'mean_curve' or 'conditional_max'.")
    if 0 < study.rhat_calibration_replicates < study.rhat_min_count:
        _fail("study.rhat_calibration_replicates", study.rhat_calibration_replicates,
              f"must be 0 (no R_hat) or at least study.rhat_min_count={study.rhat_min_count}.")


def _validate_study_nedelko_histogram(study: DictConfig) -> None:
    if study.cells < 1:
        _fail("study.cells", study.cells, "need at least one cell.")
    if study.K < 2 or study.sample_size % study.K or study.sample_size < 2 * study.K:
        _fail("study.sample_size", study.sample_size,
              f"must be a multiple of study.K={study.K} with at least two examples per fold.")
    if study.sample_size > 20 or study.cells > 5:
        _fail("study.sample_size", study.sample_size,
              "exact enumeration grows exponentially: keep sample_size <= 20 and cells <= 5.")
    if study.grid_steps < 1:
        _fail("study.grid_steps", study.grid_steps, "use a positive number of grid steps (6 gives step 1/6).")


def _validate_learner(learner: DictConfig, where: str = "learner") -> None:
    est = learner.get("estimator")
    target = est.get("_target_") if est is not None else None
    if not target:
        _fail(f"{where}.estimator._target_", target,
              "name a scikit-learn classifier class, e.g. sklearn.tree.DecisionTreeClassifier.")
    module_name, _, attr = str(target).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError):
        _fail(f"{where}.estimator._target_", target,
              "no such class; give the full import path, e.g. sklearn.linear_model.LogisticRegression.")
    from hydra.utils import instantiate
    from sklearn.base import is_classifier

    if not isinstance(cls, type):
        _fail(f"{where}.estimator._target_", target, "this is not a class; name a scikit-learn classifier class.")
    try:
        estimator = instantiate(OmegaConf.to_container(est, resolve=True), _convert_="all")
    except Exception as exc:
        _fail(f"{where}.estimator", OmegaConf.to_container(est, resolve=True),
              f"cannot build it ({type(exc).__cause__ or exc}); check the parameter names.")
    if not is_classifier(estimator):
        _fail(f"{where}.estimator._target_", target, "this is not a scikit-learn classifier (0-1 loss needs one).")
    if hasattr(estimator, "_validate_params"):
        try:
            estimator._validate_params()
        except Exception as exc:
            _fail(f"{where}.estimator", OmegaConf.to_container(est, resolve=True), str(exc))
    engine = learner.get("engine", "auto")
    if engine not in ("auto", "numba", "sklearn"):
        _fail(f"{where}.engine", engine, "choose auto, numba or sklearn.")
    if engine == "numba":
        from simstudy.learners import fast_kernel

        kernel, why = fast_kernel(estimator)
        if kernel is None:
            _fail(f"{where}.engine", engine, f"no fast kernel reproduces this estimator ({why}); use auto or sklearn.")


def _validate_population(population: DictConfig) -> None:
    kind = population.get("kind")
    if kind == "logistic":
        if not 0 < population.bayes_error < 0.5:
            _fail("population.bayes_error", population.bayes_error, "the Bayes error must lie in (0, 0.5).")
    elif kind == "tabular":
        if population.path is None and population.source not in ("openml", "covtype"):
            _fail("population.source", population.source,
                  "use 'openml' (with population.openml_id), 'covtype', or set population.path to a local file.")
        if population.path is None and population.source == "openml" and population.openml_id is None:
            _fail("population.openml_id", None, "set the OpenML data id (Letter is 6) or population.path.")
    elif kind == "gaussian_folds":
        if not 0 <= population.rho < 1:
            _fail("population.rho", population.rho, "the between-block correlation must lie in [0, 1).")
        if population.sigma <= 0:
            _fail("population.sigma", population.sigma, "use a positive residual standard deviation.")
    else:
        _fail("population.kind", kind,
              "unknown population; choose population=logistic, letter, forest, tabular or gaussian_folds.")


def validate_config(cfg: DictConfig) -> None:
    """Check a composed configuration; raise :class:`ConfigError` naming field, value and fix."""
    if cfg.study.name == "cv_variance":
        _validate_population(cfg.population)
        if cfg.population.kind != "gaussian_folds":  # residual populations need no learner
            _validate_learner(cfg.learner)
        _validate_study_cv_variance(cfg.study)
    elif cfg.study.name == "nedelko_fisher":  # its own population family and learner
        _validate_study_nedelko_fisher(cfg.study)
    elif cfg.study.name == "nedelko_histogram":
        _validate_study_nedelko_histogram(cfg.study)
    elif cfg.study.name == "cv_clt":
        _validate_population(cfg.population)
        _validate_study_cv_clt(cfg.study, cfg.population)
    else:
        _fail("study.name", cfg.study.name,
              "unknown study; choose study=cv_variance, cv_clt, nedelko_fisher or nedelko_histogram.")
    r = cfg.runner
    if r.backend not in _BACKENDS:
        _fail("runner.backend", r.backend, f"choose one of {list(_BACKENDS)}.")
    if r.n_jobs == 0 or r.n_jobs < -1:
        _fail("runner.n_jobs", r.n_jobs, "use a positive number of workers or -1 for all cores.")
    if r.chunk_size < 1:
        _fail("runner.chunk_size", r.chunk_size, "use a positive number of replicates per chunk, e.g. 250.")
    if r.on_error not in _ON_ERROR:
        _fail("runner.on_error", r.on_error, f"choose one of {list(_ON_ERROR)}.")
    if not 0 <= r.max_failure_rate <= 1:
        _fail("runner.max_failure_rate", r.max_failure_rate, "use a share in [0, 1], e.g. 0.2.")
    if r.only_replicate is not None and r.only_replicate < 0:
        _fail("runner.only_replicate", r.only_replicate, "use a replicate index >= 0.")
    if r.backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            _fail("runner.backend", r.backend, "install dask.distributed first: pip install 'simstudy[dask]'.")


def to_container(cfg: DictConfig) -> dict:
    """Resolved plain-dict copy of a config (for manifests and hashing)."""
    return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)  # type: ignore[return-value]
