"""The logistic regression fits of one cv_clt replicate: scikit-learn one call per fit vs the kernel.

Usage (from the project root):

    python benchmarks/logistic_kernel.py                      # n = 100, 400, 1600, 3200
    python benchmarks/logistic_kernel.py --sizes 100 200 --repeats 5

One replicate of the Bayle et al. study (``study=cv_clt``) on Letter (A-M vs N-Z, rows drawn with
replacement) fits ``LogisticRegression(solver="newton-cholesky")`` on the 10 CV training folds,
the full sample, the 10 halves of Dietterich's 5x2 design and 15 train/validation splits with
n_test = n/10: 36 fits. Timed, in the same process, alternately, best of ``--repeats``:

- ``sklearn``: one ``fit`` per training subset, in the study's ``fit_context`` (validation off);
- ``kernel``: :func:`fit_logistic_batch` on the 36 weight masks, zero start and scikit-learn's
  tol=1e-4 (its iterates: the same fits to rounding);
- ``kernel warm``: :class:`BatchedLogistic` with warm starts from the full-sample fit and
  tol = OPTIMUM_TOL (the optimum; one extra full-sample fit included).

The kernels run after numba compilation (a warm-up call first). BLAS is limited to ``--threads``
threads (default 1: the study's loky workers on 2 cores). Also printed: the largest coefficient
difference from scikit-learn, the population predictions that differ, and the mean Newton steps
per fit by kind of training set, cold (zero start) and warm (from the full-sample fit) at
scikit-learn's tol=1e-4 and at OPTIMUM_TOL, to show what warm starts save.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LETTER = ROOT.parent / "shared" / "data" / "letter-recognition.data"
POSITIVE = list("ABCDEFGHIJKLM")


def letter_path(given: str | None) -> Path:
    """``--data``, else shared/data/ beside the project or beside any ancestor (git worktrees)."""
    if given:
        return Path(given)
    relative = LETTER.relative_to(ROOT.parent)
    return next((p / relative for p in ROOT.parents if (p / relative).is_file()), LETTER)


def replicate_design(n: int, K: int, splits: int, rng: np.random.Generator) -> np.ndarray:
    """Training masks (36, n) of one cv_clt replicate: K folds, full sample, 5x2 halves, splits."""
    from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits

    labels = KFold(K).labels(n, rng)
    halves = FiveByTwo().halves(n, rng)
    tv_test = RepeatedSplits(n // K, splits).test_masks(n, rng)
    masks = [labels != k for k in range(K)] + [np.ones(n, bool)]
    masks += [half for h in halves for half in (h, ~h)]
    masks += [~test for test in tv_test]
    return np.array(masks)


def sklearn_fits(X: np.ndarray, y: np.ndarray, masks: np.ndarray):
    """(coef (F, p), intercept (F,), n_iter (F,)): one fresh LogisticRegression per mask."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    coef, intercept, n_iter = [], [], []
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        for mask in masks:
            est = LogisticRegression(solver="newton-cholesky").fit(X[mask], y[mask])
            coef.append(est.coef_[0])
            intercept.append(est.intercept_[0])
            n_iter.append(est.n_iter_[0])
    return np.array(coef), np.array(intercept), np.array(n_iter)


def best_time(fn, repeats: int):
    """(best wall time in seconds, last result)."""
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


GROUPS = {"folds": slice(0, 10), "full": slice(10, 11), "5x2": slice(11, 21), "train/val": slice(21, 36)}


def steps_row(n: int, name: str, n_iter: np.ndarray) -> str:
    """Mean Newton steps per fit in each group of the design, and overall."""
    means = [n_iter[..., g].mean() for g in GROUPS.values()] + [n_iter.mean()]
    return f"{n:>5} {name:<22}" + "".join(f"{m:>10.2f}" for m in means)


