#!/usr/bin/env bash
# Letter row of Table 2 of Grandvalet & Bengio (2006) at full scale:
# n in {20, 40, 80, 160, 400, 800, 2000}, 10,000 training sets each drawn with replacement
# from the 20,000 Letter rows, 10-fold CV of a default scikit-learn tree, 0-1 loss, exact
# fold-model errors on the whole population (study.truth=true).
# Writes results/table2_letter/. The tree is simstudy's numba CART kernel (learner.engine=auto);
# experiments/table2_letter_sklearn.sh runs the same with scikit-learn's tree.
# Run from the project root. DATA defaults to the copy beside the project; without it, drop
# population.path to download from OpenML (data id 6).
set -euo pipefail
DATA=${DATA:-../shared/data/letter-recognition.data}
simstudy experiment=table2_letter population.path="$DATA" runner.n_jobs=-1 \
  hydra.run.dir=results/table2_letter "$@"
