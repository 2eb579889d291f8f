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
    designs : dict of SequentialDesign
        The sequential rule's designs ("main", and "nested_cv" when nested CV ran); empty for the
        fixed rule.
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
    designs: dict[str, Any] = field(default_factory=dict)

    @property
    def interval(self) -> tuple[float, float]:
        """(low, high) of the recommended interval."""
        row = self.intervals.iloc[0]
        return float(row["low"]), float(row["high"])

    def _repr_html_(self) -> str:
        """What Jupyter shows: the recommendation, the intervals, the calibration, the figure."""
        from simstudy.audit.report import audit_result_html

        return audit_result_html(self)

    def markdown(self) -> str:
        from simstudy.audit.report import audit_markdown

        return audit_markdown(self)


def _check_int(name: str, value: Any, low: int, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"{name}={value!r} is invalid: {fix}")
    return int(value)


def _user_cv(worker, pop, K: int, seed: int) -> dict[str, Any]:
    """The user's own K-fold CV (all rows): the rho_hat study's record of the user's sample."""
    from simstudy.cv.splits import KFold
    from simstudy.populations.base import Sample

    n = pop.size
    rng = np.random.default_rng([seed, 1])
    labels = KFold(K).labels(n, rng)
    return worker.analyse(Sample(pop.X, pop.y, np.arange(n)), labels, K, rng, np.random.default_rng([seed, 2]),
                          np.random.default_rng([seed, 3]))


def _user_intervals(row: dict[str, Any], n: int, K: int, alpha: float, rho_n: float) -> tuple[float, pd.DataFrame]:
    """The estimate of the user's K-fold CV (``row``, :func:`_user_cv`) and every procedure's interval for its
    expected error."""
    from simstudy.studies.rho_hat.aggregate import procedure_tests

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


RULES = ("sequential", "fixed")


def _check_options(K, replicates, splits, nested_cv_replicates, seed, alpha, slack, confidence, rule):
    """Every scalar option checked before any data is read (ConfigError naming the field, value and fix)."""
    K = _check_int("K", K, 3, "use at least 3 folds (nested CV needs 3), e.g. K=10.")
    replicates = _check_int("replicates", replicates, 20,
                            "use at least 20 simulated training sets per setting (1000 by default).")
    splits = _check_int("splits", splits, 1, "the subsample estimators need at least 1 split into halves.")
    nested_cv_replicates = _check_int("nested_cv_replicates", nested_cv_replicates, 0,
                                      "use 0 (no nested CV) or more (200 by default).")
    seed = _check_int("seed", seed, 0, "use a non-negative integer.")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ConfigError(f"alpha={alpha!r} is invalid: use a level in (0, 0.5), e.g. 0.05.")
    slack, confidence = check_rule(slack, confidence)
    if rule not in RULES:
        raise ConfigError(f"rule={rule!r} is invalid: use 'sequential' (stop each setting once every verdict is "
                          "settled) or 'fixed' (run every replicate, Wilson bounds).")
    return K, replicates, splits, nested_cv_replicates, seed, float(alpha), slack, confidence


