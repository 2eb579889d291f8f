"""Nedelko's Figure 4 under alternative readings of the paper, computed exactly.

The paper (``/work/shared/papers/nedelko_cv_accuracy_ru.md``) gives for the histogram
classifier only: exact computation, 3 cells, N = 12, K = 4, distributions "on a grid with a
fairly large step", one point per distribution, "mean errors of some risk estimates", and "the
result agrees qualitatively with the one for Fisher's discriminant". Everything else is a
reading. This script counts, for every combination of

- tie rule of the classifier (:data:`simstudy.learners.histogram.TIE_RULES`);
- grid of distributions: ``types/6`` (every p over the 6 (cell, class) types with coordinates
  in multiples of 1/6: the study's 462), ``types/12+`` (multiples of 1/12 with every type
  positive: also 462), ``cells x eta`` (cell probabilities in positive multiples of 1/6, and
  P(class 1 | cell) in {0, 1/4, 1/2, 3/4, 1} for each cell: 1,250);
- K-fold estimate: ``random`` (one uniformly random partition; its error averaged over
  partitions, as the study) or ``complete`` (the estimate averaged over all partitions);
- "mean Delta0": ``E[D0]`` = E Delta0(R_est, R) (the study; R is the risk of the rule trained on
  the sample), ``E[D0 vs ER]`` = E Delta0(R_est, E R) (the target is the mean risk),
  ``D0(E)`` = Delta0(E R_est, E R), ``MSE/D0`` = E (R_est - R)^2 / (2 E R_est (1 - E R_est) +
  2 E R (1 - E R));

the number of distributions where one estimate has the smaller mean Delta0 (differences below
1e-12 count as ties) and the spread of the ratio LOO / K-fold over the grid, with a breakdown by
Bayes error of the study's reading, and writes ``readings.csv``, ``readings.md`` (and, with
``--save-errors``, every mean error in ``errors.csv.gz``). It then checks two
distributions by an independent Monte Carlo (:func:`monte_carlo`, a vectorised learner written
separately from :mod:`simstudy.learners.histogram`).

Usage (from the project root; about 3 minutes of one core)::

    PYTHONPATH=. python experiments/nedelko_histogram_readings.py --out results/nedelko_histogram_readings
"""
from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from simstudy.engine.manifest import environment_info
from simstudy.inference.error_functions import delta0
from simstudy.learners.histogram import (
    TIE_RULES, compositions, empirical_risk, kfold_loss_distribution, loo_estimate, misclassified_types,
)

CELLS, N, K = 3, 12, 4
ESTIMATORS = ("loo", "kfold", "empirical")
READINGS = ("E[D0]", "E[D0 vs ER]", "D0(E)", "MSE/D0")
TOL = 1e-12


@dataclass(frozen=True)
class RuleTables:
    """Distribution-free quantities of every count vector of N examples for one tie rule."""

    tie: str
    counts: np.ndarray         # (S, 2C)
    misclassified: np.ndarray  # (S, 2C) loss of the trained rule on each type
    empirical: np.ndarray      # (S,)
    loo: np.ndarray            # (S,)
    kfold_values: np.ndarray   # (2N + 1,) possible K-fold estimates
    kfold: np.ndarray          # (S, 2N + 1) their probabilities over random partitions
    log_coef: np.ndarray       # (S,) log N! / prod n_t!

    @property
    def kfold_complete(self) -> np.ndarray:
        return self.kfold @ self.kfold_values


def rule_tables(tie: str, cells: int = CELLS, n: int = N, k: int = K) -> RuleTables:
    counts = compositions(n, 2 * cells)
    dists = [kfold_loss_distribution(c, k, tie) for c in counts]
    return RuleTables(tie, counts, np.array([misclassified_types(c, tie) for c in counts], dtype=float),
                      np.array([empirical_risk(c, tie) for c in counts]), np.array([loo_estimate(c, tie) for c in counts]),
                      dists[0].values, np.array([d.probabilities for d in dists]),
                      special.gammaln(n + 1) - special.gammaln(counts + 1).sum(axis=1))


# ----------------------------------------------------------------------------- grids
def grid_types(steps: int, positive: bool = False) -> np.ndarray:
    g = compositions(steps, 2 * CELLS)
    return (g[(g > 0).all(1)] if positive else g) / steps


def grid_cells_eta(cell_steps: int = 6, etas=(0, 0.25, 0.5, 0.75, 1)) -> np.ndarray:
    q = compositions(cell_steps, CELLS)
    q = q[(q > 0).all(1)] / cell_steps
    rows = []
    for qq in q:
        for eta in itertools.product(etas, repeat=CELLS):
            eta = np.array(eta)
            rows.append(np.column_stack([qq * (1 - eta), qq * eta]).ravel())   # type 2j + y
    return np.array(rows)


