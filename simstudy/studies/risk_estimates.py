"""Nedelko: accuracy of risk estimates for Fisher's discriminant on the 2-D logistic model.

Per replicate (a sample of N points from the model with Bayes error R0), Fisher's
discriminant with an ERM threshold (:mod:`simstudy.learners.fisher`) is trained on the whole
sample; its true risk R is exact (:func:`linear_rule_risk`). Estimates of R:

- ``loo``: leave-one-out CV (N exact downdated fits);
- ``kfold``: K-fold CV (one random partition into K equal folds);
- ``empirical``: the empirical risk (resubstitution);
- ``rhat``: empirical risk plus a bias correction b(R_emp) calibrated by simulation over the
  model family (see :func:`optimism_table`);
- ``boot632`` and ``boot632plus``: Efron's .632 and .632+ bootstrap (B resamples).

Each estimate is compared with R by the error functions of
:mod:`simstudy.inference.error_functions`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from simstudy.inference.error_functions import ERROR_FUNCTIONS
from simstudy.learners.fisher import fisher_fit, predict_rules
from simstudy.metrics import mean_summary
from simstudy.populations.synthetic import LogisticPopulation, linear_rule_risk
from simstudy.records import read_records, timing_by_condition, write_records
from simstudy.report.tables import frame_to_markdown, markdown_table
from simstudy.rng import condition_key, replicate_rng
from simstudy.runner import Chunk
from simstudy.schemes import KFold
from simstudy.studies.base import RunnerOptions, StudyOutput, phase_manifest, run_phase

log = logging.getLogger("simstudy")

__all__ = ["ESTIMATORS", "FisherCondition", "FisherRiskWorker", "OptimismWorker", "make_conditions",
           "optimism_table", "apply_rhat", "aggregate", "bootstrap_632", "execute", "write_reports"]

ESTIMATORS = ("loo", "kfold", "empirical", "rhat", "boot632", "boot632plus")


@dataclass(frozen=True)
class FisherCondition:
    """Sample size N and Bayes error R0 of one cell of the design."""

    sample_size: int
    bayes_error: float
    key: str


def make_conditions(sample_sizes: Sequence[int], bayes_errors: Sequence[float], purpose: str = "study"):
    """Conditions for every (N, R0); ``purpose`` separates the R_hat calibration streams."""
    return [FisherCondition(int(N), float(r0), condition_key({"study": "nedelko_fisher", "purpose": purpose,
                                                               "N": int(N), "bayes_error": float(r0)}))
            for N in sample_sizes for r0 in bayes_errors]


def _draw(cond: FisherCondition, population: LogisticPopulation, seed: int, replicates: range, K: int, B: int):
    N = cond.sample_size
    X = np.empty((len(replicates), N, 2))
    y = np.empty((len(replicates), N), dtype=np.int64)
    folds = np.empty((len(replicates), N), dtype=np.int64)
    boot = np.empty((len(replicates), B, N))
    for j, r in enumerate(replicates):
        rng = replicate_rng(seed, cond.key, r)
        s = population.sample(N, rng)
        X[j], y[j] = s.X, s.y
        if K:
            folds[j] = KFold(K).labels(N, rng)
        if B:
            boot[j] = rng.multinomial(N, np.full(N, 1.0 / N), size=B)
    return X, y, folds, boot


def bootstrap_632(errors_oob: np.ndarray, oob: np.ndarray, emp: np.ndarray, y: np.ndarray, pred_full: np.ndarray):
    """Efron & Tibshirani (1997) .632 and .632+ estimates.

    Parameters
    ----------
    errors_oob : ndarray (R, B, N)
        Loss of the b-th bootstrap rule on point i.
    oob : ndarray of bool (R, B, N)
        Point i is out of bootstrap sample b.
    emp : ndarray (R,)
        Empirical risk (resubstitution error) of the full-sample rule.
    y, pred_full : ndarray (R, N)
        Labels and the full-sample rule's predictions (for the no-information rate).

    Returns
    -------
    err1, e632, e632plus : ndarray (R,)
        Leave-one-out bootstrap error Err(1) (mean over points that are out of at least one
        resample of their mean out-of-bag loss), .632 and .632+ estimates.
    """
    n_oob = oob.sum(axis=1)                                   # (R, N)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_point = (errors_oob * oob).sum(axis=1) / n_oob
    err1 = np.nanmean(np.where(n_oob > 0, per_point, np.nan), axis=1)
    e632 = 0.368 * emp + 0.632 * err1
    p1 = y.mean(axis=1)
    q1 = pred_full.mean(axis=1)
    gamma = p1 * (1 - q1) + (1 - p1) * q1                     # no-information error rate
    err1_prime = np.minimum(err1, gamma)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where((err1_prime > emp) & (gamma > emp), (err1_prime - emp) / (gamma - emp), 0.0)
    rel = np.clip(rel, 0.0, 1.0)                              # relative overfitting rate R'
    weight = 0.632 / (1 - 0.368 * rel)
    e632plus = (1 - weight) * emp + weight * err1_prime
    return err1, e632, e632plus


@dataclass
class FisherRiskWorker:
    """All estimates for the replicates of one chunk, batched across replicates."""

    conditions: list[FisherCondition]
    seed: int
    K: int = 5
    bootstrap: int = 50

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        N, K, B = cond.sample_size, self.K, self.bootstrap
        population = LogisticPopulation(cond.bayes_error)
        reps = range(chunk.start, chunk.stop)
        X, y, folds, boot = _draw(cond, population, self.seed, reps, K, B)
        R = len(reps)
        eye = np.eye(N)
        fold_onehot = (folds[:, None, :] == np.arange(K)[None, :, None]).astype(float)   # (R, K, N)
        weights = np.concatenate([np.ones((R, 1, N)), 1.0 - eye[None].repeat(R, 0),
                                  1.0 - fold_onehot] + ([boot] if B else []), axis=1)
        rules = fisher_fit(X, y, weights)
        pred = predict_rules(rules, X)                                                  # (R, F, N)
        loss = pred != y[:, None, :]
        full = slice(0, 1)
        loo = slice(1, 1 + N)
        kf = slice(1 + N, 1 + N + K)
        bs = slice(1 + N + K, 1 + N + K + B)
        true_risk = linear_rule_risk(rules.w[:, 0], rules.c[:, 0], alpha=population.alpha)
        emp = loss[:, full].mean(axis=(1, 2))
        loo_est = np.diagonal(loss[:, loo], axis1=1, axis2=2).mean(axis=1)
        kfold_est = (loss[:, kf] * fold_onehot).sum(axis=(1, 2)) / N
        frame = pd.DataFrame({
            "sample_size": N, "bayes_error": cond.bayes_error, "condition_key": cond.key,
            "replicate": np.arange(chunk.start, chunk.stop), "true_risk": true_risk,
            "empirical": emp, "loo": loo_est, "kfold": kfold_est,
        })
        if B:  # study.bootstrap = 0 skips the bootstrap estimates
            _, frame["boot632"], frame["boot632plus"] = bootstrap_632(loss[:, bs], boot == 0, emp, y, pred[:, 0])
        frame["error"] = ""
        return frame


@dataclass
class OptimismWorker:
    """Calibration replicates for R_hat: empirical and true risk of the full-sample rule only."""

    conditions: list[FisherCondition]
    seed: int

    def __call__(self, chunk: Chunk) -> pd.DataFrame:
        cond = self.conditions[chunk.condition]
        population = LogisticPopulation(cond.bayes_error)
        X, y, _, _ = _draw(cond, population, self.seed, range(chunk.start, chunk.stop), 0, 0)
        rules = fisher_fit(X, y, np.ones((X.shape[0], 1, cond.sample_size)))
        emp = (predict_rules(rules, X)[:, 0] != y).mean(axis=1)
        true_risk = linear_rule_risk(rules.w[:, 0], rules.c[:, 0], alpha=population.alpha)
        return pd.DataFrame({"sample_size": cond.sample_size, "bayes_error": cond.bayes_error,
                             "empirical": emp, "true_risk": true_risk})


RHAT_METHODS = ("mean_curve", "conditional_max")


def optimism_table(calibration: pd.DataFrame, method: str = "mean_curve", min_count: int = 30) -> pd.DataFrame:
    """The bias correction b(k / N) that R_hat = R_emp + b(R_emp) adds to the empirical risk.

    Nedelko's R_hat adds to the empirical risk "an estimate of its maximal bias" (his refs.
    6-7, not available). Two documented versions, both calibrated by simulation over the
    distribution family (the logistic model over ``rhat_grid``) at the same N:

    - ``"mean_curve"`` (default): each family member R0 has a mean empirical risk
      E[R_emp](R0) and a mean optimism E[R - R_emp](R0); b(r) is the optimism of the member
      whose mean empirical risk is r (linear interpolation along the curve sorted by E[R_emp],
      constant beyond its ends).
    - ``"conditional_max"``: the worst case given the observed value,
      b(k/N) = max over R0 of E[R - R_emp | R_emp = k/N, R0], over cells with at least
      ``min_count`` samples (a k without such a cell takes the nearest k's value). This is an
      upper-bound style correction: it is large at small R_emp, where rare samples from noisy
      members of the family dominate.

    Returns
    -------
    DataFrame with columns sample_size, errors (k), empirical_risk (k/N), bias, method.
    """
    if method not in RHAT_METHODS:
        raise ValueError(f"study.rhat_method={method!r}: use one of {RHAT_METHODS}.")
    rows = []
    for N, g in calibration.groupby("sample_size"):
        g = g.assign(optimism=g["true_risk"] - g["empirical"])
        k_all = np.arange(N + 1)
        if method == "mean_curve":
            curve = g.groupby("bayes_error")[["empirical", "optimism"]].mean().sort_values("empirical")
            # upper envelope where several members share a mean empirical risk
            x, yv = curve["empirical"].to_numpy(), curve["optimism"].to_numpy()
            bias = np.interp(k_all / N, x, yv)
        else:
            k = np.rint(g["empirical"] * N).astype(int)
            cells = (g.assign(k=k).groupby(["k", "bayes_error"])["optimism"].agg(["mean", "count"]).reset_index())
            cells = cells[cells["count"] >= min_count]
            best = cells.groupby("k")["mean"].max()
            known = best.index.to_numpy()
            bias = np.array([best.loc[known[np.argmin(np.abs(known - kk))]] for kk in k_all])
        rows += [{"sample_size": N, "errors": int(kk), "empirical_risk": kk / N, "bias": float(b), "method": method}
                 for kk, b in zip(k_all, bias)]
    return pd.DataFrame(rows)


def apply_rhat(records: pd.DataFrame, table: pd.DataFrame) -> pd.Series:
    """R_hat = R_emp + b(R_emp), clipped to [0, 1]."""
    lookup = {(int(r.sample_size), int(r.errors)): r.bias for r in table.itertuples()}
    k = np.rint(records["empirical"] * records["sample_size"]).astype(int)
    bias = [lookup[(int(N), int(kk))] for N, kk in zip(records["sample_size"], k)]
    return np.clip(records["empirical"] + np.asarray(bias), 0.0, 1.0)


def aggregate(records: pd.DataFrame) -> pd.DataFrame:
    """One row per (N, R0, estimator): means, bias, RMSE and mean error functions with MC SEs."""
    rows = []
    for (N, r0), g in records.groupby(["sample_size", "bayes_error"], sort=True):
        ok = g[g["error"] == ""]
        truth = ok["true_risk"].to_numpy()
        tr = mean_summary(truth)
        for est in ESTIMATORS:
            if est not in ok:
                continue
            e = ok[est].to_numpy()
            diff = mean_summary(e - truth)
            sq = mean_summary((e - truth) ** 2)
            row = {"sample_size": N, "bayes_error": r0, "estimator": est, "replicates": len(ok),
                   "failed": len(g) - len(ok), "mean_estimate": e.mean(), "mean_estimate_se": mean_summary(e).se,
                   "mean_true_risk": tr.mean, "mean_true_risk_se": tr.se, "bias": diff.mean, "bias_se": diff.se,
                   "rmse": np.sqrt(sq.mean), "rmse_se": sq.se / (2 * np.sqrt(sq.mean)) if sq.mean > 0 else np.nan}
            for name, fn in ERROR_FUNCTIONS.items():
                d = fn(np.clip(e, 0, 1), truth)
                finite = np.isfinite(d)
                row[f"mean_{name}"] = d.mean() if finite.all() else np.inf
                row[f"mean_{name}_se"] = mean_summary(d).se if finite.all() else np.nan
                row[f"infinite_{name}"] = int((~finite).sum())
            rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- run-engine hooks
def as_list(value) -> list:
    """A scalar or a sequence from the config, as a list."""
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__") and not isinstance(value, str):
        return list(value)
    return [value]


def execute(cfg, run_dir: Path, options: RunnerOptions) -> StudyOutput:
    """Calibrate R_hat, run the replicates, write records, tables and figures."""
    study = cfg.study
    sizes = [int(v) for v in as_list(study.sample_size)]
    grid = [float(v) for v in as_list(study.bayes_error)]
    # phase 1: R_hat calibration over the family (its own random streams); 0 replicates skips R_hat
    table, cal_report = None, None
    if study.rhat_calibration_replicates > 0:
        cal_conditions = make_conditions(sizes, [float(v) for v in study.rhat_grid], purpose="rhat_calibration")
        cal_report = run_phase(OptimismWorker(cal_conditions, int(study.seed)),
                               [study.rhat_calibration_replicates] * len(cal_conditions), run_dir, options,
                               phase="rhat_calibration", desc="R_hat calibration")
        table = optimism_table(cal_report.records, str(study.rhat_method), int(study.rhat_min_count))
        table.to_csv(run_dir / "rhat_bias.csv", index=False)
    # phase 2: the study's replicates
    conditions = make_conditions(sizes, grid)
    worker = FisherRiskWorker(conditions, int(study.seed), int(study.K), int(study.bootstrap))
    log.info("nedelko_fisher: N=%s, %d Bayes errors x %d replicates -> %s", sizes, len(grid), study.replicates, run_dir)
    report = run_phase(worker, [study.replicates] * len(conditions), run_dir, options, phase="replicates",
                       desc="nedelko_fisher",
                       reproduce=lambda c, row: (f"study.sample_size={conditions[c].sample_size} "
                                                 f"study.bayes_error={conditions[c].bayes_error}"))
    records = report.records
    write_records(records, run_dir / "replicates.parquet")
    summary, _, figures = write_reports(run_dir, study, records, table)
    timing = timing_by_condition(report.outputs)
    manifest = {
        **phase_manifest(report),
        "rhat_calibration_shards": phase_manifest(cal_report) if cal_report is not None else None,
        "population": {"name": "logistic", "model": "x ~ N(0, I2), P(y=1|x) = sigmoid(alpha (x1 + x2))"},
        "learner": {"name": "fisher", "threshold": "empirical risk minimisation, tie -> closest to Fisher midpoint"},
        "rhat_calibration": {"method": str(study.rhat_method), "bayes_errors": list(study.rhat_grid),
                             "replicates": int(study.rhat_calibration_replicates),
                             "min_count": int(study.rhat_min_count)},
        "conditions": [{"sample_size": c.sample_size, "bayes_error": c.bayes_error, "condition_key": c.key,
                        "replicates": int(study.replicates), **timing.get(i, {})} for i, c in enumerate(conditions)],
    }
    return StudyOutput(summary, None, records, figures, manifest)


def write_reports(run_dir: Path, study, records: pd.DataFrame | None = None, table: pd.DataFrame | None = None):
    """Aggregate and write ``summary.csv``, ``summary.md`` and one Figure-3-style PNG per N."""
    run_dir = Path(run_dir)
    if records is None:
        records = read_records(run_dir / "replicates.parquet")
    if table is None and (run_dir / "rhat_bias.csv").is_file():
        table = pd.read_csv(run_dir / "rhat_bias.csv")
    records = records.copy()
    if table is not None:
        records["rhat"] = apply_rhat(records, table)
    summary = aggregate(records)
    summary.to_csv(run_dir / "summary.csv", index=False)
    cols = ["sample_size", "bayes_error", "estimator", "mean_true_risk", "mean_estimate", "bias", "rmse",
            "mean_delta0", "mean_delta0_se"]
    md = [f"# Nedelko: risk estimates for Fisher's discriminant ({study['replicates']} samples per point)\n",
          "Mean true risk, mean estimate, bias, RMSE and mean Delta0 per (N, R0, estimator); "
          "all columns with standard errors are in summary.csv.\n"]
    for N, g in summary.groupby("sample_size"):
        md.append(f"\n## N = {N}\n\n" + frame_to_markdown(g[cols]))
        md.append("\n" + _winners_markdown(g))
    (run_dir / "summary.md").write_text("\n".join(md))
    from simstudy.report.risk_figures import risk_estimate_figure  # matplotlib: only when writing reports

    figures = [risk_estimate_figure(g, run_dir / "figures" / f"fig3_N{N}.png", N, study.get("K", 5))
               for N, g in summary.groupby("sample_size")]
    return summary, None, figures


def _winners_markdown(g: pd.DataFrame) -> str:
    """Which estimator has the smallest mean Delta0 at each R0 (with LOO vs K-fold side by side)."""
    rows = []
    for r0, h in g.groupby("bayes_error"):
        h = h.set_index("estimator")
        best = h["mean_delta0"].idxmin()  # estimators not computed are absent
        loo, kf = h.loc["loo"], h.loc["kfold"]
        z = (loo["mean_delta0"] - kf["mean_delta0"]) / np.hypot(loo["mean_delta0_se"], kf["mean_delta0_se"])
        rows.append([r0, best, float(h.loc[best, "mean_delta0"]), float(loo["mean_delta0"]),
                     float(kf["mean_delta0"]), float(z)])
    return markdown_table(["R0", "best (min mean Delta0)", "its mean Delta0", "LOO", "K-fold",
                           "z(LOO - K-fold), unpaired"], rows)


def warm_up() -> None:
    """Load the Fisher and exact-risk kernels in a fresh worker (see :mod:`simstudy.warmup`)."""
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [0.5, -1.0]])
    y = np.array([0, 1, 1, 0])
    rules = fisher_fit(X[None], y[None], np.ones((1, 1, 4)))
    predict_rules(rules, X[None])
    linear_rule_risk(rules.w.reshape(-1, 2), rules.c.reshape(-1), alpha=1.0)
