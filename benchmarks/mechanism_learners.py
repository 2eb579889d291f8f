"""CPU time of one cv_clt replicate per benchmark learner on the benchmark's mechanisms.

Usage (from the project root):

    python benchmarks/mechanism_learners.py
    python benchmarks/mechanism_learners.py --sizes 100 --replicates 3 --evaluation-size 20000

For each mechanism (classification: ``gaussian_classes``, ``breast_cancer``; regression:
``student_t_linear``, ``diabetes``), each learner preset of its task and each n: the worker's
``replicate`` for that learner alone (K = 10-fold CV, full fit, the truth of the 11 models, 5x2,
15 train/validation splits, no nested CV), built as the study builds it, under the learners'
context (one OpenMP thread); CPU seconds of this process after one warm-up replicate, mean over
``--replicates``. The synthetic populations' truth of non-linear models is computed on
``--evaluation-size`` points (the presets' default is 100,000, 20,000 for p = 100), which
dominates the cost of the ensembles. Appends one JSON line to
``results/benchmarks/mechanism_learners.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESETS = {"classification": ["tree", "lda", "logistic_regression", "knn", "random_forest", "gradient_boosting"],
           "regression": ["ols", "ridge_regressor", "tree_regressor", "knn_regressor", "random_forest_regressor",
                          "gradient_boosting_regressor"]}
MECHANISMS = ["gaussian_classes", "breast_cancer", "student_t_linear", "diabetes"]


def _population(name: str, evaluation_size: int):
    from simstudy.populations import build_population
    from simstudy.populations.packaged import DATASETS

    return build_population(name if name in DATASETS else {"name": name, "evaluation_size": evaluation_size})


def _time(worker, learner: str, replicates: int) -> dict[int, float]:
    """{n: ms CPU per replicate} of one learner, after a warm-up replicate."""
    from simstudy.learners.base import learners_context

    out = {}
    with learners_context([worker.learners[learner]]):
        for cond in worker.conditions:
            worker.replicate(cond, 0, (learner,))           # warm-up (and the evaluation sample)
            start = time.process_time()
            for r in range(1, replicates + 1):
                worker.replicate(cond, r, (learner,))
            out[cond.n] = round(1e3 * (time.process_time() - start) / replicates, 1)
    return out


def measure(sizes: list[int], replicates: int, evaluation_size: int) -> dict:
    """{mechanism: {learner: {n: ms CPU per replicate}}}."""
    from threadpoolctl import threadpool_limits

    from simstudy.registry import LEARNERS
    from simstudy.studies.cv_clt.config import CVCLTConfig
    from simstudy.studies.cv_clt.study import CVCLTStudy

    threadpool_limits(1)
    out: dict = {}
    for mechanism in MECHANISMS:
        population = _population(mechanism, evaluation_size)
        learners = {name: dict(LEARNERS[name].load_config().estimator) for name in PRESETS[population.task]}
        loss = "zero_one" if population.task == "classification" else "squared"
        study = CVCLTStudy(CVCLTConfig(sizes=sizes, replicates=replicates + 1, learners=learners, comparisons=[],
                                       nested_cv_replicates=0, loss=loss), population)
        study.check()
        worker = study.phases()[0].worker
        out[mechanism] = {learner: _time(worker, learner, replicates) for learner in learners}
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--evaluation-size", type=int, default=20_000)
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "mechanism_learners.jsonl"))
    args = parser.parse_args(argv)
    from machine import machine

    results = measure(args.sizes, args.replicates, args.evaluation_size)
    record = {"checkout": str(ROOT), "load_average": os.getloadavg()[0], "replicates": args.replicates,
              "evaluation_size": args.evaluation_size, "ms_cpu_per_replicate": results, **machine(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(args.output, "a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(f"{'mechanism':18s} {'learner':28s} " + "".join(f"{n:>10d}" for n in args.sizes))
    for mechanism, learners in results.items():
        for learner, times in learners.items():
            print(f"{mechanism:18s} {learner:28s} " + "".join(f"{times[n]:>10.1f}" for n in args.sizes))


if __name__ == "__main__":
    main()
