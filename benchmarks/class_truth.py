"""CPU time of the true risk of one fitted classifier on a synthetic population with a
probability loss: the generic route, the written-out loss and the batched linear route.

Usage (from the project root):

    python benchmarks/class_truth.py
    python benchmarks/class_truth.py --populations logistic sparse_classes --learners lda tree --models 40

For each population and learner: ``--models`` models fitted on bootstrap draws of one sample
of ``--n`` points, and the CPU milliseconds per model (best of ``--repeats`` calls over all the
models) of three routes to the truth with the population's evaluation set:

- ``generic``: the Loss called once per class on every point, and per model the estimator's own
  ``predict`` and ``predict_proba`` for a scikit-learn model, else the learner's
  ``predict_features`` and ``predict_features_proba`` (the route before the written-out losses);
- ``written_out``: :func:`simstudy.populations.class_risks.builtin_class_risks` model by model;
- ``batched``: ``population.exact_risks`` (the binary linear models in blocks where the learner
  reads their rules, else the written-out route).

Checks that the three agree (rtol 1e-12) and appends a record to
``results/benchmarks/class_truth.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def generic_risks(learner, models, population, loss) -> np.ndarray:
    """Mean over the evaluation points of sum_c P_c L(c, g, q), the Loss called per class."""
    X, _ = population.evaluation_set(getattr(learner, "dtype", np.float64))
    P = population.evaluation_probabilities()
    out = []
    for model in models:
        if hasattr(model, "predict_proba") and hasattr(model, "classes_"):     # a scikit-learn model: its own calls
            predicted = model.predict(X)
            proba = np.zeros((X.shape[0], P.shape[1]))
            proba[:, np.asarray(model.classes_, dtype=np.int64)] = model.predict_proba(X) if loss.needs_proba else 0
        else:
            predicted = learner.predict_features(model, X)
            proba = learner.predict_features_proba(model, X, n_classes=P.shape[1]) if loss.needs_proba else None
        m = np.zeros(X.shape[0])
        for c in range(P.shape[1]):
            m += P[:, c] * loss(np.full(X.shape[0], c, dtype=np.int64), predicted, proba)
        out.append(m.mean())
        m.std(ddof=1)
    return np.array(out)


def written_out_risks(learner, models, population, loss) -> np.ndarray:
    from simstudy.populations.conditional import _ConditionalTruth

    X, _ = population.evaluation_set(getattr(learner, "dtype", np.float64))
    return _ConditionalTruth.sampled_risks(population, learner, X, models, loss)[0]


def batched_risks(learner, models, population, loss) -> np.ndarray:
    return population.exact_risks(learner, models, loss).values


def cpu_ms_per_model(route, learner, models, population, loss, repeats: int) -> tuple[float, np.ndarray]:
    best, values = np.inf, None
    for _ in range(repeats):
        start = time.process_time()
        values = route(learner, models, population, loss)
        best = min(best, time.process_time() - start)
    return 1000 * best / len(models), values


def measure(population_name: str, learner_name: str, loss, args) -> dict[str, float]:
    from simstudy.learners import build_learner, learners_context
    from simstudy.populations import build_population

    population = build_population(population_name)
    learner = build_learner(learner_name, population, loss)
    rng = np.random.default_rng(0)
    state = learner.start(population.sample(args.n, rng))
    with learners_context([learner]):
        models = [learner.fit(state, rng.integers(0, args.n, args.n), rng) for _ in range(args.models)]
    population.evaluation_probabilities()                      # computed once per population in a run
    row, reference = {}, None
    for name, route in (("generic", generic_risks), ("written_out", written_out_risks), ("batched", batched_risks)):
        row[name], values = cpu_ms_per_model(route, learner, models, population, loss, args.repeats)
        reference = values if reference is None else reference
        np.testing.assert_allclose(values, reference, rtol=1e-12, atol=0)
        row[name] = round(row[name], 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--populations", nargs="+", default=["logistic", "gaussian_classes", "imbalanced_classes",
                                                             "sparse_classes", "hastie_10_2"])
    parser.add_argument("--learners", nargs="+", default=["lda", "logistic_regression", "tree"])
    parser.add_argument("--losses", nargs="+", default=["log_loss", "brier"])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--models", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "class_truth.jsonl"))
    args = parser.parse_args()

    from machine import machine
    from simstudy.cv.losses import resolve_loss

    results: dict[str, dict] = {}
    for population in args.populations:
        for learner in args.learners:
            for loss_name in args.losses:
                row = measure(population, learner, resolve_loss(loss_name), args)
                results.setdefault(population, {}).setdefault(learner, {})[loss_name] = row
                print(f"{population:18s} {learner:20s} {loss_name:9s} ms CPU per model: "
                      + ", ".join(f"{k} {v:.2f}" for k, v in row.items()), flush=True)
    record = {"n": args.n, "models": args.models, "repeats": args.repeats, "load_average": os.getloadavg()[0],
              "ms_cpu_per_model": results, **machine(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(args.output, "a") as fh:
        fh.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
