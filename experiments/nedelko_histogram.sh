#!/usr/bin/env bash
# Nedelko's Figure 4, exact: histogram classifier, 3 cells, N = 12, K = 4, every distribution
# on the grid of step 1/6 over the 6 (cell, class) types (462 distributions).
# Writes results/nedelko_histogram/.
set -euo pipefail
simstudy experiment=nedelko_histogram hydra.run.dir=results/nedelko_histogram "$@"
