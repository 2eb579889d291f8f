#!/usr/bin/env bash
# Nedelko's Figure 3 at full scale: Fisher's discriminant on the 2-D logistic model,
# N = 20, 30, 50; 13 Bayes errors in (0, 0.5); 10,000 samples per point; LOO, 5-fold CV,
# empirical risk, R_hat (Nedelko's worst-case bias correction), .632 and .632+ bootstrap
# (B = 50); ties between ERM thresholds broken at random, every sample refitted under the other
# tie rules for the sensitivity table. Writes results/nedelko_fisher/ (746 s of worker CPU).
set -euo pipefail
simstudy experiment=nedelko_fisher hydra.run.dir=results/nedelko_fisher "$@"
