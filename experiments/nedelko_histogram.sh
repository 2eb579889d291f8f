#!/usr/bin/env bash
# Nedelko's Figure 4, exact: histogram classifier, 3 cells, N = 12, K = 4, every distribution
# on the grid of step 1/6 over the 6 (cell, class) types (462 distributions); a tied or empty
# cell predicts the sample's majority class (study.tie=overall; zero and coin are the other
# rules). Writes results/nedelko_histogram/ (seconds).
set -euo pipefail
simstudy experiment=nedelko_histogram hydra.run.dir=results/nedelko_histogram "$@"
