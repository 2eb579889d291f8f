#!/usr/bin/env bash
# The Letter row of Table 2 with scikit-learn's own tree (learner.engine=sklearn) instead of
# simstudy's numba CART kernel: an independent cross-check of results/table2_letter/.
# Same protocol as experiments/table2_letter.sh; about 20 minutes on 2 cores.
set -euo pipefail
DATA=${DATA:-../shared/data/letter-recognition.data}
simstudy experiment=table2_letter population.path="$DATA" learner.engine=sklearn runner.n_jobs=-1 \
  hydra.run.dir=results/table2_letter_sklearn "$@"
