#!/usr/bin/env bash
# Every committed experiment, one after the other, into results/ (or $RESULTS): each
# experiments/<name>.sh writes results/<name>/ (here redirected to $RESULTS/<name>/), then this
# script prints each experiment's wall time and the total. Reference runs of the scikit-learn
# engine (experiments/*_sklearn.sh, e.g. the Letter row with scikit-learn's trees, ~25 minutes) run
# only with WITH_SKLEARN=1; the full CV inference benchmark (experiments/benchmark.sh, about
# 13 CPU hours) only with WITH_BENCHMARK=1, into $RESULTS/benchmark. Extra arguments go to every
# other experiment (e.g. runner.overwrite=true to recompute finished runs). Run from anywhere; paths are relative to the project root.
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-results}
seconds() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
times=()
total_start=$(date +%s%N)
for script in experiments/*.sh; do
    name=$(basename "$script" .sh)
    [[ "$name" == all ]] && continue
    if [[ "$name" == *_sklearn && "${WITH_SKLEARN:-0}" != 1 ]]; then
        times+=("$(printf '%-24s %s' "$name" "skipped (scikit-learn reference run; WITH_SKLEARN=1 runs it)")")
        continue
    fi
    if [[ "$name" == benchmark ]]; then
        if [[ "${WITH_BENCHMARK:-0}" != 1 ]]; then
            times+=("$(printf '%-24s %s' "$name" "skipped (the full benchmark; WITH_BENCHMARK=1 runs it)")")
            continue
        fi
        start=$(date +%s%N)
        OUT="$RESULTS/benchmark" bash "$script"
        times+=("$(printf '%-24s %8s s' "$name" "$(seconds "$start")")")
        continue
    fi
    start=$(date +%s%N)
    bash "$script" hydra.run.dir="$RESULTS/$name" "$@"
    times+=("$(printf '%-24s %8s s' "$name" "$(seconds "$start")")")
done
echo
printf '%s\n' "${times[@]}"
printf '%-24s %8s s\n' "total" "$(seconds "$total_start")"
