"""The CART kernel's two tie rules: the same tree distribution? how much faster is "draw"?

Usage (from the project root):

    python benchmarks/cart_tie_rule.py                         # n = 20, 400, 2000 (about 10 minutes)
    python benchmarks/cart_tie_rule.py --sizes 20 --replicates 2000

Both rules choose uniformly among the features whose best splits tie (module docstring of
``simstudy.learners.cart.grow``, ``TIE_RULES``): "shuffle" draws a random feature order at every
node and keeps the first best feature (scikit-learn's scheme), "draw" scans the features in a fixed
order and draws one of the tied ones. Individual trees differ (other random streams), their
distribution must not. The check: Table 2's cv_variance replicates on Letter (10-fold CV of the
default tree, exact truth) with each rule on the *same* samples, folds and per-fit seeds, compared

- paired: the mean of mu_hat(draw) - mu_hat(shuffle) and of the fold trees' true errors
  (paired t-tests), and the variance of those differences against a null pair, "shuffle" with
  other seeds (seed + 1 for every fit) against "shuffle": if "draw" grew trees from another
  distribution, its differences from "shuffle" would be larger than two "shuffle" runs' (F test);
- unpaired: two-sample Kolmogorov-Smirnov tests of mu_hat and of the true error;
- rho (Grandvalet & Bengio's between-block correlation) of each rule, z = difference / SE.

Then the speed of ``cross_validate_cart`` under both rules on the same replicates (CPU time,
alternating, best of ``--repeats``). Appends one JSON line per size to
``results/benchmarks/cart_tie_rule.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy import stats

from machine import machine

ROOT = Path(__file__).resolve().parents[1]


def letter_path() -> Path:
    relative = Path("shared") / "data" / "letter-recognition.data"
    return next((p / relative for p in ROOT.parents if (p / relative).is_file()), ROOT.parent / relative)


class _ShiftedSeeds:
    """A CartLearner whose every fit seed is shifted by one: the same kernel, other tie draws."""

    def __init__(self, learner):
        self.learner = learner
        self.name, self.dtype, self.task = learner.name, learner.dtype, learner.task

    def _seed(self, rng):
        return self.learner._seed(rng) + 1

    def start(self, sample):
        return self.learner.start(sample)

    def fit(self, state, rows, rng):
        raise NotImplementedError  # only the one-call CV is used

    def predict(self, state, model, rows):
        return self.learner.predict(state, model, rows)

    def cross_validate(self, state, labels, K, rng, keep_models=True):
        from simstudy.learners.base import Folds
        from simstudy.learners.cart import cross_validate_cart

        lr = self.learner
        seeds = [self._seed(rng) for _ in range(K)]
        folds = cross_validate_cart(state.ranked, state.y, labels, K, seeds, lr.criterion, lr.max_depth,
                                    lr.min_samples_split, lr.min_samples_leaf, keep_models, lr.ties)
        return Folds(folds.predictions, folds.models)

    def population_errors(self, models, population):
        return self.learner.population_errors(models, population)


def records(population, learner, n: int, replicates: int, n_jobs: int, seed: int = 1):
    from simstudy.cv.losses import zero_one
    from simstudy.engine.config import RunnerConfig
    from simstudy.engine.runner import run_chunks
    from simstudy.studies.cv_variance.study import CVVarianceWorker, make_conditions

    worker = CVVarianceWorker(population, learner, zero_one, make_conditions([n], 10, population), seed=seed,
                              truth=True)
    rec = run_chunks(worker, [replicates], RunnerConfig(chunk_size=250, n_jobs=n_jobs, progress=False)).records
    return rec.sort_values("replicate").reset_index(drop=True)


def compare(rec: dict, alpha: float = 0.05) -> dict:
    """Paired and unpaired comparisons of "draw" with "shuffle", and the null pair."""
    from simstudy.studies.cv_variance.aggregate import aggregate

    out = {}
    for column in ("mu_hat", "true_error"):
        a, b, c = (rec[k][column].to_numpy() for k in ("draw", "shuffle", "shuffle+1"))
        d, d0 = a - b, c - b
        f = np.var(d, ddof=1) / np.var(d0, ddof=1)
        out[column] = {
            "mean_draw": a.mean(), "mean_shuffle": b.mean(), "mean_diff": d.mean(),
            "se_diff": d.std(ddof=1) / np.sqrt(d.size), "paired_t_p": stats.ttest_rel(a, b).pvalue,
            "null_paired_t_p": stats.ttest_rel(c, b).pvalue,
            "sd_diff": d.std(ddof=1), "sd_diff_null": d0.std(ddof=1),
            "variance_ratio_F": f, "F_p_two_sided": 2 * min(stats.f.cdf(f, d.size - 1, d0.size - 1),
                                                            stats.f.sf(f, d.size - 1, d0.size - 1)),
            "ks_p": stats.ks_2samp(a, b).pvalue, "null_ks_p": stats.ks_2samp(c, b).pvalue,
            "identical_fraction": float(np.mean(d == 0)), "identical_fraction_null": float(np.mean(d0 == 0)),
        }
    rows = {k: aggregate(rec[k], alpha, [0.0], "mean_cv")[0].iloc[0] for k in rec}
    out["rho"] = {k: {"rho": float(r.rho), "se": float(r.rho_se)} for k, r in rows.items()}
    out["rho"]["z_draw_vs_shuffle"] = float((rows["draw"].rho - rows["shuffle"].rho)
                                            / np.hypot(rows["draw"].rho_se, rows["shuffle"].rho_se))
    return out


def speed(population, n: int, replicates: int, repeats: int) -> dict:
    """CPU seconds per one-call 10-fold CV under each rule (same replicates, alternating, best of repeats)."""
    from simstudy.cv.splits import KFold
    from simstudy.learners.cart import RankedFeatures, cross_validate_cart

    rng = np.random.default_rng(n)
    reps = []
    for _ in range(replicates):
        s = population.sample(n, rng)
        reps.append((RankedFeatures.from_array(s.X.astype(np.float32)), s.y, KFold(10).labels(n, rng),
                     list(rng.integers(0, 2**31 - 1, 10))))
    best = {"shuffle": np.inf, "draw": np.inf}
    for ties in best:                                   # load the compiled kernels
        cross_validate_cart(*reps[0][:3], 10, reps[0][3], keep_models=False, ties=ties)
    for _ in range(repeats):
        for ties in best:
            start = time.process_time()
            for X, y, labels, seeds in reps:
                cross_validate_cart(X, y, labels, 10, seeds, keep_models=False, ties=ties)
            best[ties] = min(best[ties], (time.process_time() - start) / replicates)
    return {"cpu_s_per_cv_shuffle": best["shuffle"], "cpu_s_per_cv_draw": best["draw"],
            "draw_saves": 1 - best["draw"] / best["shuffle"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 400, 2000])
    parser.add_argument("--replicates", type=int, nargs="+", default=[10000, 5000, 3000],
                        help="replicates per size (one value for all, or one per size)")
    parser.add_argument("--speed-replicates", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1, help="seed of the samples (another seed: an independent replication)")
    parser.add_argument("--output", default=str(ROOT / "results" / "benchmarks" / "cart_tie_rule.jsonl"))
    args = parser.parse_args(argv)
    from sklearn.tree import DecisionTreeClassifier

    from simstudy.learners.cart import CartLearner
    from simstudy.populations import build_population

    population = build_population({"kind": "tabular", "name": "letter", "path": str(letter_path()),
                                   "positive": list("ABCDEFGHIJKLM")})
    learners = {"draw": CartLearner(DecisionTreeClassifier(), ties="draw"),
                "shuffle": CartLearner(DecisionTreeClassifier(), ties="shuffle")}
    learners["shuffle+1"] = _ShiftedSeeds(learners["shuffle"])
    counts = args.replicates if len(args.replicates) == len(args.sizes) else [args.replicates[0]] * len(args.sizes)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    for n, R in zip(args.sizes, counts):
        rec = {name: records(population, learner, n, R, args.n_jobs, args.seed) for name, learner in learners.items()}
        result = {"n": n, "replicates": R, "seed": args.seed, **compare(rec),
                  **speed(population, n, max(1, args.speed_replicates * 400 // max(n, 400)), args.repeats),
                  **machine(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                  "load_average": list(np.round(__import__("os").getloadavg(), 2))}
        with open(args.output, "a") as fh:
            fh.write(json.dumps(result, default=float) + "\n")
        mu, te, rho = result["mu_hat"], result["true_error"], result["rho"]
        print(f"\nn = {n}, {R} replicates, seed {args.seed} (same samples, folds and fit seeds)")
        for name, r in (("mu_hat", mu), ("true error", te)):
            print(f"  {name:10s} draw - shuffle: {r['mean_diff']:+.2e} (SE {r['se_diff']:.1e}), paired t p = "
                  f"{r['paired_t_p']:.3f} [null pair {r['null_paired_t_p']:.3f}]; SD of differences "
                  f"{r['sd_diff']:.4f} vs null {r['sd_diff_null']:.4f} (F p = {r['F_p_two_sided']:.3f}); KS p = "
                  f"{r['ks_p']:.3f} [null {r['null_ks_p']:.3f}]")
        print(f"  rho: draw {rho['draw']['rho']:.4f} ({rho['draw']['se']:.4f}), shuffle {rho['shuffle']['rho']:.4f} "
              f"({rho['shuffle']['se']:.4f}), z = {rho['z_draw_vs_shuffle']:+.2f}")
        print(f"  one-call CV: shuffle {1e3 * result['cpu_s_per_cv_shuffle']:.3f} ms, draw "
              f"{1e3 * result['cpu_s_per_cv_draw']:.3f} ms CPU ({result['draw_saves']:.1%} saved)")


if __name__ == "__main__":
    main()
