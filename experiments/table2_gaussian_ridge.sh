#!/usr/bin/env bash
# Regression Table 2 with ridge (alpha = 1) instead of OLS (experiment=table2_gaussian_linear
# learner=ridge_regressor): same samples and folds as table2_gaussian_ols (the learner is not
# part of the seed), exact truth. Writes results/table2_gaussian_ridge/. Run from the project root.
set -euo pipefail
simstudy experiment=table2_gaussian_linear learner=ridge_regressor runner.n_jobs=-1 \
    hydra.run.dir=results/table2_gaussian_ridge "$@"
