"""Run a composed configuration end to end and write the run directory.

Run directory contents (the contract of DESIGN.md):
``config.yaml`` (resolved), ``replicates.parquet``, ``summary.csv``, ``tests.csv``,
``summary.md``, ``table2.md`` (cv_variance), ``figures/*.png`` and ``manifest.json``.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from simstudy.config import to_container, validate_config
from simstudy.learners import build_learner
from simstudy.manifest import config_hash, environment_info, write_json
from simstudy.populations import build_population
from simstudy.report import frame_to_markdown, table2_markdown
from simstudy.report.figures import cv_variance_figures
from simstudy.runner import plan_chunks, run_chunks
from simstudy.studies import cv_variance

__all__ = ["RunResult", "run", "write_reports", "report_run"]

log = logging.getLogger("simstudy")


@dataclass
class RunResult:
    """Where a run wrote its outputs, and its main tables."""

    run_dir: Path
    summary: pd.DataFrame
    tests: pd.DataFrame
    records: pd.DataFrame
    figures: list[Path] = field(default_factory=list)
    wall_time: float = 0.0


def _records_for_parquet(records: pd.DataFrame) -> pd.DataFrame:
    out = records.copy()
    for col in ("fold_means", "fold_true_errors"):
        if col in out:
            out[col] = [np.asarray(v, dtype=float).tolist() for v in out[col]]
    return out


def write_reports(records: pd.DataFrame, study, run_dir: Path):
    """Aggregate per-replicate records and write summary/tests tables, Markdown and figures.

    Parameters
    ----------
    records : DataFrame
        One row per replicate (columns ``population``, ``learner``, ``n``, ``K``, ...).
    study : DictConfig or mapping
        The ``study`` config node (alpha, rho_hats, mu_true, paper, replicates, name).
    run_dir : Path

    Returns
    -------
    summary, tests : DataFrame
    figures : list of Path
    """
    run_dir = Path(run_dir)
    population, learner = records["population"].iloc[0], records["learner"].iloc[0]
    summary, tests = cv_variance.aggregate(records, study["alpha"], list(study["rho_hats"]), study["mu_true"])
    for frame in (summary, tests):
        frame.insert(0, "learner", learner)
        frame.insert(0, "population", population)
    summary.to_csv(run_dir / "summary.csv", index=False)
    tests.to_csv(run_dir / "tests.csv", index=False)
    label = f"({population}, {learner}, {study['replicates']} replicates)"
    (run_dir / "table2.md").write_text(table2_markdown(summary, tests, study["paper"]))
    (run_dir / "summary.md").write_text(
        f"# {study['name']}: {label}\n\n## Summary per condition\n\n"
        + frame_to_markdown(summary) + "\n## t-tests per condition and rho_hat\n\n" + frame_to_markdown(tests))
    figures = cv_variance_figures(summary, tests, run_dir / "figures", study["alpha"], study["paper"], label)
    return summary, tests, figures


def report_run(run_dir: str | Path, **study_overrides) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Re-aggregate a finished run from its ``replicates.parquet`` and rewrite its reports.

    Parameters
    ----------
    run_dir : path-like
        A run directory holding ``config.yaml`` and ``replicates.parquet``.
    **study_overrides
        Replace study settings for the aggregation, e.g. ``alpha=0.01`` or
        ``rho_hats=[0, 0.5]``; recorded in ``config.yaml`` is left as it was run.
    """
    run_dir = Path(run_dir)
    cfg = OmegaConf.load(run_dir / "config.yaml")
    study = dict(OmegaConf.to_container(cfg.study, resolve=True))
    study.update(study_overrides)
    records = pd.read_parquet(run_dir / "replicates.parquet")
    for col in ("fold_means", "fold_true_errors"):
        if col in records:
            records[col] = [np.asarray(v, dtype=float) for v in records[col]]
    records["error"] = records["error"].fillna("")
    summary, tests, _ = write_reports(records, study, run_dir)
    return summary, tests


def run(cfg: DictConfig, run_dir: str | Path) -> RunResult:
    """Validate ``cfg``, run its study and write every output to ``run_dir``.

    Parameters
    ----------
    cfg : DictConfig
        A composed configuration (see ``simstudy/conf``).
    run_dir : path-like
        Output directory (created if needed).
    """
    t_start = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    validate_config(cfg)  # nothing is computed before the config is known to be valid
    resolved = to_container(cfg)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(resolved)))

    study = cfg.study
    population = build_population(cfg.population)
    if study.truth and not population.has_exact_error:
        raise ValueError(f"study.truth=true needs exact errors, which population {population.name!r} "
                         "cannot give for this learner; set study.truth=false.")
    learner = build_learner(cfg.learner)
    conditions = cv_variance.make_conditions(study.sizes, study.K, population)
    worker = cv_variance.CVVarianceWorker(population, learner, conditions, int(study.seed),
                                          bool(study.truth), cfg.runner.on_error)
    chunks = plan_chunks([study.replicates] * len(conditions), cfg.runner.chunk_size)
    log.info("population %s, learner %s, %d condition(s) x %d replicates -> %s",
             population.name, learner.name, len(conditions), study.replicates, run_dir)
    outputs = run_chunks(worker, chunks, n_jobs=cfg.runner.n_jobs, backend=cfg.runner.backend,
                         progress=cfg.runner.progress, desc=f"{study.name} {population.name}")
    records = pd.concat([o.records for o in outputs], ignore_index=True)
    records.insert(0, "learner", learner.name)
    records.insert(0, "population", population.name)
    _records_for_parquet(records).to_parquet(run_dir / "replicates.parquet", index=False)

    summary, tests, figures = write_reports(records, study, run_dir)

    timing = pd.DataFrame([{"condition": o.chunk.condition, "wall": o.wall_time, "cpu": o.cpu_time} for o in outputs])
    per_cond = timing.groupby("condition")[["wall", "cpu"]].sum()
    failures = records[records["error"] != ""]
    wall = time.perf_counter() - t_start
    manifest = {
        "study": study.name, "started_utc": started,
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_time_s": wall, "config_hash": config_hash(resolved), "seed": int(study.seed),
        "runner": {"backend": cfg.runner.backend, "n_jobs": cfg.runner.n_jobs,
                   "chunk_size": cfg.runner.chunk_size, "chunks": len(chunks)},
        "population": population.describe(), "learner": learner.describe(),
        "conditions": [{"n": c.n, "K": c.K, "condition_key": c.key, "replicates": study.replicates,
                        "failed": int((failures["n"] == c.n).sum()),
                        "worker_wall_s": float(per_cond.loc[i, "wall"]), "worker_cpu_s": float(per_cond.loc[i, "cpu"])}
                       for i, c in enumerate(conditions)],
        "replicates_total": int(len(records)), "replicates_failed": int(len(failures)),
        "failures_sample": failures[["n", "K", "replicate", "condition_key", "error"]].head(20).to_dict("records"),
        "environment": environment_info(),
    }
    write_json(run_dir / "manifest.json", manifest)
    if len(failures):
        log.warning("%d replicate(s) failed; first: n=%s replicate=%s: %s", len(failures),
                    failures.iloc[0]["n"], failures.iloc[0]["replicate"], failures.iloc[0]["error"])
    log.info("done in %.1f s; results in %s", wall, run_dir.resolve())
    return RunResult(run_dir, summary, tests, records, figures, wall)
