"""Settings of the cv_clt study (Bayle et al. 2020)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from simstudy.studies.settings import StudyConfig, extent, fail, report, validate_level, validate_sizes

__all__ = ["CVCLTConfig", "CV_CLT_REGRESSION"]


def _default_learners() -> Dict[str, Any]:
    return {
        "logreg": {"_target_": "sklearn.linear_model.LogisticRegression", "solver": "newton-cholesky"},
        "tree": {"_target_": "sklearn.tree.DecisionTreeClassifier"},
        "knn": {"_target_": "sklearn.neighbors.KNeighborsClassifier", "n_neighbors": 5},
    }


@dataclass
class CVCLTTargets:
    """Monte Carlo error targets of cv_clt: the half-width at 95% each measure must reach in every
    condition, over every procedure (null: no target); see :mod:`simstudy.studies.targets`."""

    #: Coverage of R_n (half the 95% Wilson interval), e.g. 0.005 for half a point; nested CV,
    #: run on a fixed number of replicates (study.nested_cv_replicates), is left out.
    coverage: Optional[float] = None
    #: Mean interval width (1.96 SE).
    mean_width: Optional[float] = None
    #: Rejection rate of the tests, every comparison (half the 95% Wilson interval).
    rejection_rate: Optional[float] = None
    #: Size of the tests: rejection rate among the H0 replicates (half the 95% Wilson interval).
    size: Optional[float] = None
    #: Power of the tests: rejection rate among the H1 replicates (half the 95% Wilson interval).
    power: Optional[float] = None


@dataclass
class CVCLTConfig(StudyConfig):
    """Bayle et al. (2020): coverage of CV intervals and size/power of CV tests for test error."""

    name: str = "cv_clt"
    sizes: List[int] = extent(default_factory=lambda: [100, 200, 400])
    K: int = 10
    #: Replicates per condition; with targets, the cap per condition.
    replicates: int = extent(200)
    #: Monte Carlo error targets, measure -> half-width at 95% (e.g. study.targets.coverage=0.01):
    #: run in rounds until each is met in every condition (or the cap is reached).
    targets: CVCLTTargets = extent(default_factory=CVCLTTargets)
    #: With targets: the first round's replicates per condition and the step of every count.
    min_replicates: int = extent(100)
    seed: int = 2020
    alpha: float = report(0.05)
    #: Learners by name: a scikit-learn estimator (``_target_`` and parameters) each. More
    #: learners extend a run; a learner's settings are part of its identity.
    learners: Dict[str, Any] = extent(default_factory=_default_learners)
    #: Pairs [A, B] for the one-sided tests of "A better than B". [A, A] compares A with itself
    #: under an independent fitting seed (equal expected error: the tests' size).
    comparisons: List[Any] = extent(default_factory=lambda: [["tree", "tree"], ["knn", "tree"], ["logreg", "tree"]])
    #: J of the repeated train/validation t-tests (n_test = n/K).
    repeated_splits: int = 15
    #: Nested CV runs on the first this-many replicates of each size (0: no nested CV).
    nested_cv_replicates: int = 50
    #: Repetitions R of nested CV (each costs K(K-1)/2 + K fits; the authors' package
    #: defaults to 50; coverage against R is measured in results/nested_cv_coverage).
    nested_cv_repetitions: int = 3
    #: Nested CV variant (:func:`simstudy.inference.nested_cv_interval`): ``paper``, Bates,
    #: Hastie & Tibshirani (2023) Algorithm 1 with the bias correction of their Section 4
    #: (factor 1 + (K-2)/K, SE floor from the outer losses), or ``package``, their R package's
    #: ``nested_cv`` (factor 1 + ((K-2)/K)^1.5, SE floor from the inner losses, Err_CV from the
    #: first ceil(R/5) repetitions).
    nested_cv_method: str = "paper"
    #: Loss: zero_one (the paper's), log_loss, squared or absolute (regression), or the import
    #: path of a function (y, y_hat).
    loss: Any = "zero_one"

    def validate(self) -> None:
        K = self.K
        if isinstance(K, bool) or not isinstance(K, int) or K < 2:
            fail("study.K", K, "use at least 2 folds (3 with nested CV).")
        if self.nested_cv_replicates > 0 and K < 3:
            fail("study.K", K, "nested CV needs K >= 3; raise study.K or set study.nested_cv_replicates=0.")
        validate_sizes(self.sizes, K, 2, "the within-fold and hold-out variances need folds of >= 2 examples")
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or self.replicates < 2:
            fail("study.replicates", self.replicates, "need at least 2 replicates.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            fail("study.seed", self.seed, "use a non-negative integer seed, e.g. study.seed=2020.")
        validate_level(self.alpha)
        if not isinstance(self.repeated_splits, int) or self.repeated_splits < 2:
            fail("study.repeated_splits", self.repeated_splits, "the repeated train/validation t needs J >= 2 (e.g. 15).")
        if not isinstance(self.nested_cv_replicates, int) or self.nested_cv_replicates < 0:
            fail("study.nested_cv_replicates", self.nested_cv_replicates, "use 0 (no nested CV) or more replicates.")
        if not isinstance(self.nested_cv_repetitions, int) or self.nested_cv_repetitions < 1:
            fail("study.nested_cv_repetitions", self.nested_cv_repetitions, "use at least 1 repetition.")
        from simstudy.inference.nested import NESTED_CV_METHODS

        if self.nested_cv_method not in NESTED_CV_METHODS:
            fail("study.nested_cv_method", self.nested_cv_method,
                 f"use one of {list(NESTED_CV_METHODS)} (paper: Bates, Hastie & Tibshirani's Algorithm 1 and "
                 "Section 4; package: their R package's nested_cv).")
        if not self.learners:
            fail("study.learners", {}, "name at least one learner, e.g. study.learners={tree: {_target_: ...}}.")
        from simstudy.learners.dispatch import estimator_from_spec

        for name, spec in self.learners.items():
            estimator_from_spec(spec, f"study.learners.{name}")
        for pair in self.comparisons:
            if len(pair) != 2 or any(p not in self.learners for p in pair):
                fail("study.comparisons", [list(p) for p in self.comparisons],
                     f"each comparison is a pair [A, B] of names in study.learners ({list(self.learners)}); "
                     f"got {list(pair)}.")


def _regression_learners() -> Dict[str, Any]:
    return {
        "ridge": {"_target_": "sklearn.linear_model.Ridge", "alpha": 1.0},
        "knn": {"_target_": "sklearn.neighbors.KNeighborsRegressor", "n_neighbors": 10},
        "tree": {"_target_": "sklearn.tree.DecisionTreeRegressor", "max_depth": 6},
    }


#: The study with regressors and the squared loss (``study=cv_clt_regression``; it is study
#: cv_clt, with other defaults: a preset's learners replace the classifiers rather than being
#: merged with them, as a Hydra override of study.learners would be).
CV_CLT_REGRESSION = CVCLTConfig(learners=_regression_learners(),
                                comparisons=[["tree", "tree"], ["knn", "tree"], ["ridge", "knn"]], loss="squared")
