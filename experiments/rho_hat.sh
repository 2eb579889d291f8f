#!/usr/bin/env bash
# Data-driven rho_hat: size and power of the K-fold CV t with rho_hat = 0, 0.7,
# Nadeau-Bengio (K/(2K-1)), the subsample estimators (subsample_rho, subsample_variance), the CV
# CLT and nested CV, at n = 20 ... 2000 (experiment=rho_hat: 400 replicates, B = 5 splits into
# halves, nested CV on 100 replicates per n) on: Letter (tree, 5-NN, logistic regression), the 2-D
# logistic model (tree, LDA), gaussian_folds (rho = 0.5, the ideal case) and the Gaussian linear
# regression model (OLS, squared loss, exact truth). Each pair writes
# results/rho_hat/<population>_<learner>/; experiments/rho_hat_summary.py then writes
# results/rho_hat/summary.md, goal.csv and figures/. ~10 minutes on 2 cores.
# REGRESSION="population=<name> learner=<name> study.loss=squared" adds another regression run
# named regression.
# Extra arguments go to every run (hydra.run.dir=... sets the parent folder). SIMSTUDY sets the
# command (default: simstudy; e.g. SIMSTUDY="python -m simstudy.cli" from a worktree).
set -euo pipefail
DATA=${DATA:-../shared/data/letter-recognition.data}
SIMSTUDY=${SIMSTUDY:-simstudy}
OUT=results/rho_hat
args=()
for a in "$@"; do
    case "$a" in
        hydra.run.dir=*) OUT=${a#hydra.run.dir=} ;;
        *) args+=("$a") ;;
    esac
done
run() {
    local name=$1
    shift
    $SIMSTUDY experiment=rho_hat runner.n_jobs=-1 "$@" hydra.run.dir="$OUT/$name" ${args[@]+"${args[@]}"}
}
run letter_tree population=letter population.path="$DATA" learner=tree
run letter_knn population=letter population.path="$DATA" learner=knn
run letter_logreg population=letter population.path="$DATA" learner=logistic_regression
run logistic_tree population=logistic learner=tree
run logistic_lda population=logistic learner=lda
run gaussian_folds population=gaussian_folds population.rho=0.5
run gaussian_linear_ols population=gaussian_linear learner=ols study.loss=squared
if [[ -n "${REGRESSION:-}" ]]; then
    # shellcheck disable=SC2086
    run regression $REGRESSION
fi
${PYTHON:-python} experiments/rho_hat_summary.py "$OUT"
