#!/usr/bin/env bash
# Regression Table 2 (experiment=table2_gaussian_linear): ordinary least squares on the Gaussian
# linear model (p = 5, sigma = 1), squared loss, K = 10, n in {20, 25, 40, 80, 160, 400, 1000},
# 2,000 replicates per n, exact truth of every fold model (closed form). Writes
# results/table2_gaussian_ols/. Run from the project root.
set -euo pipefail
simstudy experiment=table2_gaussian_linear runner.n_jobs=-1 hydra.run.dir=results/table2_gaussian_ols "$@"
