"""The benchmark's grids by scale: ``ci`` (seconds, the tests), ``quick`` (minutes) and ``full``.

A scale names the procedures, mechanisms, learners (and learner pairs of the tests), losses,
sample sizes and replicates; :func:`simstudy.studies.benchmark.run_benchmark` takes any of them
and overrides each part by keyword. Learners run on the mechanisms of their task only, and
losses on their task (classification: zero_one, log_loss, brier; regression: squared,
absolute); a learner without class probabilities is left out of the probability losses.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SCALES", "Scale", "TASK_LOSSES", "RESIDUAL_LEARNER", "RESIDUAL_LOSS", "RESIDUAL_PAIR"]

#: The losses of each task.
TASK_LOSSES = {"classification": ("zero_one", "log_loss", "brier"), "regression": ("squared", "absolute")}
#: Learner and loss names of a residual mechanism (gaussian_folds: the CV losses are drawn directly, no model);
#: its comparison cell "none-vs-none" reads the drawn losses as loss differences (the tests' null holds
#: when the population's mean is 0, its default).
RESIDUAL_LEARNER, RESIDUAL_LOSS = "none", "residual"
RESIDUAL_PAIR = f"{RESIDUAL_LEARNER}-vs-{RESIDUAL_LEARNER}"


@dataclass(frozen=True)
class Scale:
    """One grid of the benchmark (see the module docstring).

    ``comparisons`` are learner pairs "A-vs-B" of the tests; "A-vs-A" compares A with itself under
    an independent fitting stream (equal true errors: the tests' size). ``truth_replicates`` is
    the number of independent samples behind each Err_n truth.
    """

    procedures: tuple[str, ...]
    mechanisms: tuple[str, ...]
    learners: tuple[str, ...]
    comparisons: tuple[str, ...]
    losses: tuple[str, ...]
    sizes: tuple[int, ...]
    replicates: int
    truth_replicates: int
    description: str = ""
    extra: dict = field(default_factory=dict)


_CLASSIFICATION_LOSSES = TASK_LOSSES["classification"]
_ALL_LOSSES = _CLASSIFICATION_LOSSES + TASK_LOSSES["regression"]
_ALL_PROCEDURES = (
    "holdout_wald", "holdout_wilson", "kfold_t", "kfold_t_rho0.7", "kfold_t_nadeau_bengio_rho",
    "kfold_t_subsample_rho", "kfold_t_subsample_rho_satterthwaite", "kfold_t_subsample_variance",
    "cv_clt_within_fold", "cv_clt_all_pairs", "loo_clt", "repeated_splits_t", "nadeau_bengio_t", "conservative_z",
    "bouckaert_frank", "five_by_two_t", "five_by_two_f", "nested_cv", "bootstrap_oob", "bootstrap_632plus",
    "bootstrap_location_shifted", "bayesian_correlated_t")

SCALES = {
    "ci": Scale(
        procedures=("holdout_wald", "kfold_t", "kfold_t_rho0.7", "cv_clt_all_pairs", "nadeau_bengio_t"),
        mechanisms=("gaussian_folds", "gaussian_linear", "hastie_10_2"),
        learners=("ols", "ridge"), comparisons=("ols-vs-ridge_regressor",), losses=("zero_one", "squared"),
        sizes=(40,), replicates=60, truth_replicates=20,
        description="a few seconds: the tests' scale"),
    "quick": Scale(
        procedures=("holdout_wald", "holdout_wilson", "kfold_t", "kfold_t_rho0.7", "kfold_t_nadeau_bengio_rho",
                    "kfold_t_subsample_rho", "cv_clt_within_fold", "cv_clt_all_pairs", "repeated_splits_t",
                    "nadeau_bengio_t", "five_by_two_t", "five_by_two_f", "bootstrap_oob", "bootstrap_632plus"),
        mechanisms=("gaussian_folds", "hastie_10_2", "breast_cancer", "gaussian_linear", "heteroscedastic_linear",
                    "diabetes"),
        learners=("ridge", "ols", "ridge_regressor"),
        comparisons=("ols-vs-ridge_regressor",),
        losses=("zero_one", "squared"),
        sizes=(50, 100), replicates=200, truth_replicates=200,
        description="minutes on 2 cores: every kind of design and formula, the fast linear learners"),
    "full": Scale(
        procedures=_ALL_PROCEDURES,
        mechanisms=("gaussian_folds", "logistic", "gaussian_classes", "imbalanced_classes", "sparse_classes",
                    "hastie_10_2", "breast_cancer", "wine", "digits", "iris", "fair", "anes96", "modechoice",
                    "letter", "gaussian_linear", "friedman1", "sparse_linear", "student_t_linear",
                    "heteroscedastic_linear", "diabetes", "randhie", "star98", "engel", "grunfeld"),
        learners=("tree", "lda", "logistic_regression", "knn", "random_forest", "gradient_boosting",
                  "ols", "ridge_regressor", "tree_regressor", "knn_regressor", "random_forest_regressor",
                  "gradient_boosting_regressor"),
        comparisons=("random_forest-vs-random_forest", "logistic_regression-vs-tree", "knn-vs-lda",
                     "random_forest_regressor-vs-random_forest_regressor", "ols-vs-tree_regressor",
                     "knn_regressor-vs-ridge_regressor"),
        losses=_ALL_LOSSES, sizes=(50, 100, 200, 500), replicates=500, truth_replicates=500,
        description="every procedure, mechanism, learner and loss at four sizes"),
}
