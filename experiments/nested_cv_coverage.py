"""Coverage of Err_XY by nested-CV intervals against the number of repetitions R.

Bates, Hastie & Tibshirani's nested CV (:func:`simstudy.inference.nested_cv_interval`, both
``method="paper"`` and ``method="package"``) on two models whose Err_XY, the error of the model
trained on all n points, is exact:

- ``ols``: x ~ N(0, I_p), y = x.beta + N(0, sigma^2), least squares without intercept, squared
  loss; Err_XY = sigma^2 + |beta_hat - beta|^2.
  ``ols_n60`` is the same with n = 60 (the inner models fit 20 coefficients on 48 points).
- ``centroid``: y ~ Bernoulli(1/2), x | y ~ N((2y - 1) mu, I_p), nearest-centroid rule
  (sign of w.x + b, w = m_1 - m_0, b = -w.(m_1 + m_0)/2), 0-1 loss;
  Err_XY = (Phi(-(w.mu + b)/|w|) + Phi(-(w.mu - b)/|w|)) / 2.

Each replicate draws one sample and 50 random fold assignments; the interval for R
repetitions uses the first R of them, so the rows for R = 1, 3, 10, 50 are paired. The naive
CV interval Err_CV +- z sd(e)/sqrt(n) of the first assignment is shown for reference. Fits use
fold sums (Gram matrices, class sums), so one replicate costs a few batched solves; the first
replicate of each setting is checked against :func:`simstudy.cv.loop.nested_cv_losses` with a
plain refitting callable.

Usage (from the project root; about 10 minutes of one core with the defaults)::

    PYTHONPATH=. python experiments/nested_cv_coverage.py --out results/nested_cv_coverage
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from simstudy.cv.loop import nested_cv_losses
from simstudy.cv.splits import KFold
from simstudy.engine.manifest import environment_info
from simstudy.inference.nested import NESTED_CV_METHODS, nested_cv_interval
from simstudy.studies.metrics import rejection_rate

REPETITIONS = (1, 3, 10, 50)


@dataclass(frozen=True)
class Sample:
    x: np.ndarray      # (n, p)
    y: np.ndarray      # (n,)


@dataclass(frozen=True)
class FoldLosses:
    """Nested-CV losses of R fold assignments, in the layout of :class:`simstudy.cv.loop.NestedCVLosses`."""

    pair: np.ndarray   # (R, K, K, m): pair[r, k, j] = losses on fold j, model trained without k and j
    outer: np.ndarray  # (R, K, m)


def _fold_blocks(values: np.ndarray, labels: np.ndarray, K: int) -> np.ndarray:
    """values (n, ...) -> (R, K, m, ...) with fold k's points in increasing index order."""
    order = np.argsort(labels, axis=1, kind="stable")
    R, n = labels.shape
    return values[order].reshape(R, K, n // K, *values.shape[1:])


def _pairs(K: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.triu_indices(K, 1)
    return a, b


@dataclass(frozen=True)
class OLS:
    """Least squares on x ~ N(0, I_p), y = x.beta + N(0, sigma^2)."""

    n: int = 100
    p: int = 20
    K: int = 10
    sigma: float = 1.0
    name: str = "ols"

    @property
    def beta(self) -> np.ndarray:
        return np.full(self.p, 1 / np.sqrt(self.p))

    def describe(self) -> str:
        return f"least squares, n = {self.n}, p = {self.p}, K = {self.K}, sigma = {self.sigma}, |beta| = 1, squared loss"

    def draw(self, rng: np.random.Generator) -> Sample:
        x = rng.standard_normal((self.n, self.p))
        return Sample(x, x @ self.beta + self.sigma * rng.standard_normal(self.n))

    def err_xy(self, s: Sample) -> float:
        beta_hat = np.linalg.solve(s.x.T @ s.x, s.x.T @ s.y)
        return float(self.sigma ** 2 + np.sum((beta_hat - self.beta) ** 2))   # E over a fresh (x, y)

    def fold_losses(self, s: Sample, labels: np.ndarray) -> FoldLosses:
        K = self.K
        X, Y = _fold_blocks(s.x, labels, K), _fold_blocks(s.y, labels, K)   # (R, K, m, p), (R, K, m)
        G = X.swapaxes(-1, -2) @ X                                         # per-fold Gram matrices
        c = (X.swapaxes(-1, -2) @ Y[..., None])[..., 0]
        Gt, ct = G.sum(1), c.sum(1)
        a, b = _pairs(K)
        beta_pair = np.linalg.solve(Gt[:, None] - G[:, a] - G[:, b], (ct[:, None] - c[:, a] - c[:, b])[..., None])[..., 0]
        beta_out = np.linalg.solve(Gt[:, None] - G, (ct[:, None] - c)[..., None])[..., 0]
        pair = np.full((labels.shape[0], K, K, self.n // K), np.nan)
        pair[:, b, a] = (Y[:, a] - np.einsum("rPmp,rPp->rPm", X[:, a], beta_pair)) ** 2   # fold a, without {a, b}
        pair[:, a, b] = (Y[:, b] - np.einsum("rPmp,rPp->rPm", X[:, b], beta_pair)) ** 2
        outer = (Y - np.einsum("rkmp,rkp->rkm", X, beta_out)) ** 2
        return FoldLosses(pair, outer)

    def refit_losses(self, s: Sample):
        def losses(train, test):
            beta_hat = np.linalg.lstsq(s.x[train], s.y[train], rcond=None)[0]
            return (s.y[test] - s.x[test] @ beta_hat) ** 2
        return losses


@dataclass(frozen=True)
class Centroid:
    """Nearest class centroid on two Gaussian classes N(+-mu, I_p); Bayes error Phi(-|mu|)."""

    n: int = 100
    p: int = 10
    K: int = 10
    bayes_error: float = 0.2
    name: str = "centroid"

    @property
    def mu(self) -> np.ndarray:
        return np.full(self.p, -stats.norm.ppf(self.bayes_error) / np.sqrt(self.p))

    def describe(self) -> str:
        return (f"nearest centroid, n = {self.n}, p = {self.p}, K = {self.K}, classes N(+-mu, I), Bayes error "
                f"{self.bayes_error}, 0-1 loss")

    def draw(self, rng: np.random.Generator) -> Sample:
        y = (rng.random(self.n) < 0.5).astype(int)
        return Sample((2 * y[:, None] - 1) * self.mu + rng.standard_normal((self.n, self.p)), y)

    @staticmethod
    def _rule(s1, n1, s0, n0):
        if np.any(n1 == 0) or np.any(n0 == 0):
            raise RuntimeError("a training set without one of the classes: raise n.")
        m1, m0 = s1 / n1[..., None], s0 / n0[..., None]
        w = m1 - m0
        return w, -np.einsum("...p,...p->...", w, (m1 + m0) / 2)

    def err_xy(self, s: Sample) -> float:
        one = s.y == 1
        w, b = self._rule(s.x[one].sum(0), np.array(one.sum()), s.x[~one].sum(0), np.array((~one).sum()))
        wmu, norm = float(w @ self.mu), float(np.linalg.norm(w))
        return float((stats.norm.cdf(-(wmu + b) / norm) + stats.norm.cdf(-(wmu - b) / norm)) / 2)

    def fold_losses(self, s: Sample, labels: np.ndarray) -> FoldLosses:
        K = self.K
        X, Y = _fold_blocks(s.x, labels, K), _fold_blocks(s.y, labels, K)
        one = (Y == 1)[..., None]
        S1, S0 = (X * one).sum(2), (X * ~one).sum(2)                         # (R, K, p) class sums per fold
        N1, N0 = one[..., 0].sum(2), (~one[..., 0]).sum(2)
        T1, T0, M1, M0 = S1.sum(1), S0.sum(1), N1.sum(1), N0.sum(1)
        a, b = _pairs(K)
        w, c = self._rule(T1[:, None] - S1[:, a] - S1[:, b], M1[:, None] - N1[:, a] - N1[:, b],
                          T0[:, None] - S0[:, a] - S0[:, b], M0[:, None] - N0[:, a] - N0[:, b])
        pair = np.full((labels.shape[0], K, K, self.n // K), np.nan)
        for fold, slot in ((a, (slice(None), b, a)), (b, (slice(None), a, b))):
            pred = (np.einsum("rPmp,rPp->rPm", X[:, fold], w) + c[..., None]) > 0
            pair[slot] = (pred != (Y[:, fold] == 1)).astype(float)
        w, c = self._rule(T1[:, None] - S1, M1[:, None] - N1, T0[:, None] - S0, M0[:, None] - N0)
        outer = ((np.einsum("rkmp,rkp->rkm", X, w) + c[..., None] > 0) != (Y == 1)).astype(float)
        return FoldLosses(pair, outer)

    def refit_losses(self, s: Sample):
        def losses(train, test):
            x, y = s.x[train], s.y[train]
            m1, m0 = x[y == 1].mean(0), x[y == 0].mean(0)
            pred = (s.x[test] - (m1 + m0) / 2) @ (m1 - m0) > 0
            return (pred != (s.y[test] == 1)).astype(float)
        return losses


SETTINGS = {"ols": OLS(), "ols_n60": OLS(n=60, name="ols_n60"), "centroid": Centroid()}


def check_against_driver(setting, s: Sample, rng: np.random.Generator, R: int = 2) -> None:
    """The batched losses equal those of :func:`nested_cv_losses` with a refitting callable."""
    ref = nested_cv_losses(setting.refit_losses(s), setting.n, setting.K, R, rng)
    mine = setting.fold_losses(s, ref.labels)
    np.testing.assert_allclose(mine.pair, ref.pair_losses, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(mine.outer, ref.outer_losses, rtol=1e-8, atol=1e-10)


def replicate(setting, seed: int, index: int, alpha: float) -> list[dict]:
    """One sample: the naive interval and both nested intervals for every R in REPETITIONS."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    s = setting.draw(rng)
    truth = setting.err_xy(s)
    labels = np.stack([KFold(setting.K).labels(setting.n, rng) for _ in range(max(REPETITIONS))])
    fl = setting.fold_losses(s, labels)
    z = stats.norm.ppf(1 - alpha / 2)
    e = fl.outer[0].ravel()
    half = z * e.std(ddof=1) / np.sqrt(setting.n)
    rows = [{"method": "naive CV", "R": 1, "estimate": e.mean(), "low": e.mean() - half, "high": e.mean() + half,
             "clip": "", "inflation": 1.0}]
    for R in REPETITIONS:
        for method in NESTED_CV_METHODS:
            res = nested_cv_interval(fl.pair[:R], fl.outer[:R], confidence_level=1 - alpha, method=method)
            clip = "floor" if res.se_raw < res.se_naive else ("ceiling" if res.se_raw > np.sqrt(setting.K) * res.se_naive
                                                               else "")
            rows.append({"method": method, "R": R, "estimate": res.estimate, "low": res.low, "high": res.high,
                         "clip": clip, "inflation": res.inflation})
    for row in rows:
        row.update(setting=setting.name, replicate=index, err_xy=truth)
    return rows


def summarise(records: pd.DataFrame) -> pd.DataFrame:
    """Coverage of Err_XY with its Wilson interval, widths, bias and clipping per (setting, method, R)."""
    out = []
    for (setting, method, R), g in records.groupby(["setting", "method", "R"], sort=False):
        cov = rejection_rate((g["low"] <= g["err_xy"]) & (g["err_xy"] <= g["high"]))
        err = g["estimate"] - g["err_xy"]
        out.append({"setting": setting, "method": method, "R": R, "replicates": cov.trials,
                    "coverage": cov.rate, "wilson_low": cov.low, "wilson_high": cov.high,
                    "mean_width": (g["high"] - g["low"]).mean(), "mean_est_minus_err_xy": err.mean(),
                    "rmse": np.sqrt((err ** 2).mean()), "mean_inflation": g["inflation"].mean(),
                    "clipped_floor": (g["clip"] == "floor").mean(), "clipped_ceiling": (g["clip"] == "ceiling").mean()})
    return pd.DataFrame(out)


def to_markdown(summary: pd.DataFrame, alpha: float, settings, seconds: float, command: str) -> str:
    lines = [f"# Nested CV: coverage of Err_XY against the number of repetitions R (nominal {1 - alpha:.0%})\n",
             f"Command: `{command}` ({seconds:.0f} s, commit {environment_info()['git_commit']}).\n"]
    for name, setting in settings.items():
        lines += [f"\n## {name}: {setting.describe()}\n",
                  "| method | R | coverage | Wilson 95% | mean width | mean(est - Err_XY) | RMSE | mean SE/SE_naive "
                  "| clipped at floor | at ceiling |",
                  "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
        for _, r in summary[summary["setting"] == name].iterrows():
            lines.append(f"| {r['method']} | {r['R']} | {r['coverage']:.3f} | [{r['wilson_low']:.3f}, "
                         f"{r['wilson_high']:.3f}] | {r['mean_width']:.4f} | {r['mean_est_minus_err_xy']:+.4f} | "
                         f"{r['rmse']:.4f} | {r['mean_inflation']:.2f} | {r['clipped_floor']:.1%} | "
                         f"{r['clipped_ceiling']:.1%} |")
        lines.append(f"\n{int(summary[summary['setting'] == name]['replicates'].iloc[0])} replicates (samples) per row.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=5000)
    parser.add_argument("--alpha", type=float, default=0.1, help="the package's default; 0.1 = 90%% intervals")
    parser.add_argument("--seed", type=int, default=20230101)
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--out", type=Path, default=None, help="directory for summary.md and summary.csv")
    args = parser.parse_args(argv)
    settings = {name: SETTINGS[name] for name in args.settings}
    start = time.perf_counter()
    rows = []
    for i, (name, setting) in enumerate(settings.items()):
        check_against_driver(setting, setting.draw(np.random.default_rng(i)), np.random.default_rng(100 + i))
        for r in range(args.replicates):
            rows += replicate(setting, args.seed + i, r, args.alpha)
    summary = summarise(pd.DataFrame(rows))
    command = ("PYTHONPATH=. python experiments/nested_cv_coverage.py --replicates "
               f"{args.replicates} --alpha {args.alpha} --seed {args.seed} --settings {' '.join(args.settings)}")
    text = to_markdown(summary, args.alpha, settings, time.perf_counter() - start, command)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        summary.to_csv(args.out / "summary.csv", index=False)
        (args.out / "summary.md").write_text(text)


if __name__ == "__main__":
    main()
