"""Exact population errors of the k-NN models of one cv_clt replicate: forward walk against the
depth-cut reverse walk, at the study's sizes.

Usage (from the project root):

    python benchmarks/knn_truth_walks.py
    python benchmarks/knn_truth_walks.py --sizes 200 400 --hits 8 12 16

For each n: a sample of n Letter rows (without replacement), its 10 fold models and the full
model (5-NN, as in ``study=cv_clt``), and the wall time of one call of each kernel over the
20,000 population rows (mean of 5 after one warm-up call): the forward walk
(:func:`simstudy.learners.knn.walks.walk_lists`) and the reverse walk cut at the depth where a
list holds ``hits`` training rows on average (:func:`~simstudy.learners.knn.walks.reverse_walk`).
Checks that every kernel gives the same predictions. ``PopulationKNN`` takes the reverse walk
with ``REVERSE_HITS`` hits when that depth is at least ``REVERSE_MIN_HEADS`` head widths; this
script is where those two constants were measured.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from end_to_end import letter_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400, 800, 1600, 3200])
    parser.add_argument("--hits", type=int, nargs="+", default=[8, 12, 16, 24])
    args = parser.parse_args()

    from simstudy.learners import knn as knn_module
    from simstudy.learners.dispatch import build_learner
    from simstudy.learners.knn.population import walks
    from simstudy.populations import build_population

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(letter_path()),
                            "positive": list("ABCDEFGHIJKLM")})
    knn = build_learner({"name": "knn", "estimator": {"_target_": "sklearn.neighbors.KNeighborsClassifier",
                                                      "n_neighbors": 5}}, population=pop)
    index = knn._arrays()
    N, L = index["lists"].shape
    H = index["head"].shape[1]
    rng = np.random.default_rng(0)

    def timed(call) -> float:
        call()
        start = time.perf_counter()
        for _ in range(5):
            call()
        return (time.perf_counter() - start) / 5 * 1000

    print(f"ms per call over N = {N} rows, 11 models, k = {knn.k}; lists of {L}, head {H}")
    for n in args.sizes:
        rows = rng.choice(N, n, replace=False)
        folds = np.arange(n) % 10
        models = [knn.fit_rows(rows)] + [knn.fit_rows(rows[folds != f]) for f in range(10)]
        urows, ucounts = knn_module._union(models)
        uy = knn.y[urows]
        code = np.full(N, -1, np.int32)
        code[urows] = np.arange(urows.shape[0], dtype=np.int32)
        out, short = np.empty((len(models), N), np.int64), np.empty(N, np.bool_)
        times = {"forward": timed(lambda: walks.walk_lists(np.arange(N), index["head"], index["lists"], code,
                                                          ucounts, uy, knn.k, knn.n_classes, out, short))}
        reference, reference_short = out.copy(), short.copy()
        for hits in args.hits:
            depth = min(L, -(-hits * N // urows.shape[0]))
            times[f"reverse {hits} hits (D={depth})"] = timed(lambda: walks.reverse_walk(
                index["reverse_ptr"], index["reverse"], urows, ucounts, uy, knn.k, knn.n_classes, depth,
                index["head"], index["lists"], code, out, short))
            assert np.array_equal(short, reference_short)
            assert np.array_equal(out[:, ~short], reference[:, ~short])
        print(f"n = {n:5d} (short lists {reference_short.mean():.1%}): "
              + ", ".join(f"{name} {ms:.1f}" for name, ms in times.items()))


if __name__ == "__main__":
    main()
