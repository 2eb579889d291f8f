"""CPU time of one cv_clt replicate per learner and size, in this checkout and optionally another.

Usage (from the project root):

    python benchmarks/cv_clt_learners.py                           # this checkout
    python benchmarks/cv_clt_learners.py --against ../main         # and another checkout, side by side
    python benchmarks/cv_clt_learners.py --learners knn --sizes 100 3200 --replicates 10

For each learner of the cv_clt study (built as the study builds it: the fastest engine that
reproduces it) and each n, the worker's ``replicate`` for that learner alone (K-fold CV, full fit,
exact truth of the 11 models, 5x2, 15 train/validation splits), without and with nested CV; CPU
seconds of this process (BLAS limited to one thread, as in the study's workers), after one
warm-up replicate, mean over ``--replicates``. CPU time, not wall time, so that a busy machine
distorts less (it still does: caches are shared); the load average is printed and recorded.
Appends one JSON line per checkout to ``results/benchmarks/cv_clt_learners.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from checkouts import cell, compare

ROOT = Path(__file__).resolve().parents[1]


def measure(learners: list[str], sizes: list[int], replicates: int) -> dict:
    """{learner: {"plain": {n: ms}, "nested": {n: ms}}} for the code on sys.path."""
    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from end_to_end import POSITIVE, letter_path
    from simstudy.populations import build_population
    from simstudy.studies.cv_clt.config import CVCLTConfig
    from simstudy.studies.cv_clt.study import CVCLTStudy

    threadpool_limits(1)
    pop = build_population({"kind": "tabular", "name": "letter", "path": str(letter_path()), "positive": POSITIVE})
    out: dict = {}
    for nested_replicates, kind in ((0, "plain"), (replicates + 1, "nested")):
        study = CVCLTStudy(CVCLTConfig(sizes=sizes, replicates=replicates + 1,
                                       nested_cv_replicates=nested_replicates), pop)
        study.check()
        worker = study.phases()[0].worker
        for learner in learners:
            for cond in worker.conditions:
                worker.replicate(cond, 0, (learner,))                  # warm-up
                start = time.process_time()
                for r in range(1, replicates + 1):
                    worker.replicate(cond, r, (learner,))
                ms = 1e3 * (time.process_time() - start) / replicates
                out.setdefault(learner, {}).setdefault(kind, {})[cond.n] = ms
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", nargs="+", default=["logreg", "knn", "tree"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400, 800, 1600, 3200])
    parser.add_argument("--replicates", type=int, default=4)
    parser.add_argument("--against", help="another checkout (its root), measured the same way in a subprocess")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)   # subprocess mode
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "cv_clt_learners.jsonl"))
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(measure(args.learners, args.sizes, args.replicates)))
        return
    json_args = ["--learners", *args.learners, "--sizes", *map(str, args.sizes), "--replicates", str(args.replicates)]
    results = compare(__file__, lambda: measure(args.learners, args.sizes, args.replicates), json_args,
                      args.against, args.output, args.replicates)
    print(f"{'learner':8s} {'design':7s} " + "".join(f"{n:>16d}" for n in args.sizes))
    for learner in args.learners:
        for kind in ("plain", "nested"):
            print(f"{learner:8s} {kind:7s} " + "".join(f"{cell(results, [learner, kind, n]):>16s}" for n in args.sizes))


if __name__ == "__main__":
    main()
