"""The benchmark's grids by scale: ``ci`` (seconds, the tests), ``quick`` (minutes) and ``full``.

A scale names the procedures, mechanisms, learners (and learner pairs of the tests), losses,
sample sizes and replicates; :func:`simstudy.studies.benchmark.run_benchmark` takes any of them
and overrides each part by keyword. Learners run on the mechanisms of their task only, and
losses on their task (classification: zero_one, log_loss, brier; regression: squared,
absolute); a learner without class probabilities is left out of the probability losses.

A scale's grid is the product of its parts unless it has ``blocks`` (:class:`Block`): then a
learner (or comparison) named in some block runs only on the mechanisms, losses and sizes of its
blocks, and each of its cells runs the procedures of the blocks that hold it (their union); a
learner named in no block keeps the product grid. The ``full`` scale uses blocks to spend its
fits where they are cheap: every procedure on the fast linear learners at small n, the costly
learners (forests, boosting, nearest neighbours) on a few small populations with the cheaper
designs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SCALES", "Block", "Scale", "cell_procedures", "TASK_LOSSES", "RESIDUAL_LEARNER", "RESIDUAL_LOSS",
           "RESIDUAL_PAIR"]

#: The losses of each task.
TASK_LOSSES = {"classification": ("zero_one", "log_loss", "brier"), "regression": ("squared", "absolute")}
#: Learner and loss names of a residual mechanism (gaussian_folds: the CV losses are drawn directly, no model);
#: its comparison cell "none-vs-none" reads the drawn losses as loss differences (the tests' null holds
#: when the population's mean is 0, its default).
RESIDUAL_LEARNER, RESIDUAL_LOSS = "none", "residual"
RESIDUAL_PAIR = f"{RESIDUAL_LEARNER}-vs-{RESIDUAL_LEARNER}"


@dataclass(frozen=True)
class Block:
    """Where some learners run in a scale: their mechanisms, losses (empty: every loss of the task),
    sizes and procedures (empty: every procedure of the scale)."""

    learners: tuple[str, ...]
    mechanisms: tuple[str, ...]
    sizes: tuple[int, ...]
    losses: tuple[str, ...] = ()
    procedures: tuple[str, ...] = ()

    def holds(self, mechanism: str, learner: str, loss: str, n: int) -> bool:
        return (learner in self.learners and mechanism in self.mechanisms and int(n) in self.sizes
                and (not self.losses or loss in self.losses))


def cell_procedures(blocks, mechanism: str, learner: str, loss: str, n: int, procedures) -> tuple[str, ...]:
    """The procedures a data cell runs under ``blocks`` (in the order of ``procedures``); empty when
    the learner is named in some block and no block holds the cell (the cell is not in the grid)."""
    named = [b for b in blocks if learner in b.learners]
    if not named:
        return tuple(procedures)
    wanted = set()
    for block in named:
        if block.holds(mechanism, learner, loss, n):
            wanted.update(block.procedures or procedures)
    return tuple(p for p in procedures if p in wanted)


@dataclass(frozen=True)
class Scale:
    """One grid of the benchmark (see the module docstring).

    ``comparisons`` are learner pairs "A-vs-B" of the tests; "A-vs-A" compares A with itself under
    an independent fitting stream (equal true errors: the tests' size). ``truth_replicates`` is
    the number of independent samples behind each Err_n truth. ``blocks`` restrict the product
    grid (see the module docstring).
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
    blocks: tuple[Block, ...] = ()


_CLASSIFICATION_LOSSES = TASK_LOSSES["classification"]
_ALL_LOSSES = _CLASSIFICATION_LOSSES + TASK_LOSSES["regression"]
_ALL_PROCEDURES = (
    "holdout_wald", "holdout_wilson", "kfold_t", "kfold_t_rho0.7", "kfold_t_nadeau_bengio_rho",
    "kfold_t_subsample_rho", "kfold_t_subsample_rho_satterthwaite", "kfold_t_subsample_variance",
    "cv_clt_within_fold", "cv_clt_all_pairs", "loo_clt", "repeated_splits_t", "nadeau_bengio_t", "conservative_z",
    "bouckaert_frank", "five_by_two_t", "five_by_two_f", "nested_cv", "bootstrap_oob", "bootstrap_632plus",
    "bootstrap_location_shifted", "bayesian_correlated_t")

#: The designs of at most 15 fits (hold-out, 10-fold, 15 repeated splits, 5x2): 36 fits per replicate.
_CHEAP_PROCEDURES = (
    "holdout_wald", "holdout_wilson", "kfold_t", "kfold_t_rho0.7", "kfold_t_nadeau_bengio_rho", "cv_clt_within_fold",
    "cv_clt_all_pairs", "repeated_splits_t", "nadeau_bengio_t", "five_by_two_t", "five_by_two_f")
#: With the 10-fold halves (110 fits) and 10x10-fold (100 fits) designs.
_MID_PROCEDURES = _CHEAP_PROCEDURES + (
    "kfold_t_subsample_rho", "kfold_t_subsample_rho_satterthwaite", "kfold_t_subsample_variance", "bouckaert_frank",
    "bayesian_correlated_t")
_CLASSIFICATION = ("logistic", "gaussian_classes", "imbalanced_classes", "sparse_classes", "hastie_10_2",
                   "breast_cancer", "wine", "digits", "iris", "fair", "anes96", "modechoice", "letter")
_REGRESSION = ("gaussian_linear", "friedman1", "sparse_linear", "student_t_linear", "heteroscedastic_linear",
               "diabetes", "randhie", "star98", "engel", "grunfeld")
#: Populations on which the linear learners fit and score in under ~2 ms at n = 500.
_CHEAP_CLASSIFICATION = ("logistic", "gaussian_classes", "imbalanced_classes", "hastie_10_2", "wine", "iris", "fair",
                         "anes96", "modechoice")
_CHEAP_REGRESSION = ("gaussian_linear", "student_t_linear", "heteroscedastic_linear", "diabetes", "randhie", "star98",
                     "engel", "grunfeld")
_LINEAR = ("lda", "logistic_regression", "ols", "ridge_regressor")
#: The hold-out, 10-fold and 5x2 designs: 21 fits per replicate.
_KFOLD_PROCEDURES = (
    "holdout_wald", "holdout_wilson", "kfold_t", "kfold_t_rho0.7", "kfold_t_nadeau_bengio_rho", "cv_clt_within_fold",
    "cv_clt_all_pairs", "five_by_two_t", "five_by_two_f")
_CHEAP = _CHEAP_CLASSIFICATION + _CHEAP_REGRESSION
#: Populations where the linear learners cost more (many features or a large population to score).
_COSTLY_FOR_LINEAR = ("sparse_classes", "breast_cancer", "digits", "letter", "friedman1", "sparse_linear")
_SMALL_POPULATIONS = ("logistic", "wine", "iris", "fair", "anes96", "modechoice", "diabetes", "randhie", "star98",
                      "engel", "grunfeld")
#: Sized to run on 2 cores within a working day: its cost per cell is predicted by a pilot of the real cells
#: (benchmarks/benchmark_pilot.py, records in results/benchmarks/benchmark_pilot.jsonl); the forests and
#: boosting run at their presets' sizes.
_FULL_BLOCKS = (
    Block(_LINEAR, _CHEAP, (50, 100)),
    Block(_LINEAR, _CHEAP, (200,), procedures=_MID_PROCEDURES),
    Block(_LINEAR, _CHEAP, (500,), losses=("zero_one", "log_loss", "squared"), procedures=_CHEAP_PROCEDURES),
    Block(("logistic_regression", "ridge_regressor"), _COSTLY_FOR_LINEAR, (50, 200),
          losses=("zero_one", "log_loss", "squared"), procedures=_CHEAP_PROCEDURES),
    Block(("tree", "tree_regressor"), _SMALL_POPULATIONS, (50, 100), procedures=_MID_PROCEDURES),
    Block(("knn", "knn_regressor"), ("iris", "modechoice", "diabetes", "star98", "grunfeld"), (50, 100),
          procedures=_MID_PROCEDURES),
    Block(("random_forest", "random_forest_regressor"), ("iris", "wine", "engel", "grunfeld"), (50,),
          losses=("zero_one", "brier", "squared"), procedures=_CHEAP_PROCEDURES),
    Block(("gradient_boosting", "gradient_boosting_regressor"), ("wine", "diabetes"), (50,),
          losses=("zero_one", "squared"), procedures=_KFOLD_PROCEDURES),
    Block(("logistic_regression-vs-tree", "ols-vs-tree_regressor"), ("logistic", "fair", "diabetes", "grunfeld"),
          (50, 100), procedures=_MID_PROCEDURES),
    Block(("knn-vs-lda", "knn_regressor-vs-ridge_regressor"), ("iris", "star98", "grunfeld"), (50, 100),
          losses=("zero_one", "squared"), procedures=_MID_PROCEDURES),
    Block(("random_forest-vs-random_forest", "random_forest_regressor-vs-random_forest_regressor"),
          ("iris", "grunfeld"), (50,), losses=("zero_one", "squared"), procedures=_CHEAP_PROCEDURES),
)

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
        procedures=_ALL_PROCEDURES, mechanisms=("gaussian_folds",) + _CLASSIFICATION + _REGRESSION,
        learners=("tree", "lda", "logistic_regression", "knn", "random_forest", "gradient_boosting",
                                 "ols", "ridge_regressor", "tree_regressor", "knn_regressor", "random_forest_regressor",
                                 "gradient_boosting_regressor"),
        comparisons=("random_forest-vs-random_forest", "logistic_regression-vs-tree", "knn-vs-lda",
                     "random_forest_regressor-vs-random_forest_regressor", "ols-vs-tree_regressor",
                     "knn_regressor-vs-ridge_regressor"),
        losses=_ALL_LOSSES, sizes=(50, 100, 200, 500), replicates=400, truth_replicates=400,
        blocks=_FULL_BLOCKS,
        description="every procedure, mechanism, learner and loss; the costly learners and designs on the "
                    "cheaper cells (blocks)"),
}
