"""CPU time of one replicate of the Letter row of Table 2 per training-set size, in this
checkout and optionally another.

Usage (from the project root):

    python benchmarks/table2_sizes.py                       # this checkout
    python benchmarks/table2_sizes.py --against ../main     # and another checkout, side by side

The cv_variance worker of ``experiments/table2_letter.sh`` (10-fold CV of the default tree, the
numba CART kernel, Letter's positive letters A-M) for one condition at a time: sampling, ranking,
the K fold trees and their held-out predictions, the losses and theta's; ``truth`` adds the K
fold models' exact errors on the 20,000 rows (the committed run), ``no truth`` is the
``table2-full`` workload of ``benchmarks/run.py``. CPU seconds of this process after a warm-up
chunk, per replicate. Appends one JSON line per checkout to
``results/benchmarks/table2_sizes.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from checkouts import cell, compare

ROOT = Path(__file__).resolve().parents[1]
SIZES = [20, 40, 80, 160, 400, 800, 2000]


def measure(sizes: list[int], replicates: int) -> dict:
    """{"no truth" | "truth": {n: ms}} for the code on sys.path (``replicates`` at n = 2000, more
    at smaller n: about the same time per size)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from end_to_end import POSITIVE, letter_path
    from simstudy.cv.losses import zero_one
    from simstudy.learners.dispatch import build_learner
    from simstudy.populations import build_population
    from simstudy.studies.base import Chunk
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(letter_path()), "positive": POSITIVE})
    learner = build_learner({"name": "tree", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}})
    conditions = make_conditions(sizes, 10, pop)
    out: dict = {}
    for truth, kind in ((False, "no truth"), (True, "truth")):
        worker = CVVarianceWorker(pop, learner, zero_one, conditions, 1, truth)
        for c, cond in enumerate(conditions):
            count = replicates * max(1, int(2000 / cond.n) // 4)
            worker(Chunk(c, 0, 5))                                            # warm-up
            start = time.process_time()
            worker(Chunk(c, 0, count))
            out.setdefault(kind, {})[cond.n] = 1e3 * (time.process_time() - start) / count
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--replicates", type=int, default=200, help="replicates at n = 2000 (more at smaller n)")
    parser.add_argument("--against", help="another checkout (its root), measured the same way in a subprocess")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)   # subprocess mode
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "table2_sizes.jsonl"))
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(measure(args.sizes, args.replicates)))
        return
    json_args = ["--sizes", *map(str, args.sizes), "--replicates", str(args.replicates)]
    results = compare(__file__, lambda: measure(args.sizes, args.replicates), json_args, args.against, args.output,
                      args.replicates)
    print(f"{'':9s}" + "".join(f"{n:>14d}" for n in args.sizes) + f"{'sum':>14s}")
    for kind in ("no truth", "truth"):
        total = {tag: sum(numbers[kind].values()) for tag, (_, _, numbers) in results.items()}
        summed = f"{total['against']:.2f}->{total['this']:.2f}" if "against" in total else f"{total['this']:.2f}"
        print(f"{kind:9s}" + "".join(f"{cell(results, [kind, n]):>14s}" for n in args.sizes) + f"{summed:>14s}")


if __name__ == "__main__":
    main()
