#!/usr/bin/env bash
# The CV inference benchmark at full scale (simstudy benchmark --scale full): all 22 interval and
# test procedures on 24 mechanisms, 12 learners and 6 comparisons, every loss of each task,
# n = 50, 100, 200, 500, 400 replicates per cell, by the blocks of the full scale
# (docs/user_guide/benchmark.rst). Letter is read from $DATA instead of its OpenML download.
# Writes $OUT (default $RESULTS/benchmark, RESULTS defaults to results): cells.parquet, cells.csv,
# config.json, manifest.json, data_fingerprints.json and the results site (site/, ignored by git;
# the docs build rewrites it). Resumable: rerunning the same command computes only the missing
# chunks. benchmarks/benchmark_pilot.py predicts its CPU time; the manifest records what it took.
# Run from the project root.
set -euo pipefail
DATA=${DATA:-../shared/data/letter-recognition.data}
OUT=${OUT:-${RESULTS:-results}/benchmark}
simstudy benchmark --scale full --n-jobs "${N_JOBS:-2}" --data letter="$DATA" -o "$OUT" "$@"