def mismatches(pop: np.ndarray, w: np.ndarray, b: np.ndarray, w_ref: np.ndarray, b_ref: np.ndarray):
    """(population predictions that differ over all fits, of those within 1e-9 of the boundary)."""
    d, d_ref = pop @ w.T + b, pop @ w_ref.T + b_ref
    differ = (d > 0) != (d_ref > 0)
    return int(differ.sum()), int((differ & ((np.abs(d) <= 1e-9) | (np.abs(d_ref) <= 1e-9))).sum())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400, 1600, 3200])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: leave as is)")
    parser.add_argument("--seed", type=int, default=2020)
    parser.add_argument("--data", default=None, help="Letter file (UCI format)")
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    from simstudy.learners.logistic.batch import BatchedLogistic, fit_logistic_batch
    from simstudy.learners.logistic.newton import OPTIMUM_TOL
    from simstudy.populations.io.table import binarize
    from simstudy.populations.io.text import load_table_file

    Xpop, labels = load_table_file(letter_path(args.data))
    ypop = binarize(labels, POSITIVE)
    fit_logistic_batch((np.arange(40.0) % 3).reshape(1, 20, 2), (np.arange(20) % 2).reshape(1, 20),
                       np.ones((1, 1, 20)))                              # compile (or load) the kernel first
    warm_learner = BatchedLogistic(tol=OPTIMUM_TOL, warm_start=True)
    limits = threadpool_limits(args.threads) if args.threads else None
    steps = []
    print(f"{'n':>5} {'sklearn s':>10} {'kernel s':>9} {'ratio':>6} {'warm s':>8} {'ratio':>6}  "
          f"{'max|diff| kernel/warm':>21}  {'mismatch kernel/warm':>20}")
    for n in args.sizes:
        rng = np.random.default_rng([args.seed, n])
        idx = rng.integers(0, len(ypop), n)
        X, y = Xpop[idx], ypop[idx]
        masks = replicate_design(n, 10, 15, rng)
        weights = masks[None].astype(float)
        warm_learner.fit_weighted(X[None], y[None], weights)           # first call of this shape
        t_sk, (coef, intercept, it_sk) = best_time(lambda: sklearn_fits(X, y, masks), args.repeats)
        t_k, fit = best_time(lambda: fit_logistic_batch(X[None], y[None], weights), args.repeats)
        t_w, warm = best_time(lambda: warm_learner.fit_weighted(X[None], y[None], weights), args.repeats)
        diffs = [max(np.abs(f.w[0] - coef).max(), np.abs(f.b[0] - intercept).max()) for f in (fit, warm)]
        mis_k = mismatches(Xpop, fit.w[0], fit.b[0], coef, intercept)
        mis_w = mismatches(Xpop, warm.w[0], warm.b[0], coef, intercept)
        print(f"{n:>5} {t_sk:>10.4f} {t_k:>9.4f} {t_sk / t_k:>6.1f} {t_w:>8.4f} {t_sk / t_w:>6.1f}  "
              f"{f'{diffs[0]:.1e}/{diffs[1]:.1e}':>21}  {f'{mis_k[0]} ({mis_k[1]})/{mis_w[0]} ({mis_w[1]})':>20}")
        steps.append(steps_row(n, "scikit-learn tol=1e-4", it_sk))
        for tol in (1e-4, OPTIMUM_TOL):
            for warm_start in (False, True):           # warm: excluding the full-sample start fit
                learner = BatchedLogistic(tol=tol, warm_start=warm_start)
                it = learner.fit_weighted(X[None], y[None], weights).n_iter
                steps.append(steps_row(n, f"{'warm' if warm_start else 'cold'} tol={tol:g}", it))
    if limits is not None:
        limits.unregister()
    print(f"\nSeconds per replicate (36 fits), best of {args.repeats}; BLAS threads: {args.threads or 'default'}. "
          "max|diff|: largest coefficient or intercept difference from scikit-learn's fits (warm is the optimum: "
          "this is how far scikit-learn's tol=1e-4 stops from it). mismatch: population predictions "
          "(20,000 x 36) differing from scikit-learn's (of which within 1e-9 of the boundary).")
    print(f"\nMean Newton steps per fit\n{'n':>5} {'':<22}" + "".join(f"{g:>10}" for g in [*GROUPS, "all"]))
    print("\n".join(steps))


if __name__ == "__main__":
    main()
