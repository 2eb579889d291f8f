"""Console entry point ``simstudy``: compose the Hydra config, then :func:`simstudy.run.run`.

Examples
--------
    simstudy                                   # quick default study (synthetic population)
    simstudy experiment=table2_letter population.path=../shared/data/letter-recognition.data
    simstudy study.sizes=[20,400] study.replicates=2000 runner.n_jobs=2
    simstudy --help                            # config groups and options
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from simstudy.config import ConfigError, register_configs

register_configs()
log = logging.getLogger("simstudy")


def _prestart_workers(cfg: DictConfig) -> None:
    """Start the run's workers now, so that they import and load kernels while this process
    imports scikit-learn and simstudy (see :mod:`simstudy.warmup`). Only for the loky backend
    with a known study; the configuration is validated in full by :func:`simstudy.run.run`."""
    from simstudy.studies import STUDY_MODULES, module_path
    from simstudy.warmup import prestart_workers

    runner = cfg.get("runner", {})
    name = cfg.get("study", {}).get("name")
    n_jobs = runner.get("n_jobs")
    if name in STUDY_MODULES and runner.get("only_replicate") is None and isinstance(n_jobs, int) \
            and (n_jobs > 0 or n_jobs == -1):
        prestart_workers(n_jobs, str(runner.get("backend")), module_path(name))


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def _main(cfg: DictConfig) -> None:
    _prestart_workers(cfg)
    from simstudy.populations import DataUnavailableError
    from simstudy.run import run
    from simstudy.warmup import wait_for_workers

    hydra_cfg = HydraConfig.get()
    run_dir = hydra_cfg.runtime.output_dir
    overrides = [o for o in hydra_cfg.overrides.task
                 if not o.startswith(("hydra.run.dir", "runner.only_replicate", "runner.on_error"))]
    command = " ".join(["simstudy", *overrides])
    from simstudy.runner import FailureRateExceeded

    try:
        result = run(cfg, run_dir, command=command)
    except (ConfigError, DataUnavailableError, ValueError, FailureRateExceeded) as exc:
        log.error("%s", exc)
        print(f"simstudy: error: {exc}", file=sys.stderr)
        sys.exit(2)
    finally:
        wait_for_workers()  # after a failure before the run started: let the warm-up finish cleanly
    print(f"simstudy: results written to {result.run_dir.resolve()} ({result.wall_time:.1f} s)")
    written = sorted(p.name + ("/" if p.is_dir() else "") for p in result.run_dir.iterdir()
                     if not p.name.startswith("."))
    print("  " + ", ".join(written))


def main() -> None:
    """Console-script entry point."""
    _main()


if __name__ == "__main__":
    main()


def report_main(argv: list[str] | None = None) -> None:
    """``simstudy-report RUN_DIR``: re-aggregate a finished run from replicates.parquet.

    Useful to change the test level or the rho_hat grid without recomputing replicates.
    """
    import argparse

    from simstudy.run import report_run

    parser = argparse.ArgumentParser(prog="simstudy-report", description=report_main.__doc__)
    parser.add_argument("run_dir", help="run directory holding config.yaml and replicates.parquet")
    parser.add_argument("--alpha", type=float, help="test level (default: the run's study.alpha)")
    parser.add_argument("--rho-hats", type=float, nargs="+", help="rho_hat grid (default: the run's)")
    args = parser.parse_args(argv)
    overrides = {}
    if args.alpha is not None:
        overrides["alpha"] = args.alpha
    if args.rho_hats is not None:
        overrides["rho_hats"] = args.rho_hats
    summary, tests = report_run(args.run_dir, **overrides)
    study = OmegaConf.load(Path(args.run_dir) / "config.yaml").study.name
    written = "summary.csv, summary.md, figures/" + (", tests.csv" if tests is not None else "") + \
        (", table2.md" if study == "cv_variance" else "")
    print(f"simstudy-report: rewrote {written} in {args.run_dir} ({len(summary)} summary rows)")


def collect_main(argv: list[str] | None = None) -> None:
    """``simstudy-collect SWEEP_DIR``: merge the runs of a multirun into one table and figures."""
    import argparse

    from simstudy.collect import collect

    parser = argparse.ArgumentParser(prog="simstudy-collect", description=collect_main.__doc__)
    parser.add_argument("sweep_dir", help="the sweep directory of 'simstudy -m ...' (hydra.sweep.dir)")
    args = parser.parse_args(argv)
    try:
        result = collect(args.sweep_dir)
    except FileNotFoundError as exc:
        print(f"simstudy-collect: error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(f"simstudy-collect: {len(result.summary)} summary rows from parameters {result.parameters}; wrote")
    for path in result.files:
        print(f"  {path}")
