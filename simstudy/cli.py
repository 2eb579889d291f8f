"""Command-line front ends: ``simstudy`` (Hydra: compose a config, then the same
:func:`simstudy.engine.run_study` path as Python), ``simstudy-report`` and ``simstudy-collect``.

Anything a user can cause ends with a one-paragraph message on stderr and exit status 2
(Ctrl-C: one line on how to resume, status 130); only bugs show a traceback.
"""
from __future__ import annotations

import errno
import logging
import os
import sys
from pathlib import Path
from typing import Any

from simstudy.errors import ConfigError, UserError

log = logging.getLogger("simstudy")

#: Set once the task function runs: Hydra's own exit status 1 before that is a composition error.
_TASK_STARTED = False


# ----------------------------------------------------------------------------- messages and logging
def _fail(prog: str, message: str, code: int = 2) -> None:
    print(f"{prog}: error: {message}", file=sys.stderr)
    sys.exit(code)


class _ConsoleFilter(logging.Filter):
    """simstudy's own INFO lines on the terminal; other libraries only from WARNING up
    (dask, numba, matplotlib's font manager...). The run's cli.log gets everything."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.startswith("simstudy") or record.levelno >= logging.WARNING


def setup_logging() -> None:
    """Console handler (stdout) with :class:`_ConsoleFilter`; root level INFO."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    if not any(getattr(h, "_simstudy", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s", "%H:%M:%S"))
        handler.addFilter(_ConsoleFilter())
        handler._simstudy = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    for noisy in ("distributed", "numba", "matplotlib", "asyncio", "tornado", "bokeh"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _disk_message(exc: OSError, run_dir: str) -> str:
    if exc.errno == errno.ENOSPC:
        return (f"no space left on the device of {run_dir!r} (errno 28). Free some space or choose another "
                "hydra.run.dir; the chunks already finished are kept and the same command resumes the run.")
    return (f"cannot write the run's files in {run_dir!r} ({exc.strerror or exc}). Check the permissions and free "
            "space, or choose another hydra.run.dir.")


# ----------------------------------------------------------------------------- simstudy
def plan_from_config(cfg, command: str = ""):
    """A validated :class:`simstudy.engine.RunPlan` from a composed Hydra config (no data loaded)."""
    from omegaconf import OmegaConf

    from simstudy.engine import prepare

    study = OmegaConf.to_container(cfg.study, resolve=True, throw_on_missing=False)
    target = study.pop("_target_", None) or study.get("name")
    if target == "custom" or target == "???":
        raise ConfigError("study._target_ is missing: study=custom needs the import path of your Study class, e.g. "
                          "study._target_=examples.bootstrap632.study.Bootstrap632Study.")
    if target and target != study.get("name"):
        study.pop("name", None)
    population = OmegaConf.to_container(cfg.population, resolve=True) if "population" in cfg else None
    learner = OmegaConf.to_container(cfg.learner, resolve=True) if "learner" in cfg else None
    runner = OmegaConf.to_container(cfg.runner, resolve=True)
    return prepare(target, population, learner, runner, command=command,
                   **{k: v for k, v in study.items() if k != "name"})


def _unused_parts(plan, overrides: list[str]) -> None:
    """Refuse population/learner overrides for a study that does not use that part."""
    for part in ("population", "learner"):
        if part in plan.study.uses:
            continue
        given = [o for o in overrides if o.lstrip("+~").split("=")[0].split(".")[0] == part]
        if given:
            raise ConfigError(f"{given[0]} does not apply: study {plan.study.name!r} defines its own {part}. Remove "
                              "this override.")


def _prestart(plan) -> None:
    from simstudy.warmup import prestart_workers

    runner = plan.runner
    if runner.only_replicate is None:
        target = f"{plan.study.__module__}:{plan.study.__qualname__}"
        prestart_workers(runner.n_jobs, runner.backend, target)


def _run(cfg) -> None:
    """The task function: compose -> validate -> (start workers) -> run -> headline."""
    from hydra.core.hydra_config import HydraConfig

    from simstudy.engine import execute
    from simstudy.warmup import wait_for_workers

    hydra_cfg = HydraConfig.get()
    run_dir = hydra_cfg.runtime.output_dir
    overrides = list(hydra_cfg.overrides.task)
    command = " ".join(["simstudy", *(o for o in overrides if not o.startswith(
        ("hydra.run.dir", "runner.only_replicate", "runner.on_error")))])
    try:
        plan = plan_from_config(cfg, command)
        plan.overrides = overrides
        _unused_parts(plan, overrides)
        _prestart(plan)
        result = execute(plan, run_dir)
    except UserError as exc:
        log.debug("refused: %s", exc)
        _fail("simstudy", str(exc))
    except KeyboardInterrupt:
        _fail("simstudy", f"interrupted. The finished chunks are kept in {run_dir}/shards; run the same command again "
                          "to resume.", 130)
    except OSError as exc:
        _fail("simstudy", _disk_message(exc, run_dir))
    finally:
        wait_for_workers()  # after a failure before the run started: let the warm-up finish cleanly
    print(result.headline())
    files = sorted(p.name + ("/" if p.is_dir() else "") for p in result.run_dir.iterdir()
                   if not p.name.startswith(".") and p.name not in ("shards", "run.lock"))
    print(f"simstudy: results in {result.run_dir.resolve()} ({result.wall_time:.1f} s): {', '.join(files)}")


def _check_run_dir_argument(argv: list[str]) -> None:
    """hydra.run.dir must be creatable before Hydra tries (Hydra would print a traceback)."""
    for arg in argv:
        if arg.startswith("hydra.run.dir="):
            path = Path(arg.split("=", 1)[1])
            parent = path
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            if path.exists() and not path.is_dir():
                _fail("simstudy", f"hydra.run.dir={str(path)!r} is a file, not a directory: choose a new directory.")
            if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
                _fail("simstudy", f"hydra.run.dir={str(path)!r} cannot be created ({str(parent)!r} is not a writable "
                                  "directory): choose a directory you can write to.")


def main() -> None:
    """Console-script entry point ``simstudy``."""
    import hydra

    from simstudy.config import register_configs

    argv = sys.argv[1:]
    if os.getcwd() not in sys.path:  # the user's own modules (study._target_=..., population._target_=...)
        sys.path.insert(0, os.getcwd())
    if any(a in ("--help", "-h") for a in argv):
        from simstudy.help import help_text

        print(help_text())
        return
    _check_run_dir_argument(argv)
    setup_logging()
    register_configs()

    @hydra.main(version_base="1.3", config_path="conf", config_name="config")
    def _task(cfg) -> None:
        global _TASK_STARTED
        _TASK_STARTED = True
        _run(cfg)

    try:
        _task()
    except SystemExit as exc:
        if exc.code == 1 and not _TASK_STARTED:  # Hydra's composition errors (unknown key, wrong type)
            sys.exit(2)
        raise


# ----------------------------------------------------------------------------- simstudy-report
def report_main(argv: list[str] | None = None) -> None:
    """``simstudy-report RUN_DIR``: re-aggregate a finished run from its records.

    Changes only aggregation settings (e.g. the test level or the rho_hat grid); the new tables
    and figures are written beside the run's, in RUN_DIR/reaggregated/<settings>/.
    """
    import argparse

    from simstudy.results import load_run

    parser = argparse.ArgumentParser(prog="simstudy-report", description=report_main.__doc__)
    parser.add_argument("run_dir", help="run directory holding config.yaml and replicates.parquet")
    parser.add_argument("--alpha", type=float, help="test level (default: the run's study.alpha)")
    parser.add_argument("--rho-hats", type=float, nargs="+", help="rho_hat grid (cv_variance; default: the run's)")
    args = parser.parse_args(argv)
    settings: dict[str, Any] = {}
    if args.alpha is not None:
        settings["alpha"] = args.alpha
    if args.rho_hats is not None:
        settings["rho_hats"] = list(args.rho_hats)
    setup_logging()
    try:
        result = load_run(args.run_dir, **settings)
        if settings:
            tag = "_".join(f"{k}={'-'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in settings.items())
            out = Path(args.run_dir) / "reaggregated" / tag
        else:
            out = Path(args.run_dir)
        files = result.write(out, records=False) if settings else result.write(out, records=False)
    except UserError as exc:
        _fail("simstudy-report", str(exc))
    except OSError as exc:
        _fail("simstudy-report", _disk_message(exc, args.run_dir))
    print(result.headline())
    print(f"simstudy-report: wrote {len(files)} files in {out} ({len(result.summary)} summary rows)")


# ----------------------------------------------------------------------------- simstudy-collect
def collect_main(argv: list[str] | None = None) -> None:
    """``simstudy-collect SWEEP_DIR``: merge the runs of a multirun into one table and figures."""
    import argparse

    from simstudy.collect import collect

    parser = argparse.ArgumentParser(prog="simstudy-collect", description=collect_main.__doc__)
    parser.add_argument("sweep_dir", help="the sweep directory of 'simstudy -m ...' (hydra.sweep.dir)")
    args = parser.parse_args(argv)
    setup_logging()
    try:
        result = collect(args.sweep_dir)
    except (UserError, FileNotFoundError) as exc:
        _fail("simstudy-collect", str(exc))
    except OSError as exc:
        _fail("simstudy-collect", _disk_message(exc, args.sweep_dir))
    for line in result.headlines:
        print(line)
    print(f"simstudy-collect: {len(result.summary)} summary rows from parameters {result.parameters}; wrote")
    for path in result.files:
        print(f"  {path}")


if __name__ == "__main__":
    main()
