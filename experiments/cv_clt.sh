#!/usr/bin/env bash
# Bayle et al. (2020) calibration study at full scale (experiment=cv_clt): Letter (A-M vs
# N-Z) as a finite population, training sets of n in {100, 200, 400, 800, 1600, 3200} drawn with replacement,
# K = 10, 2,000 replicates per n; logistic regression (newton-cholesky), CART (simstudy's
# numba kernel) and 5-NN (exact population k-NN); nested CV (R = 3 repetitions) on the first
# 500 replicates of each n; comparisons tree vs tree (independent seed: the tests' size),
# knn vs tree and logreg vs tree. Writes results/cv_clt/. Run from the project root.
set -euo pipefail
DATA=${DATA:-../shared/data/letter-recognition.data}
simstudy experiment=cv_clt population.path="$DATA" runner.n_jobs=-1 hydra.run.dir=results/cv_clt "$@"
