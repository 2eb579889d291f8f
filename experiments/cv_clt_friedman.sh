#!/usr/bin/env bash
# Bayle et al. (2020) calibration study for regression (experiment=cv_clt_friedman): Friedman #1,
# squared loss, K = 10, n in {50, 100, 200}, 200 replicates per n; ridge, 10-NN and a depth-6
# regression tree (scikit-learn); nested CV on the first 20 replicates of each n; comparisons
# tree vs tree (independent seed: the tests' size), knn vs tree and ridge vs knn. Truth from a
# fixed sample of 10,000 points (Monte Carlo error reported). Writes results/cv_clt_friedman/.
# Run from the project root.
set -euo pipefail
simstudy experiment=cv_clt_friedman runner.n_jobs=-1 hydra.run.dir=results/cv_clt_friedman "$@"
