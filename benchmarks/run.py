"""Throughput of simstudy against a plain scikit-learn/NumPy + joblib loop doing the same work.

Usage (from the project root):

    python benchmarks/run.py                     # small workloads (about a minute each)
    python benchmarks/run.py --workload fisher-n20-full --repeats 1
    python benchmarks/run.py --workload quick-letter --repeats 1      # end to end, ~3 minutes
    python benchmarks/run.py --workload cv_clt-full --repeats 1       # experiments/cv_clt.sh
    python benchmarks/run.py --workload suite --repeats 1             # experiments/all.sh
    python benchmarks/run.py --list

Each workload runs simstudy's path and the plain path alternately, ``--repeats`` times, with the
same ``--n-jobs``; it prints the median wall times, the ratio plain / simstudy, replicates per
second per core, and a check that both computed the same numbers. The kernel workloads run
both paths in this process; the end-to-end ones (``quick-letter``, ``cv_clt-full``, ``suite``,
:mod:`end_to_end`) run whole commands as fresh processes, start-up and reports included, and
record their peak memory. Results are appended as JSON lines to
``results/benchmarks/benchmarks.jsonl``, with the machine's load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from joblib import Parallel, delayed

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
LETTER = ROOT.parent / "shared" / "data" / "letter-recognition.data"


@dataclass
class Workload:
    name: str
    description: str
    replicates: int
    simstudy: Callable[[int], float | dict]  # n_jobs -> checksum, or {"seconds", "checksum", ...} (end to end)
    plain: Callable[[int], float | dict] | None  # None: time only
    warmup: Callable[[int], object] | None = None  # default: the simstudy path itself


# ----------------------------------------------------------------------------- Nedelko / Fisher
def _fisher_workload(name, sizes, bayes_errors, replicates, plain_replicates=None, bootstrap=50):
    from simstudy.engine.config import RunnerConfig
    from simstudy.engine.runner import run_chunks
    from simstudy.learners.linear.fisher_reference import reference_estimates
    from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
    from simstudy.studies.nedelko_fisher.worker import FisherRiskWorker, draw as _draw, make_conditions

    conditions = make_conditions(sizes, bayes_errors, purpose="benchmark")
    K, B = 5, bootstrap
    plain_R = plain_replicates or replicates

    def simstudy_path(n_jobs):
        worker = FisherRiskWorker(conditions, seed=1, K=K, bootstrap=B)
        rec = run_chunks(worker, [replicates] * len(conditions),
                         RunnerConfig(chunk_size=1000, n_jobs=n_jobs, progress=False)).records
        rec = rec[rec.replicate < plain_R]
        return float(rec["loo"].sum() + rec["kfold"].sum() + rec["true_risk"].sum())

    def one_sample(cond, r):
        pop = LogisticPopulation(cond.bayes_error)
        d = _draw(cond.sample_size, cond.key, pop, 1, range(r, r + 1), K, B)
        ref = reference_estimates(d.X[0], d.y[0], d.folds[0], d.boot[0])
        return ref.loo + ref.kfold + float(linear_rule_risk(ref.w, ref.c, alpha=pop.alpha))

    def plain_path(n_jobs):
        values = Parallel(n_jobs=n_jobs, batch_size=64)(delayed(one_sample)(c, r) for c in conditions
                                                        for r in range(plain_R))
        return float(np.sum(values))

    total = replicates * len(conditions)
    desc = (f"Nedelko Fisher, N={sizes}, {len(bayes_errors)} Bayes errors x {replicates} samples; "
            f"LOO + 5-fold + empirical" + (f" + B={B} bootstrap" if B else "") + " + exact risk"
            + (f" (plain path on the first {plain_R} samples, time scaled)" if plain_R != replicates else ""))
    w = Workload(name, desc, total, simstudy_path, plain_path)
    w.plain_fraction = plain_R / replicates
    return w


# ----------------------------------------------------------------------------- Table 2 / trees
def _table2_workload(name, sizes, replicates, warmup_replicates=None):
    import sklearn
    from sklearn.model_selection import PredefinedSplit, cross_val_score
    from sklearn.tree import DecisionTreeClassifier

    from simstudy.cv.losses import zero_one
    from simstudy.cv.splits import KFold
    from simstudy.engine.config import RunnerConfig
    from simstudy.engine.runner import run_chunks
    from simstudy.learners.dispatch import build_learner
    from simstudy.populations import build_population
    from simstudy.rng import replicate_rng
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    pop = build_population({"kind": "tabular", "name": "letter", "path": str(LETTER),
                            "positive": list("ABCDEFGHIJKLM")})
    conditions = make_conditions(sizes, 10, pop)

    learner = build_learner({"name": "tree", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier"}})

    def simstudy_path(n_jobs):  # the learner a user's config gets: the numba CART kernel
        worker = CVVarianceWorker(pop, learner, zero_one, conditions, 1, False)
        rec = run_chunks(worker, [replicates] * len(conditions),
                         RunnerConfig(chunk_size=100, n_jobs=n_jobs, progress=False)).records
        return float(rec["mu_hat"].sum())

    def one_replicate(cond, r):
        rng = replicate_rng(1, cond.key, r)
        s = pop.sample(cond.n, rng)
        labels = KFold(10).labels(cond.n, rng)
        seed = int(rng.integers(0, 2**31 - 1))
        scores = cross_val_score(DecisionTreeClassifier(random_state=seed), s.X, s.y, cv=PredefinedSplit(labels))
        return 1 - scores.mean()

    def plain_path(n_jobs):
        with sklearn.config_context():
            values = Parallel(n_jobs=n_jobs, batch_size=16)(delayed(one_replicate)(c, r) for c in conditions
                                                            for r in range(replicates))
        return float(np.sum(values))

    desc = (f"Table 2 (Letter), 10-fold CV of a default DecisionTreeClassifier, n={sizes} x {replicates} "
            "replicates; plain path: cross_val_score per replicate")
    def warmup(n_jobs):  # start the workers and load the compiled kernels with a few replicates
        worker = CVVarianceWorker(pop, learner, zero_one, conditions, 1, False)
        run_chunks(worker, [warmup_replicates] * len(conditions),
                   RunnerConfig(chunk_size=warmup_replicates, n_jobs=n_jobs, progress=False))

    w = Workload(name, desc, replicates * len(conditions), simstudy_path, plain_path,
                 warmup if warmup_replicates else None)
    w.plain_fraction = 1.0
    w.same_numbers = False  # different tie-breaking seeds per fit: compared statistically elsewhere
    return w


# ----------------------------------------------------------------------------- end to end
def _quick_letter():
    import end_to_end as e2e

    desc = (f"quick user study end to end: `simstudy population=letter study.sizes=[20,400,2000] "
            f"study.replicates={e2e.QUICK_REPLICATES}` (default tree, 10-fold CV, reports and figures), against "
            "a plain cross_val_score + joblib script (fresh process)")
    w = Workload("quick-letter", desc, e2e.QUICK_REPLICATES * len(e2e.QUICK_SIZES), e2e.quick_letter_simstudy,
                 e2e.quick_letter_plain, lambda n_jobs: e2e.quick_letter_simstudy(n_jobs, replicates=20))
    w.plain_fraction, w.same_numbers = 1.0, False
    return w


def _cv_clt_full(plain_per_size: int = 8):
    import end_to_end as e2e

    desc = ("cv_clt at full scale end to end: `bash experiments/cv_clt.sh` (Letter, n=100..3200, 2,000 replicates, "
            "nested CV on 500, logreg/tree/5-NN); plain path: benchmarks/plain_cv_clt.py on "
            f"{plain_per_size} replicates per size, time scaled")
    w = Workload("cv_clt-full", desc, e2e.CV_CLT_REPLICATES * len(e2e.CV_CLT_SIZES),
                 lambda n_jobs: e2e.experiment_simstudy("cv_clt.sh", [f"runner.n_jobs={n_jobs}"]),
                 lambda n_jobs: e2e.cv_clt_plain(n_jobs, plain_per_size),
                 lambda n_jobs: e2e.experiment_simstudy("cv_clt.sh", [
                     f"runner.n_jobs={n_jobs}", "study.sizes=[100]", "study.replicates=4",
                     "study.nested_cv_replicates=1"], name="cv_clt_warmup"))
    w.plain_fraction, w.same_numbers = 1.0, False
    return w


def _suite():
    import end_to_end as e2e

    w = Workload("suite", "every committed experiment in sequence: `bash experiments/all.sh` into a temporary "
                 "directory (time only)", 0, lambda n_jobs: e2e.suite_simstudy(), None, lambda n_jobs: None)
    w.plain_fraction, w.same_numbers = 1.0, False
    return w


PLAIN_SCRIPTS = {"quick-letter": "quick_letter_plain_script"}


def workloads() -> dict[str, Callable[[], Workload]]:
    grid = [0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.48]
    return {
        "fisher-small": lambda: _fisher_workload("fisher-small", [20], [0.1, 0.3], 1000),
        "fisher-n20-full": lambda: _fisher_workload("fisher-n20-full", [20], grid, 10000, plain_replicates=500),
        "table2-small": lambda: _table2_workload("table2-small", [20, 400], 300),
        "table2-full": lambda: _table2_workload("table2-full", [20, 40, 80, 160, 400, 800, 2000], 10000,
                                                warmup_replicates=20),
        "fisher-n20-loo-kfold": lambda: _fisher_workload("fisher-n20-loo-kfold", [20], grid, 10000,
                                                         plain_replicates=1000, bootstrap=0),
        "quick-letter": _quick_letter,
        "cv_clt-full": _cv_clt_full,
        "suite": _suite,
    }


def _measure(fn, n_jobs):
    """(seconds, checksum, details): wall time in this process, or what an end-to-end run reports."""
    start = time.perf_counter()
    out = fn(n_jobs)
    if isinstance(out, dict):
        return out["seconds"], out.get("checksum"), {k: v for k, v in out.items() if k not in ("seconds", "checksum")}
    return time.perf_counter() - start, out, {}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def _run_plain_script(name: str, n_jobs: int) -> None:
    """``--plain NAME``: the plain script of an end-to-end workload; prints its checksum last."""
    import end_to_end as e2e

    print(json.dumps(getattr(e2e, PLAIN_SCRIPTS[name])(n_jobs)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", action="append", help="workload name (repeatable); default: the small ones")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "benchmarks.jsonl"))
    parser.add_argument("--keep-outputs", metavar="DIR", help="end-to-end workloads write their runs into DIR/<workload> "
                        "(kept, e.g. to compare the records with results/) instead of a temporary directory")
    parser.add_argument("--plain", choices=sorted(PLAIN_SCRIPTS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))     # end_to_end, plain_cv_clt
    if args.plain:
        return _run_plain_script(args.plain, args.n_jobs)
    table = workloads()
    if args.keep_outputs:
        import end_to_end

        end_to_end.KEEP_OUTPUTS = Path(args.keep_outputs).resolve()
    if args.list:
        for name in table:
            print(name)
        return
    names = args.workload or [n for n in table if n.endswith("small")]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        w = table[name]()
        load_before = os.getloadavg()
        (w.warmup or w.simstudy)(args.n_jobs)  # warm-up: imports, numba compilation, worker start-up
        paths = ("simstudy", "plain") if w.plain is not None else ("simstudy",)
        times = {path: [] for path in paths}
        sums, details = {}, {}
        for _ in range(args.repeats):  # alternate so that machine noise hits both alike
            for path in paths:
                t, sums[path], details[path] = _measure(getattr(w, path), args.n_jobs)
                times[path].append(t)
        record = {
            "workload": name, "description": w.description, "replicates": w.replicates, "n_jobs": args.n_jobs,
            "repeats": args.repeats, "simstudy_s": times["simstudy"], "median_simstudy_s": statistics.median(
                times["simstudy"]), "checksums": sums, "details": details, **machine(),
            "python": platform.python_version(), "commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "load_average_before": list(load_before), "load_average_after": list(os.getloadavg()),
        }
        med_s = record["median_simstudy_s"]
        if w.plain is not None:
            med_p = statistics.median(times["plain"]) / w.plain_fraction
            record.update({
                "plain_s": times["plain"], "plain_fraction": w.plain_fraction, "median_plain_s_full_equivalent": med_p,
                "ratio_plain_over_simstudy": med_p / med_s,
                "plain_replicates_per_s_per_core": w.replicates / med_p / args.n_jobs if w.replicates else None})
        record["simstudy_replicates_per_s_per_core"] = w.replicates / med_s / args.n_jobs if w.replicates else None
        with open(args.output, "a") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
        print(f"\n{name}: {w.description}")
        per_core = f"   ({record['simstudy_replicates_per_s_per_core']:.0f} rep/s/core)" if w.replicates else ""
        peak = details["simstudy"].get("peak_mib")
        print(f"  simstudy: median {med_s:.2f} s{per_core}" + (f"   peak memory {peak:.0f} MiB" if peak else ""))
        if w.plain is not None:
            print(f"  plain   : median {med_p:.2f} s   ({record['plain_replicates_per_s_per_core']:.1f} rep/s/core)"
                  + (f"  [measured on {w.plain_fraction:.0%} of the samples]" if w.plain_fraction < 1 else "")
                  + (f"  [measured on {details['plain']['fraction']:.1%} of the replicates, time scaled]"
                     if "fraction" in details["plain"] else ""))
            print(f"  ratio plain/simstudy: {med_p / med_s:.1f}x   n_jobs={args.n_jobs}, repeats={args.repeats}")
            if getattr(w, "same_numbers", True):
                same = np.isclose(sums["simstudy"], sums["plain"], rtol=1e-9)
                print(f"  same numbers: {same} (checksums {sums['simstudy']:.10g} / {sums['plain']:.10g})")
        for line in details["simstudy"].get("log", []):
            print(f"  {line}")
        print(f"  load average before/after: {load_before[0]:.1f} / {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
