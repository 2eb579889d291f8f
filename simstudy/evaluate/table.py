"""Every interval and test of :mod:`simstudy.inference` from one :class:`CVLosses`, as one tidy table."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from simstudy.cv.loop import nested_cv_losses
from simstudy.cv.splits import FiveByTwo
from simstudy.inference import (
    binomial_test, cv_clt_test, cv_t_test, five_by_two_f_test, five_by_two_t_test, holdout_test, mcnemar_test,
    nested_cv_interval, repeated_kfold_t_test, resampled_t_test,
)
from simstudy.inference.results import TestResult

if TYPE_CHECKING:  # annotations only: CVLosses.infer calls infer, so result imports this module
    from simstudy.evaluate.result import CVLosses

__all__ = ["COLUMNS", "infer"]

#: Columns of the table returned by :func:`infer`.
COLUMNS = ["model", "procedure", "target", "estimate", "se", "df", "low", "high", "confidence_level", "alternative",
           "mu0", "statistic", "pvalue", "clipped", "notes"]

_TARGETS = {
    "cv_t": "mean of the K fold means: average loss of the K fold models",
    "cv_clt": "R_n: average loss of the K fold models, weighted by fold size (Bayle et al.)",
    "holdout": "loss of the one model that did not train on the test set",
    "repeated": "expected loss of a model trained on n_train points",
    "5x2": "expected loss of a model trained on n/2 points",
    "nested": "Err_XY: loss of the model trained on all n points",
    "binomial": "error rate, the n CV predictions taken as independent test points",
    "mcnemar": "share of the discordant points that the first model gets wrong (0.5: equal)",
}


class _Table:
    """Rows of the table; ``mu0 = None`` (one model) reports intervals without p-values."""

    def __init__(self, cv: CVLosses, level: float, alternative: str, mu0: float | None):
        self.cv, self.level, self.alternative, self.rows = cv, level, alternative, []
        self.mu0 = mu0 if mu0 is not None else (0.0 if cv.kind == "comparison" else None)

    @property
    def null(self) -> float:
        """The null value passed to the tests (the estimate when none is asked: p-values dropped)."""
        return self.mu0 if self.mu0 is not None else min(max(self.cv.estimate, self.cv.bounds[0]), self.cv.bounds[1])

    def add(self, procedure: str, target: str, res: TestResult | None, notes: str = "", interval: bool = True) -> None:
        row = dict.fromkeys(COLUMNS, np.nan)
        row.update(model=self.cv.name, procedure=procedure, target=_TARGETS[target], confidence_level=self.level,
                   alternative=self.alternative, clipped=False, notes=notes)
        if res is not None:
            row.update(estimate=res.estimate, se=res.se, df=res.df)
            if interval:
                ci = res.confidence_interval(self.level)
                row.update(low=ci.low, high=ci.high, clipped=bool(ci.clipped))
            if self.mu0 is not None or procedure.startswith("mcnemar"):
                row.update(mu0=res.mu0, statistic=res.statistic, pvalue=res.pvalue)
        self.rows.append(row)


def _fold_notes(cv: CVLosses) -> str:
    sizes = cv.fold_sizes[0]
    text = f"K={cv.K}, fold sizes {sizes.min()}" + (f"-{sizes.max()}" if sizes.max() > sizes.min() else "")
    return text + (f"; round 1 of {cv.rounds}" if cv.rounds > 1 else "")


def _kfold_rows(t: _Table, rhos: Sequence[float]) -> None:
    cv, alt, bounds = t.cv, t.alternative, t.cv.bounds
    e, f, fm = cv.losses[0], cv.folds[0], cv.fold_estimates[0]
    notes = _fold_notes(cv)
    for rho in rhos:
        t.add(f"cv_t_rho{rho:g}", "cv_t", cv_t_test(fm, t.null, rho, alt, bounds),
              f"Grandvalet-Bengio eq. 9, t with K-1 df, assumed between-block correlation {rho:g}; {notes}")
    t.add("cv_clt_all_pairs", "cv_clt", cv_clt_test(e, f, t.null, "all-pairs", alt, bounds), f"normal; {notes}")
    if cv.fold_sizes[0].min() >= 2:
        t.add("cv_clt_within_fold", "cv_clt", cv_clt_test(e, f, t.null, "within-fold", alt, bounds),
              f"normal; size-weighted within-fold variances; {notes}")
        t.add("holdout_fold1", "holdout", holdout_test(e[f == 0], t.null, alt, bounds),
              f"z on fold 1 ({int(np.sum(f == 0))} points), the model trained on the other folds")
    else:
        t.add("cv_clt_within_fold", "cv_clt", None, "undefined: a fold of one point (leave-one-out)")
    if cv.rounds > 1:
        n_test = float(np.mean(cv.fold_sizes))
        n_train = float(np.mean(cv.train_sizes))
        estimates = cv.fold_estimates
        for correction, name in ((None, "repeated_kfold_t"), ("nadeau-bengio", "bouckaert_frank")):
            t.add(name, "repeated", repeated_kfold_t_test(estimates, n_train, n_test, t.null, correction, alt, bounds),
                  f"{cv.rounds} x {cv.K} fold estimates, t with {estimates.size - 1} df"
                  + ("" if correction is None else f"; variance factor 1/(kr) + n_test/n_train = "
                     f"{1 / estimates.size + n_test / n_train:.4g}"))
    _count_rows(t, e[f >= 0], "round 1" if cv.rounds > 1 else "")


def _splits_rows(t: _Table) -> None:
    cv, alt, bounds = t.cv, t.alternative, t.cv.bounds
    estimates = np.nanmean(cv.losses, axis=1)
    n_test, n_train = float(np.mean(np.sum(cv.folds >= 0, axis=1))), float(np.mean(cv.train_sizes))
    if cv.rounds > 1:
        for correction, name in ((None, "repeated_tv_t"), ("nadeau-bengio", "nadeau_bengio")):
            t.add(name, "repeated", resampled_t_test(estimates, n_train, n_test, t.null, correction, alt, bounds),
                  f"{cv.rounds} train/validation splits, n_train={n_train:g}, n_test={n_test:g}")
    first = cv.losses[0, cv.folds[0] >= 0]
    if first.size >= 2:
        t.add("holdout_split1", "holdout", holdout_test(first, t.null, alt, bounds), "z on the first split's test set")
    _count_rows(t, first, "split 1")


def _zero_one(values: np.ndarray) -> bool:
    return bool(np.all((values == 0) | (values == 1)))


def _count_rows(t: _Table, e: np.ndarray, where: str) -> None:
    """Binomial (one model) and McNemar (two) rows when the losses are 0-1."""
    cv, alt = t.cv, t.alternative
    suffix = f"; {where}" if where else ""
    if cv.kind == "model" and _zero_one(e):
        mu0 = t.null if t.mu0 is not None else 0.5
        t.add("binomial_wilson", "binomial", binomial_test(int(e.sum()), e.size, mu0, alt, "wilson"),
              f"Wilson; ignores the dependence between CV losses{suffix}")
    if cv.kind == "comparison":
        a, b = (p.losses[0][cv.folds[0] >= 0] for p in cv.parts)
        if _zero_one(a) and _zero_one(b):
            wrong_a, wrong_b = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
            t.add("mcnemar_exact", "mcnemar", mcnemar_test(wrong_a, wrong_b, True, 0.5, alt),
                  f"b={wrong_a}, c={wrong_b} discordant CV predictions; ignores training variability{suffix}")


def _refit_check(cv: CVLosses, what: str) -> None:
    if cv.refit is None:
        raise ValueError(f"{what} refits the model(s), which this result cannot do: build it with "
                         "cross_validate_losses(estimator, X, y, ...) (from_predictions and from_cross_validate hold "
                         "no training data).")
    if cv.refit.grouped:
        raise ValueError(f"{what} draws random splits of the rows, which would cut the groups of a grouped "
                         "splitter; it is not available with groups.")


def _five_by_two_rows(t: _Table, rng: np.random.Generator) -> None:
    cv = t.cv
    _refit_check(cv, "five_by_two=True")
    halves = FiveByTwo().halves(cv.n, rng)
    rows = np.arange(cv.n)
    per_fitter = []
    for fit in cv.refit.fitters:
        p = np.empty((5, 2))
        for i in range(5):
            p[i, 0] = fit(rows[halves[i]], rows[~halves[i]]).mean()    # fold 1 trains on the first half
            p[i, 1] = fit(rows[~halves[i]], rows[halves[i]]).mean()
        per_fitter.append(p)
    p = per_fitter[0] - per_fitter[1] if len(per_fitter) == 2 else per_fitter[0]
    sizes = f"halves of {cv.n // 2} and {cv.n - cv.n // 2} points"
    t.add("5x2cv_t", "5x2", five_by_two_t_test(p, t.null, t.alternative, cv.bounds),
          f"Dietterich; centred at the first fold's estimate, t with 5 df; {sizes}")
    if t.mu0 is not None:           # a test only: shown when there is a null value to test
        t.add("5x2cv_f", "5x2", five_by_two_f_test(p, t.null), "Alpaydin's combined F(10, 5): test only, "
              "two-sided; estimate = mean of the 10 fold estimates", interval=False)


def _nested_rows(t: _Table, rng: np.random.Generator, repetitions: int, method: str) -> None:
    cv = t.cv
    if cv.kind != "model":
        raise ValueError("nested=True: nested CV gives an interval for one model's Err_XY, not for a comparison; "
                         "call infer(nested=True) on each model's result.")
    if cv.design != "kfold":
        raise ValueError("nested=True needs a K-fold design (the result holds train/validation splits).")
    _refit_check(cv, "nested=True")
    out = nested_cv_losses(cv.refit.fitters[0], cv.n, cv.K, repetitions, rng, first_labels=cv.folds[0],
                           first_outer_losses=cv.losses[0])
    res = nested_cv_interval(out.pair_losses, out.outer_losses, t.level, method=method, bounds=cv.bounds)
    row = dict.fromkeys(COLUMNS, np.nan)
    row.update(model=cv.name, procedure=f"nested_cv_{method}", target=_TARGETS["nested"], estimate=res.estimate,
               se=res.se, low=res.low, high=res.high, confidence_level=t.level, alternative="two-sided",
               clipped=bool(res.clipped),
               notes=f"Bates-Hastie-Tibshirani, {repetitions} repetitions (the first reuses the CV above); "
                     f"interval only, two-sided, normal")
    t.rows.append(row)


def infer(cv: CVLosses, *, confidence_level: float = 0.95, rhos: Sequence[float] = (0.0, 0.7), mu0: float | None = None,
          alternative: str = "two-sided", five_by_two: bool = False, nested: bool = False,
          nested_repetitions: int = 10, nested_method: str = "paper", random_state: Any = None) -> pd.DataFrame:
    """Every interval and test the package has, from one cross-validation, as one tidy DataFrame.

    Rows (``procedure``), each with what it estimates (``target``): the CV t at each rho of
    ``rhos`` (Grandvalet & Bengio), the CV CLT with the all-pairs and within-fold variances
    (Bayle et al.), the hold-out z on fold 1; with repeated K-fold (``RepeatedKFold``) the
    repeated k-fold t and Bouckaert & Frank's corrected one; with train/validation splits
    (``ShuffleSplit``) the repeated train/validation t and Nadeau & Bengio's corrected one; for
    0-1 losses the binomial (Wilson) interval of one model, or McNemar's test of two; and when
    asked (these refit the model): Dietterich's 5x2cv t and Alpaydin's F (``five_by_two``) and
    Bates, Hastie & Tibshirani's nested CV (``nested``, one model only).

    Parameters
    ----------
    cv : CVLosses
        One model's result, or :func:`~simstudy.evaluate.compare` of two (loss differences:
        the tests are paired, H0: equal expected loss).
    confidence_level : float
    rhos : sequence of float in [0, 1)
        Between-block correlations of the CV t rows (0: the usual t; 0.7: the paper's
        conservative choice).
    mu0 : float, optional
        Null value of the tests. Default: 0 for a comparison; for one model no test (intervals
        only; p-values are NaN) except McNemar's own null.
    alternative : {"two-sided", "less", "greater"}
        One-sided alternatives give one-sided intervals (nested CV stays two-sided).
    five_by_two, nested : bool
        Add the procedures that refit (need :func:`cross_validate_losses`; not with groups).
    nested_repetitions : int
        Repetitions R of nested CV (each costs K(K-1)/2 + K fits; the first reuses this CV's).
    nested_method : {"paper", "package"}
    random_state : int or Generator, optional
        Seeds the 5x2 halvings and nested CV's fold assignments.

    Returns
    -------
    DataFrame
        Columns :data:`COLUMNS`. Intervals are clipped to the loss's bounds (``clipped``).
    """
    t = _Table(cv, confidence_level, alternative, mu0)
    if cv.design == "kfold":
        _kfold_rows(t, rhos)
    else:
        _splits_rows(t)
    rng = np.random.default_rng(random_state)
    if five_by_two:
        _five_by_two_rows(t, rng)
    if nested:
        _nested_rows(t, rng, nested_repetitions, nested_method)
    return pd.DataFrame(t.rows, columns=COLUMNS)