GRIDS = {"types/6": lambda: grid_types(6), "types/12+": lambda: grid_types(12, positive=True),
         "cells x eta": grid_cells_eta}


# ----------------------------------------------------------------------------- expectations
def sample_weights(t: RuleTables, p: np.ndarray) -> np.ndarray:
    """Multinomial probability of every count vector under p (0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(t.counts == 0, 0.0, t.counts * np.log(p))
    return np.exp(t.log_coef + term.sum(1))


@dataclass(frozen=True)
class Moments:
    """E est, E R, E (est - R)^2, E Delta0(est, R) and E Delta0(est, E R) under one distribution."""

    mean: float
    risk: float
    mse: float
    mean_delta0: float
    mean_delta0_mean_risk: float

    def error(self, reading: str) -> float:
        if reading == "E[D0]":
            return self.mean_delta0
        if reading == "E[D0 vs ER]":
            return self.mean_delta0_mean_risk
        if reading == "D0(E)":
            return float(delta0(self.mean, self.risk))
        den = 2 * self.mean * (1 - self.mean) + 2 * self.risk * (1 - self.risk)
        return self.mse / den if den > 0 else (0.0 if self.mse == 0 else np.inf)


def _point_moments(w, R, est) -> Moments:
    keep = w > 0
    w, R, est = w[keep], R[keep], est[keep]
    mean_risk = float(w @ R)
    return Moments(float(w @ est), mean_risk, float(w @ (est - R) ** 2), float(w @ delta0(est, R)),
                   _expect(w, delta0(est, mean_risk)))


def _expect(weights, values) -> float:
    """sum(weights * values) with 0 * inf = 0 (impossible outcomes do not count)."""
    possible = weights > 0
    return float(np.sum(weights[possible] * values[possible]))


def _random_kfold_moments(w, R, t: RuleTables) -> Moments:
    keep = w > 0
    joint = w[keep, None] * t.kfold[keep]                        # (S', 2N+1)
    v, R = t.kfold_values[None, :], R[keep, None]
    d = delta0(np.broadcast_to(v, joint.shape), np.broadcast_to(R, joint.shape))
    mean_risk = float(w[keep] @ R[:, 0])
    return Moments(float(joint.sum(0) @ t.kfold_values), mean_risk, float((joint * (v - R) ** 2).sum()),
                   _expect(joint, d), _expect(joint.sum(0), delta0(t.kfold_values, mean_risk)))


def moments(t: RuleTables, p: np.ndarray) -> dict[str, Moments]:
    """Moments of every estimator (``kfold`` = random partition, ``kfold_complete``) under p."""
    w = sample_weights(t, p)
    R = t.misclassified @ p
    return {"loo": _point_moments(w, R, t.loo), "empirical": _point_moments(w, R, t.empirical),
            "kfold": _random_kfold_moments(w, R, t), "kfold_complete": _point_moments(w, R, t.kfold_complete)}


def grid_errors(t: RuleTables, grid: np.ndarray) -> pd.DataFrame:
    """One row per (distribution, estimator, reading): the mean error under that reading."""
    rows = []
    for g, p in enumerate(grid):
        bayes = float(np.minimum(p[0::2], p[1::2]).sum())
        for est, mom in moments(t, p).items():
            for reading in READINGS:
                rows.append({"distribution": g, "bayes_error": bayes, "estimator": est, "reading": reading,
                             "error": mom.error(reading), "mean_estimate": mom.mean, "mean_true_risk": mom.risk})
    return pd.DataFrame(rows)


def count_table(errors: pd.DataFrame) -> pd.DataFrame:
    """Per (reading, K-fold variant): how often each estimate has the smaller mean error."""
    out = []
    for reading, kf in itertools.product(READINGS, ("kfold", "kfold_complete")):
        frame = errors[errors["reading"] == reading]
        wide = frame.pivot(index="distribution", columns="estimator", values="error")
        loo, kfold, emp = wide["loo"], wide[kf], wide["empirical"]
        out.append({"reading": reading, "kfold": "random" if kf == "kfold" else "complete", "distributions": len(wide),
                    "loo < kfold": int((loo < kfold - TOL).sum()), "kfold < loo": int((kfold < loo - TOL).sum()),
                    "empirical smallest": int(((emp < loo - TOL) & (emp < kfold - TOL)).sum()),
                    "loo < empirical": int((loo < emp - TOL).sum()), "kfold < empirical": int((kfold < emp - TOL).sum()),
                    "all equal": int(((loo - kfold).abs().le(TOL) & (loo - emp).abs().le(TOL)).sum()),
                    **_ratio_spread(loo, kfold),
                    "mean loo": float(loo[np.isfinite(loo)].mean()), "mean kfold": float(kfold[np.isfinite(kfold)].mean()),
                    "mean empirical": float(emp[np.isfinite(emp)].mean())})
    return pd.DataFrame(out)


def _ratio_spread(loo: pd.Series, kfold: pd.Series) -> dict:
    """Median and extremes of LOO / K-fold over the distributions where both are positive and finite."""
    ok = (loo > TOL) & (kfold > TOL) & np.isfinite(loo) & np.isfinite(kfold)
    r = (loo[ok] / kfold[ok]).to_numpy()
    if r.size == 0:
        return {"loo/kfold median": np.nan, "loo/kfold min": np.nan, "loo/kfold max": np.nan,
                "loo within 10% of kfold": 0}
    return {"loo/kfold median": float(np.median(r)), "loo/kfold min": float(r.min()), "loo/kfold max": float(r.max()),
            "loo within 10% of kfold": int((np.abs(r - 1) <= 0.1).sum())}


def bayes_breakdown(errors: pd.DataFrame, reading: str = "E[D0]") -> pd.DataFrame:
    """Per Bayes error of the distribution: counts and mean errors of the three estimates."""
    frame = errors[errors["reading"] == reading]
    wide = frame.pivot(index="distribution", columns="estimator", values="error")
    bayes = frame.groupby("distribution")["bayes_error"].first().round(6).loc[wide.index]
    loo, kfold, emp = wide["loo"], wide["kfold"], wide["empirical"]
    table = pd.DataFrame({"distributions": wide.groupby(bayes).size(),
                          "loo < kfold": (loo < kfold - TOL).groupby(bayes).sum(),
                          "kfold < loo": (kfold < loo - TOL).groupby(bayes).sum(),
                          "empirical smallest": ((emp < loo - TOL) & (emp < kfold - TOL)).groupby(bayes).sum(),
                          "mean loo": loo.groupby(bayes).mean(), "mean kfold": kfold.groupby(bayes).mean(),
                          "mean empirical": emp.groupby(bayes).mean()})
    return table.rename_axis("bayes_error").reset_index()


# ----------------------------------------------------------------------------- Monte Carlo
def _majority(c0, c1, o0, o1, tie):
    """Independent re-implementation: P(predict 1) per cell from class counts c0, c1 and overall o0, o1."""
    tied = {"overall": (o1 > o0).astype(float), "zero": np.zeros_like(o0, dtype=float),
            "coin": np.full(o0.shape, 0.5)}[tie]
    return np.where(c1 > c0, 1.0, np.where(c1 < c0, 0.0, tied))


def monte_carlo(p: np.ndarray, samples: int, rng: np.random.Generator, tie: str = "overall", chunk: int = 20000):
    """Delta0 of LOO, one random 4-fold partition and the empirical risk, by simulation.

    Returns a dict estimator -> array of per-sample Delta0 values.
    """
    out = {e: [] for e in ESTIMATORS}
    m = N // K
    for start in range(0, samples, chunk):
        B = min(chunk, samples - start)
        types = rng.choice(2 * CELLS, size=(B, N), p=p)
        cell, cls = types // 2, types % 2
        cnt = np.zeros((B, CELLS, 2))
        np.add.at(cnt, (np.arange(B)[:, None], cell, cls), 1)
        tot = cnt.sum(1)                                                    # (B, 2) class totals
        q1 = _majority(cnt[..., 0], cnt[..., 1], tot[:, None, 0], tot[:, None, 1], tie)   # (B, C)
        loss_type = np.stack([q1, 1 - q1], axis=-1)                          # (B, C, 2): loss of class y in cell j
        risk = (loss_type.reshape(B, -1) * p).sum(1)
        emp = (loss_type * cnt).sum((1, 2)) / N
        # LOO: the point (j, y) removed changes its cell's counts and the class totals
        loo = np.zeros(B)
        for j, y in itertools.product(range(CELLS), range(2)):
            c = cnt[:, j].copy()
            c[:, y] -= 1
            o = tot.copy()
            o[:, y] -= 1
            q = _majority(c[:, 0], c[:, 1], o[:, 0], o[:, 1], tie)
            loo += cnt[:, j, y] * (q if y == 0 else 1 - q)
        loo /= N
        # one random partition into K folds of m
        fold_of = np.argsort(rng.random((B, N)), axis=1) // m               # fold label of each position
        kf = np.zeros(B)
        for f in range(K):
            in_f = fold_of == f
            fc = np.zeros((B, CELLS, 2))
            np.add.at(fc, (np.nonzero(in_f)[0], cell[in_f], cls[in_f]), 1)
            tr, trt = cnt - fc, tot - fc.sum(1)
            q = _majority(tr[..., 0], tr[..., 1], trt[:, None, 0], trt[:, None, 1], tie)
            kf += (fc[..., 0] * q + fc[..., 1] * (1 - q)).sum(1)
        kf /= N
        for name, est in (("loo", loo), ("kfold", kf), ("empirical", emp)):
            out[name].append(delta0(est, risk))
    return {k: np.concatenate(v) for k, v in out.items()}


def monte_carlo_check(t: RuleTables, p: np.ndarray, samples: int, rng) -> pd.DataFrame:
    """Exact E[Delta0] against the simulation, with z-scores, for one distribution."""
    exact = moments(t, p)
    sim = monte_carlo(p, samples, rng, t.tie)
    rows = []
    for est in ESTIMATORS:
        v = sim[est]
        se = v.std(ddof=1) / np.sqrt(v.size)
        rows.append({"p": np.array2string(p, precision=3, separator=","), "estimator": est,
                     "exact E[D0]": exact[est].mean_delta0, "simulated": v.mean(), "mc_se": se,
                     "z": (v.mean() - exact[est].mean_delta0) / se})
    d = sim["empirical"] - sim["loo"]
    rows.append({"p": rows[0]["p"], "estimator": "empirical - loo (paired)", "exact E[D0]":
                 exact["empirical"].mean_delta0 - exact["loo"].mean_delta0, "simulated": d.mean(),
                 "mc_se": d.std(ddof=1) / np.sqrt(d.size), "z": np.nan})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- report
def _md(frame: pd.DataFrame, floats: str = "{:.4g}") -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in frame.iterrows():
        lines.append("| " + " | ".join(floats.format(v) if isinstance(v, float) else str(v) for v in r) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--mc-samples", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--save-errors", action="store_true", help="also write errors.csv.gz (about 1.3 MB)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    grids = {name: make() for name, make in GRIDS.items()}
    tables, errors = [], {}
    for tie in TIE_RULES:
        t = rule_tables(tie)
        if tie == "overall":
            overall = t
        for name, grid in grids.items():
            e = grid_errors(t, grid)
            errors[tie, name] = e
            c = count_table(e)
            c.insert(0, "grid", name)
            c.insert(0, "tie", tie)
            tables.append(c)
    counts = pd.concat(tables, ignore_index=True)
    # two distributions where the empirical risk wins: the study grid's largest margin, and an interior one
    e = errors["overall", "types/6"]
    wide = e[e["reading"] == "E[D0]"].pivot(index="distribution", columns="estimator", values="error")
    margin = np.minimum(wide["loo"], wide["kfold"]) - wide["empirical"]
    picks = [grids["types/6"][int(margin.idxmax())], np.array([0.25, 0.1, 0.05, 0.2, 0.3, 0.1])]
    rng = np.random.default_rng(args.seed)
    mc = pd.concat([monte_carlo_check(overall, p, args.mc_samples, rng) for p in picks], ignore_index=True)
    seconds = time.perf_counter() - start
    text = ["# Nedelko Figure 4 under alternative readings (3 cells, N = 12, K = 4, exact)\n",
            f"Command: `PYTHONPATH=. python experiments/nedelko_histogram_readings.py --mc-samples {args.mc_samples} "
            f"--seed {args.seed}` ({seconds:.0f} s, commit {environment_info()['git_commit']}). "
            f"Counts: distributions where one estimate's mean error is "
            f"smaller by more than {TOL:g}.\n", _md(counts),
            "\n## By Bayes error: grid types/6, E[D0], one random partition (the study's reading)\n"]
    for tie in TIE_RULES:
        text += [f"\nTie rule `{tie}`:\n", _md(bayes_breakdown(errors[tie, "types/6"]))]
    text += ["\n## Independent Monte Carlo (tie rule `overall`)\n", _md(mc)]
    print("\n".join(text))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        counts.to_csv(args.out / "readings.csv", index=False)
        if args.save_errors:
            pd.concat([frame.assign(tie=tie, grid=grid) for (tie, grid), frame in errors.items()]).to_csv(
                args.out / "errors.csv.gz", index=False)
        mc.to_csv(args.out / "monte_carlo.csv", index=False)
        (args.out / "readings.md").write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
