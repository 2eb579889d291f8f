#!/usr/bin/env bash
# The Letter row of Table 2 with scikit-learn's own tree (learner.engine=sklearn) instead of
# simstudy's numba CART kernel: a PAIRED engine check of results/table2_letter/, not an
# independent replication: the seeds are the same, so replicate r of size n has the same training
# set and folds in both runs and only the tree code differs. Same protocol as
# experiments/table2_letter.sh; about 20 minutes on 2 cores. When $RESULTS/table2_letter exists
# (RESULTS defaults to results), experiments/table2_engine_check.py then writes the per-replicate
# differences (sklearn - numba: mu_hat, true error, rho, with their standard errors) into
# $RESULTS/table2_letter_sklearn/paired_differences.{csv,md}.
set -euo pipefail
DATA=${DATA:-../shared/data/letter-recognition.data}
OUT=${RESULTS:-results}
simstudy experiment=table2_letter population.path="$DATA" learner.engine=sklearn runner.n_jobs=-1 \
  hydra.run.dir="$OUT/table2_letter_sklearn" "$@"
if [[ -f "$OUT/table2_letter/replicates.parquet" ]]; then
  PYTHONPATH=. "${PYTHON:-python}" experiments/table2_engine_check.py "$OUT/table2_letter" "$OUT/table2_letter_sklearn"
fi
