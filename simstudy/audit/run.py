"""The audit: the user's data as the population, the rho_hat study at the user's n and at n/2.

Protocol (Grandvalet & Bengio 2006, Table 2): the N rows of the user's data are the
population. Setting "n": training sets of n_sim = N rounded down to a multiple of K rows drawn
WITH replacement (i.i.d. from the empirical distribution, the user's situation as closely as a
finite population allows); setting "n/2": training sets of N/2 (rounded down to a multiple of K)
drawn WITHOUT replacement (a second look at a size where rho is larger). In each, the rho_hat
study (:mod:`simstudy.studies.rho_hat`) measures the size and power of every procedure for
H0: mu = the expected CV error at that size. The user's own K-fold CV (all N rows, folds of
sizes floor(N/K) and ceil(N/K)) gives the estimate and every procedure's interval; the
recommended one (:mod:`.recommend`) is reported first.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.audit.data import resolve_task, user_population, without_replacement
from simstudy.audit.recommend import Recommendation, check_rule, recommend
from simstudy.errors import ConfigError

__all__ = ["AuditResult", "audit"]


@dataclass
class AuditResult:
    """What :func:`audit` found.

    Attributes
    ----------
    n : int
        Rows of the user's data.
    K : int
    estimate : float
        The user's K-fold CV estimate (mean loss).
    recommendation : Recommendation
    intervals : DataFrame
        The user's interval by every procedure (low, high, width), recommended first.
    rho : dict
        True rho (and its se) in each simulated setting: {"n": (n_sim, rho, se), "n/2": ...}.
    tests : dict of DataFrame
        Size and power of every procedure per setting ("n", "n/2"), with Wilson intervals.
    summaries : dict of DataFrame
        The rho_hat study's summary per setting.
    settings : dict
        Everything that determined the numbers (learner, loss, K, alpha, replicates, seed...).
    seconds : float
        Wall time.
    files : list of Path
        Report files written (when ``out`` was given).
    """

    n: int
    K: int
    estimate: float
    recommendation: Recommendation
    intervals: pd.DataFrame
    rho: dict[str, tuple[int, float, float]]
    tests: dict[str, pd.DataFrame]
    summaries: dict[str, pd.DataFrame]
    settings: dict[str, Any]
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)

    @property
    def interval(self) -> tuple[float, float]:
        """(low, high) of the recommended interval."""
        row = self.intervals.iloc[0]
        return float(row["low"]), float(row["high"])

    def _repr_html_(self) -> str:
        """What Jupyter shows: the recommendation, the intervals, the calibration, the figure."""
        from simstudy.report.notebook import audit_result_html

        return audit_result_html(self)

    def markdown(self) -> str:
        from simstudy.audit.report import audit_markdown

        return audit_markdown(self)


def _check_int(name: str, value: Any, low: int, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"{name}={value!r} is invalid: {fix}")
    return int(value)


def _user_intervals(worker, pop, K: int, alpha: float, seed: int, rho_n: float) -> tuple[float, pd.DataFrame]:
    """The user's own K-fold CV (all rows) and every procedure's interval for its expected error."""
    from simstudy.populations.base import Sample
    from simstudy.schemes import KFold
    from simstudy.studies.rho_hat.aggregate import procedure_tests

    n = pop.size
    rng = np.random.default_rng([seed, 1])
    labels = KFold(K).labels(n, rng)
    row = worker.analyse(Sample(pop.X, pop.y, np.arange(n)), labels, K, rng, np.random.default_rng([seed, 2]),
                         np.random.default_rng([seed, 3]))
    group = pd.DataFrame([{**row, "n": n, "K": K}])
    out = []
    for name, (mask, test, rho_hat) in procedure_tests(group, rho_n).items():
        if not mask.any() or name == "oracle_rho":
            continue
        ci = test(0.0).confidence_interval(1 - alpha)
        low, high = float(np.ravel(ci.low)[0]), float(np.ravel(ci.high)[0])
        out.append({"procedure": name, "low": low, "high": high, "width": high - low,
                    "rho_hat": float(np.ravel(rho_hat)[0])})
    return float(row["mu_hat"]), pd.DataFrame(out)


def audit(data: Any = None, *, X: Any = None, y: Any = None, learner: Any = "tree", loss: str | None = None,
          K: int = 10, replicates: int = 1000, splits: int = 5, nested_cv_replicates: int = 200,
          alpha: float = 0.05, slack: float = 0.01, confidence: float = 0.95, seed: int = 0,
          label_column: Any = "auto", positive: Any = None, n_jobs: int = -1, progress: bool = True,
          out: str | Path | None = None) -> AuditResult:
    """Audit K-fold CV of ``learner`` on the user's data: which interval can be trusted, and what is it?

    Parameters
    ----------
    data : path, optional
        A data file (CSV/whitespace; the class in the first or last column, a regression target in
        the last; see ``label_column``).
    X, y : arrays, optional
        Instead of ``data``: features (rows x columns) and class labels or real targets.
    learner : str, scikit-learn estimator or simstudy learner
        A preset name (classifiers "tree", "knn", "lda", "logreg", ...; regressors
        "ridge_regressor", "tree_regressor", "knn_regressor", "ols") or an estimator. A regressor
        makes a regression audit (:mod:`simstudy.audit.data`).
    loss : str, optional
        Classification: "zero_one" (default) or "log_loss"; regression: "squared" (default) or
        "absolute".
    K : int
        Folds (>= 3; nested CV needs 3).
    replicates : int
        Simulated training sets per setting (>= 20): the size's Monte Carlo error is
        sqrt(alpha (1 - alpha) / replicates), 0.7 points at the default 1,000 (the
        recommendation rule needs evidence, see :mod:`simstudy.audit.recommend`; 1,000 fit the
        5-minute budget for 5,000 rows with a tree on 2 cores).
    splits : int
        B splits into disjoint halves of the subsample estimators (>= 1; 2B CVs of n/2 points).
    nested_cv_replicates : int
        Replicates per setting that also run nested CV (0: none; 200 by default: with fewer than 61
        the rule cannot trust nested CV at all, since even 0 rejections leave a Wilson upper bound
        above 6%).
    alpha : float
        1 - confidence level of the intervals, in (0, 0.5).
    slack, confidence : float
        The recommendation rule (:mod:`simstudy.audit.recommend`): a procedure is trusted when the
        upper end of the ``confidence`` Wilson interval of its simulated size is at most
        alpha + ``slack`` in both settings (defaults 0.01 and 0.95).
    seed : int
    label_column, positive :
        As ``population.label_column`` / ``population.positive`` of a tabular population.
    n_jobs : int
        Worker processes for the simulations (-1: all cores).
    progress : bool
        A progress bar per setting.
    out : path, optional
        Folder for report.md, report.html, audit figure and CSV tables.

    Returns
    -------
    AuditResult

    Raises
    ------
    simstudy.errors.UserError
        Bad input, before any simulation: the field, the value and the fix.
    """
    start = time.perf_counter()
    K = _check_int("K", K, 3, "use at least 3 folds (nested CV needs 3), e.g. K=10.")
    replicates = _check_int("replicates", replicates, 20, "use at least 20 simulated training sets (200 by default).")
    splits = _check_int("splits", splits, 1, "the subsample estimators need at least 1 split into halves.")
    nested_cv_replicates = _check_int("nested_cv_replicates", nested_cv_replicates, 0, "use 0 or more.")
    seed = _check_int("seed", seed, 0, "use a non-negative integer.")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ConfigError(f"alpha={alpha!r} is invalid: use a level in (0, 0.5), e.g. 0.05.")
    slack, confidence = check_rule(slack, confidence)
    from simstudy.learners import build_learner
    from simstudy.losses import check_loss, resolve_loss
    from simstudy.engine import run_study
    from simstudy.studies.base import check_learner_task
    from simstudy.studies.rho_hat.worker import RhoHatWorker

    task, loss = resolve_task(learner, loss)
    loss_obj = resolve_loss(loss)
    pop = user_population(data, X, y, task, label_column, positive)
    n = pop.size
    n_sim, n_half = n // K * K, n // 2 // K * K
    if n_half < 2 * K:
        raise ConfigError(f"the data have {n} rows: too few for K={K} (n/2 needs at least 2 points per fold, "
                          f"n >= {4 * K}). Use a smaller K or more data.")
    check_loss(loss_obj, pop.y, task, "loss")
    learner_obj = build_learner(learner, population=pop, loss=loss_obj)
    check_learner_task(learner_obj, pop)
    common = dict(learner=learner_obj, K=K, replicates=replicates, splits=splits,
                  nested_cv_replicates=min(nested_cv_replicates, replicates), alpha=alpha, seed=seed, loss=loss,
                  n_jobs=n_jobs, progress=progress, chunk_size=max(5, replicates // 8))  # chunks for every core
    results = {"n": run_study("rho_hat", population=pop, sizes=[n_sim], **common),
               "n/2": run_study("rho_hat", population=without_replacement(pop), sizes=[n_half], **common)}
    tests = {k: r.tests for k, r in results.items()}
    summaries = {k: r.summary for k, r in results.items()}
    rho = {k: (int(s["n"].iloc[0]), float(s["rho"].iloc[0]), float(s["rho_se"].iloc[0])) for k, s in summaries.items()}
    rec = recommend(tests["n"], tests["n/2"], alpha, slack, confidence)
    worker = RhoHatWorker(pop, learner_obj, loss_obj, [], seed, splits, 0, 1)
    estimate, intervals = _user_intervals(worker, pop, K, alpha, seed, rho["n"][1])
    order = [rec.procedure] + [p for p in intervals["procedure"] if p != rec.procedure]
    intervals = intervals.set_index("procedure").loc[order].reset_index()
    settings = {"data": str(data) if data is not None else "arrays", "rows": n, "task": task,
                "learner": learner_obj.name,
                "loss": loss, "K": K, "alpha": alpha, "slack": slack, "confidence": confidence, "replicates": replicates, "splits": splits,
                "nested_cv_replicates": common["nested_cv_replicates"], "seed": seed}
    result = AuditResult(n, K, estimate, rec, intervals, rho, tests, summaries, settings,
                         time.perf_counter() - start)
    if out is not None:
        from simstudy.audit.report import write_report

        result.files = write_report(result, Path(out))
    return result
