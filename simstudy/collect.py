"""Merge the run directories of a Hydra multirun into tidy tables and figures.

Each run directory (one per job of ``simstudy -m ...``) holds ``summary.csv`` (and
``tests.csv``) and Hydra's ``.hydra/overrides.yaml``. The swept overrides become columns
(named by their key, e.g. ``population.rho``, ``study.K``), so one table holds the whole grid.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from simstudy.report.figures import finish_figure  # noqa: E402
from simstudy.report.tables import frame_to_markdown  # noqa: E402

__all__ = ["CollectResult", "collect", "find_runs", "run_overrides"]

_NOT_PARAMETERS = ("hydra.", "runner.", "+hydra", "sweep")


@dataclass
class CollectResult:
    """The merged tables and where they were written."""

    summary: pd.DataFrame
    tests: pd.DataFrame | None
    parameters: list[str]
    files: list[Path]


def find_runs(sweep_dir: Path) -> list[Path]:
    """Run directories under ``sweep_dir`` (those holding summary.csv and config.yaml)."""
    return sorted(p.parent for p in Path(sweep_dir).rglob("summary.csv")
                  if (p.parent / "config.yaml").is_file() and "shards" not in p.parts)


def run_overrides(run_dir: Path) -> dict[str, object]:
    """The command-line overrides of a run (``.hydra/overrides.yaml``), values parsed as YAML."""
    path = run_dir / ".hydra" / "overrides.yaml"
    if not path.is_file():
        return {}
    out = {}
    for item in yaml.safe_load(path.read_text()) or []:
        key, _, value = str(item).partition("=")
        key = key.lstrip("+~")
        if key.startswith(_NOT_PARAMETERS):
            continue
        parsed = yaml.safe_load(value) if value else None
        out[key] = str(parsed) if isinstance(parsed, (list, dict)) else parsed
    return out


def _merge(runs: list[Path], name: str, parameters: list[str]) -> pd.DataFrame | None:
    frames = []
    for run in runs:
        path = run / name
        if not path.is_file():
            continue
        frame = pd.read_csv(path)
        values = run_overrides(run)
        for i, key in enumerate(k for k in parameters if k not in frame.columns):
            frame.insert(i, key, values.get(key))
        frame.insert(len(parameters), "run_dir", str(run))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else None


def _label(row: pd.Series, parameters: list[str]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in parameters) or "run"


def _cv_variance_figures(summary: pd.DataFrame, tests: pd.DataFrame | None, parameters: list[str],
                         out: Path) -> list[Path]:
    files = []
    keys = [k for k in parameters if k in summary and summary[k].nunique() > 1] or parameters
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for _, g in summary.groupby(keys, dropna=False, sort=True) if keys else [(None, summary)]:
        ax.errorbar(g["n"], 100 * g["rho"], yerr=196 * g["rho_se"], marker="o", capsize=3,
                    label=_label(g.iloc[0], keys))
    ax.set_xscale("log")
    ax.set_xlabel("training-set size n")
    ax.set_ylabel("rho (%)")
    files.append(finish_figure(fig, ax, out / "rho_vs_n.png", "Between-block correlation across the sweep", 7))
    if tests is not None and "rho_hat" in tests:
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        t = tests[tests["n"] == tests["n"].max()]
        for _, g in t.groupby(keys, dropna=False, sort=True) if keys else [(None, t)]:
            rate = 100 * g["rejection_rate"]
            err = np.clip(np.vstack([rate - 100 * g["ci_low"], 100 * g["ci_high"] - rate]), 0, None)
            ax.errorbar(g["rho_hat"], rate, yerr=err, marker=".", capsize=2, label=_label(g.iloc[0], keys))
        alpha = float(t["alpha"].iloc[0])
        ax.axhline(100 * alpha, color="grey", ls=":", label=f"nominal {100 * alpha:g}%")
        ax.set_xlabel("assumed rho_hat")
        ax.set_ylabel("rejection rate (%)")
        files.append(finish_figure(fig, ax, out / "type1_vs_rho_hat.png",
                                   f"Type-I error against rho_hat (n = {t['n'].max()})", 7))
    return files


def collect(sweep_dir: str | Path) -> CollectResult:
    """Merge every run under ``sweep_dir`` into ``collected_summary.csv``,
    ``collected_tests.csv``, ``collected.md`` and ``collected_figures/``.

    Raises
    ------
    FileNotFoundError
        When no run directory is found under ``sweep_dir``.
    """
    sweep_dir = Path(sweep_dir)
    runs = find_runs(sweep_dir)
    if not runs:
        raise FileNotFoundError(f"no run directories (summary.csv + config.yaml) under {sweep_dir}; "
                                "give the sweep directory of a finished 'simstudy -m ...' run.")
    parameters: list[str] = []
    for run in runs:
        parameters += [k for k in run_overrides(run) if k not in parameters]
    summary = _merge(runs, "summary.csv", parameters)
    tests = _merge(runs, "tests.csv", parameters)
    files = [sweep_dir / "collected_summary.csv"]
    summary.to_csv(files[-1], index=False)
    if tests is not None:
        files.append(sweep_dir / "collected_tests.csv")
        tests.to_csv(files[-1], index=False)
    text = [f"# Sweep {sweep_dir}: {len(runs)} runs, parameters {parameters}\n", frame_to_markdown(summary)]
    files.append(sweep_dir / "collected.md")
    files[-1].write_text("\n".join(text))
    if {"n", "rho", "rho_se"} <= set(summary.columns):
        fig_dir = sweep_dir / "collected_figures"
        fig_dir.mkdir(exist_ok=True)
        files += _cv_variance_figures(summary, tests, parameters, fig_dir)
    return CollectResult(summary, tests, parameters, files)
