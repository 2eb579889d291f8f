"""Run a composed configuration end to end and write the run directory.

The engine validates the config, writes ``config.yaml`` (resolved), hands the work to the
study module named by ``study.name`` (which writes ``replicates.parquet``, ``summary.csv``,
``tests.csv``, Markdown tables and ``figures/``), then writes ``manifest.json``.
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from simstudy.config import ConfigError, to_container, validate_config
from simstudy.manifest import config_hash, environment_info, write_json
from simstudy.studies import STUDIES
from simstudy.studies.base import RunnerOptions

__all__ = ["RunResult", "run", "report_run"]

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


def study_config_hash(resolved: dict) -> str:
    """Hash of everything that determines the numbers: the config without ``runner``
    (n_jobs, chunk size, backend... do not change results)."""
    return config_hash({k: v for k, v in resolved.items() if k != "runner"})


def claim_run_dir(run_dir: Path, resolved: dict, overwrite: bool) -> str:
    """Make sure ``run_dir`` belongs to this configuration (resume) or is new.

    A directory holding shards of a different configuration is refused, unless ``overwrite``
    is set, in which case its shards are deleted. Returns the study config hash.
    """
    state = run_dir / "run_state.json"
    digest = study_config_hash(resolved)
    if state.exists():
        previous = json.loads(state.read_text()).get("study_config_hash")
        if previous != digest:
            if not overwrite:
                raise ConfigError(
                    f"hydra.run.dir={str(run_dir)!r} holds a run of a different configuration (config hash "
                    f"{previous} there, {digest} now): choose another hydra.run.dir, or add "
                    "runner.overwrite=true to discard the old results.")
            log.warning("runner.overwrite=true: discarding the results of config %s in %s", previous, run_dir)
            shutil.rmtree(run_dir / "shards", ignore_errors=True)
    state.write_text(json.dumps({"study_config_hash": digest}) + "\n")
    return digest


def note_cold_start() -> bool:
    """Log that numba kernels are being compiled when no compiled cache exists yet.

    numba caches compiled kernels as ``*.nbi``/``*.nbc`` files in the package's ``__pycache__``
    folders (or ``NUMBA_CACHE_DIR``); a first run on a new installation compiles them.
    """
    import os

    package = Path(__file__).resolve().parent
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    roots = [package] + ([Path(cache_dir)] if cache_dir else [])
    if any(any(root.rglob("*.nbi")) for root in roots if root.exists()):
        return False
    log.info("first run on this installation: compiling simstudy's numba kernels "
             "(about 10-30 s once; later runs load them from the cache)")
    return True


def run(cfg: DictConfig, run_dir: str | Path, command: str = "simstudy") -> RunResult:
    """Validate ``cfg``, run its study and write every output to ``run_dir``.

    Parameters
    ----------
    cfg : DictConfig
        A composed configuration (see ``simstudy/conf``).
    run_dir : path-like
        Output directory (created if needed). Re-running the same configuration into it
        resumes: finished chunks (``shards/``) are reused and only missing ones computed.
    command : str
        The command line that started the run (recorded; used in failure hints).
    """
    t_start = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    validate_config(cfg)  # nothing is computed before the config is known to be valid
    resolved = to_container(cfg)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    study_hash = claim_run_dir(run_dir, resolved, bool(cfg.runner.overwrite))
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(resolved)))

    note_cold_start()
    module = STUDIES[cfg.study.name]
    options = RunnerOptions(**OmegaConf.to_container(cfg.runner, resolve=True), command=command)
    out = module.execute(cfg, run_dir, options)
    failures = out.records[out.records["error"] != ""] if "error" in out.records else out.records.iloc[:0]
    wall = time.perf_counter() - t_start
    manifest = {
        "study": cfg.study.name, "started_utc": started,
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_time_s": wall, "config_hash": config_hash(resolved), "study_config_hash": study_hash,
        "seed": int(cfg.study.seed), "command": command,
        "runner": {"backend": options.backend, "n_jobs": options.n_jobs, "chunk_size": options.chunk_size,
                   "scheduler_address": options.scheduler_address, "only_replicate": options.only_replicate},
        **out.manifest,
        "replicates_total": int(len(out.records)), "replicates_failed": int(len(failures)),
        "failures_sample": failures.drop(columns=[c for c in failures.columns if c not in
                                                  ("n", "K", "sample_size", "bayes_error", "replicate",
                                                   "condition_key", "error")]).head(20).to_dict("records"),
        "environment": environment_info(),
    }
    write_json(run_dir / "manifest.json", manifest)
    if out.manifest.get("warnings"):
        log.info("warnings raised in workers (counted, not printed): %s", out.manifest["warnings"])
    if len(failures):
        log.warning("%d replicate(s) failed; first: replicate %s: %s", len(failures),
                    failures.iloc[0]["replicate"], failures.iloc[0]["error"])
    log.info("done in %.1f s; results in %s", wall, run_dir.resolve())
    return RunResult(run_dir, out.summary, out.tests, out.records, out.figures, wall)


def report_run(run_dir: str | Path, **study_overrides):
    """Re-aggregate a finished run from its records and rewrite its tables and figures.

    Parameters
    ----------
    run_dir : path-like
        A run directory holding ``config.yaml`` and ``replicates.parquet``.
    **study_overrides
        Replace study settings for the aggregation, e.g. ``alpha=0.01`` or
        ``rho_hats=[0, 0.5]`` (cv_variance); ``config.yaml`` keeps what was run.

    Returns
    -------
    summary, tests : DataFrame (tests is None for studies without tests)
    """
    run_dir = Path(run_dir)
    cfg = OmegaConf.load(run_dir / "config.yaml")
    study = dict(OmegaConf.to_container(cfg.study, resolve=True))
    study.update(study_overrides)
    summary, tests, _ = STUDIES[study["name"]].write_reports(run_dir, study)
    return summary, tests
