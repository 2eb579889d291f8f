"""Targets on the Monte Carlo error: which measures a study lets a run target, the check of a
request (:func:`validate_targets`), the achieved errors per condition (:func:`achieved_errors`)
and the table that reports them (:func:`target_table`).

A target is a bound on the **half-width at 95% of a measure's Monte Carlo interval**, the same
``±`` the tables print: 1.96 Monte Carlo standard errors for a mean or a ratio (rho, theta, the
relative biases), half the width of the 95% Wilson interval for a rate (coverage, rejection
rate). ``study.targets={rho: 0.01}`` asks for rho to within ±0.01 (one point) in every
condition; a measure with several rows per condition (a rate per rho_hat, per procedure) must
meet the target in each of them. ``study.replicates`` is then the cap per condition and
``study.min_replicates`` the first round's size and the step of every count
(:mod:`simstudy.engine.rounds` runs the rounds).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from simstudy.errors import ConfigError
from simstudy.studies.settings import targets_of

__all__ = ["Z95", "TargetMeasure", "achieved_errors", "has_targets", "target_table", "validate_targets"]

#: The 97.5% normal quantile: a 95% interval is ± Z95 standard errors.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class TargetMeasure:
    """A summary measure whose Monte Carlo error a run can target.

    Attributes
    ----------
    table : str
        ``"summary"``, ``"tests"`` or the name of one of the study's other tables.
    by : tuple of str
        The columns of that table (and of the records) naming a condition, e.g. ``("n", "K")``.
    se : str
        Column of the Monte Carlo standard error: half-width = 1.96 se.
    interval : (str, str)
        Columns of a 95% interval (Wilson for rates): half-width = (high - low) / 2. Give ``se``
        or ``interval``.
    description : str
        What the measure is (shown in the error message for an unknown name).
    skip : tuple of (column, value)
        Rows left out (e.g. a procedure run on a fixed number of replicates, which more
        replicates of the condition cannot make more precise).
    """

    table: str
    by: tuple[str, ...]
    se: str = ""
    interval: tuple[str, str] | tuple[()] = ()
    description: str = ""
    skip: tuple[tuple[str, Any], ...] = ()

    def half_widths(self, frame: pd.DataFrame) -> pd.Series:
        """Half-width at 95% of every row of ``frame``."""
        if self.se:
            return Z95 * frame[self.se].astype(float)
        low, high = self.interval
        return (frame[high].astype(float) - frame[low].astype(float)) / 2


def has_targets(config: Any) -> bool:
    """Whether a study config asks for targets."""
    return bool(targets_of(config))


def _measures(study_cls: Any) -> dict[str, TargetMeasure]:
    measures = getattr(study_cls, "target_measures", None)
    return measures() if callable(measures) else {}


def validate_targets(study_cls: Any, config: Any) -> None:
    """Check ``study.targets`` and ``study.min_replicates`` before any work.

    Raises
    ------
    ConfigError
        A study that declares no measure, an unknown measure (with the nearest valid name), a
        target that is not a positive number, or a first round larger than the cap.
    """
    targets = targets_of(config)
    if not targets:
        return
    measures = _measures(study_cls)
    if "" in targets:
        raise ConfigError(f"study.targets={targets['']!r} is invalid: give a mapping measure -> half-width, e.g. "
                          "study.targets={rho: 0.01} (command line: study.targets.rho=0.01).")
    if not measures:
        raise ConfigError(f"study.targets={targets!r} is invalid: study {study_cls.name!r} declares no measure "
                          "with a Monte Carlo error to target; give study.replicates instead.")
    for name, value in targets.items():
        if name not in measures:
            near = difflib.get_close_matches(str(name), list(measures), n=1, cutoff=0.0)
            raise ConfigError(f"study.targets.{name} is invalid: study {study_cls.name!r} has no measure {name!r}; "
                              f"did you mean {near[0]!r}? Targetable measures: {', '.join(sorted(measures))}.")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < np.inf:
            raise ConfigError(f"study.targets.{name}={value!r} is invalid: give the half-width at 95% of its Monte "
                              f"Carlo interval as a positive number, e.g. study.targets.{name}=0.01.")
    step, cap = getattr(config, "min_replicates", None), getattr(config, "replicates", None)
    if isinstance(step, bool) or not isinstance(step, int) or step < 3:
        raise ConfigError(f"study.min_replicates={step!r} is invalid: the first round needs at least 3 replicates "
                          "per condition (e.g. study.min_replicates=200).")
    if isinstance(cap, int) and step > cap:
        raise ConfigError(f"study.min_replicates={step} is invalid: it exceeds study.replicates={cap}, the cap per "
                          f"condition when targets are given; lower study.min_replicates or raise study.replicates.")


def _rows(frame: pd.DataFrame, by: Sequence[str], values: Sequence[Any]) -> pd.DataFrame:
    mask = np.ones(len(frame), bool)
    for column, value in zip(by, values):
        mask &= (frame[column] == value).to_numpy()
    return frame[mask]


def _table(tables: Any, name: str) -> pd.DataFrame:
    if name == "summary":
        return tables.summary
    if name == "tests":
        return tables.tests
    return tables.extra[name]


def achieved_errors(study: Any, tables: Any, condition: Mapping[str, Any]) -> dict[str, float]:
    """The largest 95% half-width of every targeted measure in one condition, over the rows
    with an error (NaN when no row has one: too few replicates).

    ``condition``: its columns (``SizeCondition.columns()``, e.g. ``{"n": 20, "K": 10}``).
    """
    measures, out = _measures(type(study)), {}
    for name in targets_of(study.config):
        measure = measures[name]
        rows = _rows(_table(tables, measure.table), measure.by, [condition[c] for c in measure.by])
        for column, value in measure.skip:
            rows = rows[rows[column] != value] if column in rows else rows
        widths = measure.half_widths(rows).to_numpy() if len(rows) else np.array([np.nan])
        # a row without an error (a rate of no trials, e.g. a size among no H0 replicates) is left
        # out; a condition whose every row lacks one is undefined (NaN: more replicates needed)
        widths = widths[np.isfinite(widths)]
        out[name] = float(np.max(widths)) if widths.size else float("nan")
    return out


def target_table(study: Any, tables: Any, records: pd.DataFrame) -> pd.DataFrame:
    """One row per condition and targeted measure: the target, the achieved 95% half-width,
    the replicates run, the cap, whether the target is met and whether the cap stopped it."""
    c, targets = study.config, targets_of(study.config)
    by = sorted({column for name in targets for column in _measures(type(study))[name].by},
                key=lambda col: list(records.columns).index(col))
    counts = records.groupby(by, sort=False)["replicate"].nunique() if len(records) else pd.Series(dtype=int)
    rows = []
    for key, count in counts.items():
        condition = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        for name, width in achieved_errors(study, tables, condition).items():
            met = bool(np.isfinite(width) and width <= targets[name])
            rows.append({**condition, "measure": name, "target": float(targets[name]), "half_width": width,
                         "replicates": int(count), "cap": int(c.replicates), "met": met,
                         "capped": bool(not met and count >= c.replicates)})
    return pd.DataFrame(rows)


def aggregate_tables(study: Any, records: dict[str, pd.DataFrame]) -> Any:
    """``study.aggregate(records)``, plus the ``targets`` table when the study has targets."""
    tables = study.aggregate(records)
    if has_targets(study.config):
        tables.extra["targets"] = target_table(study, tables, records[study.main_phase])
    return tables


def _label(row: Mapping[str, Any], by: Sequence[str]) -> str:
    return ", ".join(f"{c}={row[c]}" for c in by)


def target_headline(frame: pd.DataFrame) -> str:
    """One line: every target met, or the conditions the cap stopped short (and the others)."""
    if frame is None or frame.empty:
        return ""
    by = [c for c in frame.columns if c not in ("measure", "target", "half_width", "replicates", "cap", "met",
                                                "capped")]
    rule = ", ".join(f"{m} ±{t:g}" for m, t in frame.groupby("measure", sort=False)["target"].first().items())
    counts = frame.groupby(by, sort=False)["replicates"].first()
    spread = f"{counts.min()}" if counts.min() == counts.max() else f"{counts.min()}..{counts.max()}"
    head = f"Targets (95% half-width) {rule}, cap {int(frame['cap'].iloc[0])} replicates; {spread} replicates run: "
    short = frame[~frame["met"]]
    if short.empty:
        return head + "every target met."
    parts = [f"{_label(r, by)} {r['measure']} ±{r['half_width']:.3g} > {r['target']:g}"
             + (" (capped)" if r["capped"] else "") for _, r in short.iterrows()]
    return head + f"NOT met in {short[by].drop_duplicates().shape[0]} condition(s): " + "; ".join(parts) + "."


def target_report(frame: pd.DataFrame) -> pd.DataFrame:
    """The targets table as a reader sees it (rounded half-widths, yes/no)."""
    out = frame.copy()
    out["half_width"] = out["half_width"].map(lambda v: f"{v:.4g}")
    out["met"] = out["met"].map({True: "yes", False: "no"})
    out["capped"] = out["capped"].map({True: "yes", False: "no"})
    return out