def _simulate(settings: dict[str, tuple[Any, int]], params: dict[str, Any], rule: str, replicates: int,
              alpha: float, slack: float, confidence: float):
    """The rho_hat study in both settings: (results by setting, sequential states or None, designs or None)."""
    from simstudy.engine.run import run_study

    if rule == "fixed":
        results = {name: run_study("rho_hat", population=pop, sizes=[size], replicates=replicates,
                                   chunk_size=max(5, replicates // 8), **params)   # chunks for every core
                   for name, (pop, size) in settings.items()}
        return results, None, None
    import tempfile

    from simstudy.audit.rounds import NESTED, run_rounds
    from simstudy.audit.sequential import audit_design

    designs = {"main": audit_design(replicates, alpha, slack, confidence)}
    if params["nested_cv_replicates"]:
        designs[NESTED] = audit_design(params["nested_cv_replicates"], alpha, slack, confidence)
    cheapest_first = dict(sorted(settings.items(), key=lambda item: item[1][1]))   # (population, n): smaller n first
    with tempfile.TemporaryDirectory(prefix="simstudy_audit_") as folder:
        run = run_rounds(cheapest_first, params, designs, Path(folder))
    return ({k: run.results[k] for k in settings}, {k: run.states[k] for k in settings}, designs)


def audit(data: Any = None, *, X: Any = None, y: Any = None, learner: Any = "tree", loss: str | None = None,
          K: int = 10, replicates: int = 1000, splits: int = 5, nested_cv_replicates: int = 200,
          alpha: float = 0.05, slack: float = 0.01, confidence: float = 0.95, rule: str = "sequential",
          seed: int = 0, label_column: Any = "auto", positive: Any = None, n_jobs: int = -1, progress: bool = True,
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
        A preset name (classifiers "tree", "knn", "lda", "logistic_regression", ...; regressors
        "ridge_regressor", "tree_regressor", "knn_regressor", "ols") or an estimator. A regressor
        makes a regression audit (:mod:`simstudy.audit.data`).
    loss : str, optional
        Classification: "zero_one" (default) or "log_loss"; regression: "squared" (default) or
        "absolute".
    K : int
        Folds (>= 3; nested CV needs 3).
    replicates : int
        Simulated training sets per setting (>= 20): with the sequential rule the cap, with the
        fixed rule the count. The size's Monte Carlo error at R replicates is
        sqrt(alpha (1 - alpha) / R), 0.7 points at 1,000.
    splits : int
        B splits into disjoint halves of the subsample estimators (>= 1; 2B CVs of n/2 points).
    nested_cv_replicates : int
        Replicates per setting that also run nested CV (0: none; 200 by default: with fewer than 60
        (sequential rule) or 61 (fixed rule) nested CV cannot be trusted at all, even with 0
        rejections).
    alpha : float
        1 - confidence level of the intervals, in (0, 0.5).
    slack, confidence : float
        The recommendation rule (:mod:`simstudy.audit.recommend`): a procedure is trusted when its
        simulated size is shown to be at most alpha + ``slack`` in both settings, with each error
        of the rule bounded by (1 - ``confidence``) / 2 (defaults 0.01 and 0.95).
    rule : {"sequential", "fixed"}
        "sequential" (default; :mod:`simstudy.audit.sequential`): each setting runs in looks
        (100, 150, 200, ... replicates up to ``replicates``) and stops once every procedure's
        verdict is settled, errors bounded exactly. "fixed": every replicate, then the Wilson bounds.
    seed : int
    label_column, positive :
        As ``population.label_column`` / ``population.positive`` of a tabular population.
    n_jobs : int
        Worker processes for the simulations (-1: all cores).
    progress : bool
        A progress bar per setting (per look with the sequential rule).
    out : path, optional
        Folder for report.md, report.html, audit figure and CSV tables (new, empty or a previous
        audit's folder).

    Returns
    -------
    AuditResult

    Raises
    ------
    simstudy.errors.UserError
        Bad input, before any simulation: the field, the value and the fix.
    """
    start = time.perf_counter()
    K, replicates, splits, nested_cv_replicates, seed, alpha, slack, confidence = _check_options(
        K, replicates, splits, nested_cv_replicates, seed, alpha, slack, confidence, rule)
    if out is not None:
        from simstudy.audit.report import check_report_folder

        check_report_folder(Path(out))
    from simstudy.cv.losses import check_loss, resolve_loss
    from simstudy.learners.dispatch import build_learner
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
    nested_cv_replicates = min(nested_cv_replicates, replicates)
    params = dict(learner=learner_obj, K=K, splits=splits, nested_cv_replicates=nested_cv_replicates, alpha=alpha,
                  seed=seed, loss=loss, n_jobs=n_jobs, progress=progress)
    # the user's CV first: it loads the learner's compiled kernels here, before the workers are forked, so that
    # each worker inherits them instead of loading them again
    user_row = _user_cv(RhoHatWorker(pop, learner_obj, loss_obj, [], seed, splits, 0, 1), pop, K, seed)
    settings_run = {"n": (pop, n_sim), "n/2": (without_replacement(pop), n_half)}
    results, states, designs = _simulate(settings_run, params, rule, replicates, alpha, slack, confidence)
    tests = {k: r.tests for k, r in results.items()}
    summaries = {k: r.summary for k, r in results.items()}
    rho = {k: (int(s["n"].iloc[0]), float(s["rho"].iloc[0]), float(s["rho_se"].iloc[0])) for k, s in summaries.items()}
    rec = recommend(tests["n"], tests["n/2"], alpha, slack, confidence, states)
    estimate, intervals = _user_intervals(user_row, n, K, alpha, rho["n"][1])
    order = [rec.procedure] + [p for p in intervals["procedure"] if p != rec.procedure]
    intervals = intervals.set_index("procedure").loc[order].reset_index()
    settings = {"data": str(data) if data is not None else "arrays", "rows": n, "task": task,
                "learner": learner_obj.name, "loss": loss, "K": K, "alpha": alpha, "slack": slack,
                "confidence": confidence, "rule": rule, "replicates": replicates, "splits": splits,
                "nested_cv_replicates": nested_cv_replicates, "seed": seed}
    result = AuditResult(n, K, estimate, rec, intervals, rho, tests, summaries, settings,
                         time.perf_counter() - start, designs=designs or {})
    if out is not None:
        from simstudy.audit.report import write_report

        result.files = write_report(result, Path(out))
    return result
