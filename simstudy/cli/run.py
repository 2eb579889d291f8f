"""The ``simstudy`` command: compose a config with Hydra, then the same path as
:func:`simstudy.run_study` from Python (:func:`~simstudy.engine.plan.prepare`, then
:func:`~simstudy.engine.execution.execute`), and print the headline.
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from simstudy.cli import hydra as hydra_glue
from simstudy.cli.console import disk_message, fail, setup_logging
from simstudy.cli.run_dir import create_run_dir, remove_created_dirs
from simstudy.engine.backends.signals import RunStopped
from simstudy.errors import ConfigError, UserError

__all__ = ["console_main", "main"]

log = logging.getLogger("simstudy")


def _unused_parts(plan, overrides: list[str]) -> None:
    """Refuse population/learner overrides for a study that does not use that part."""
    for part in ("population", "learner"):
        if part in plan.study.uses:
            continue
        given = [o for o in overrides if o.lstrip("+~").split("=")[0].split(".")[0] == part]
        if given:
            raise ConfigError(f"{given[0]} does not apply: study {plan.study.name!r} defines its own {part}. Remove "
                              "this override.")


def _interrupted(run_dir: str, what: str = "interrupted") -> str:
    shards = Path(run_dir) / "shards"
    done = len(list(shards.rglob("*.json"))) if shards.is_dir() else 0
    if done:
        return (f"{what}. {done} finished chunk(s) are kept in {shards}; run the same command again to resume "
                "(only the missing replicates are computed).")
    return f"{what} before any chunk finished; run the same command again to start the run."


def _run(cfg) -> None:
    """The task function: compose -> validate -> lock the run directory -> run -> headline."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from simstudy.engine.execution import execute
    from simstudy.engine.rundir import RunDirectory

    setup_logging()
    hydra_cfg = HydraConfig.get()
    run_dir = hydra_cfg.runtime.output_dir
    overrides = list(hydra_cfg.overrides.task)
    command = " ".join(["simstudy", *(o for o in overrides if not o.startswith(
        ("hydra.run.dir", "runner.only_replicate", "runner.on_error")))])
    directory = RunDirectory(run_dir)
    try:
        plan = hydra_glue.plan_from_config(cfg, command)
        plan.overrides = overrides
        _unused_parts(plan, overrides)
        directory.lock()  # busy or foreign directory: refused before any data or worker
        # a single run needs its workers no more once the chunks are done; a sweep's next job reuses them
        result = execute(plan, directory, release_workers=hydra_cfg.mode != RunMode.MULTIRUN)
    except BaseException as exc:
        directory.abandon()
        remove_created_dirs(run_dir)
        if isinstance(exc, UserError):
            log.debug("refused: %s", exc)
            fail("simstudy", " ".join(str(exc).split()))
        if isinstance(exc, RunStopped):
            fail("simstudy", _interrupted(run_dir, f"stopped by {exc.name} (its workers too)"), 128 + exc.signum)
        if isinstance(exc, KeyboardInterrupt):
            fail("simstudy", _interrupted(run_dir), 130)
        if isinstance(exc, OSError):
            fail("simstudy", disk_message(exc, run_dir))
        raise
    print(result.headline())
    files = sorted(p.name + ("/" if p.is_dir() else "") for p in result.run_dir.iterdir()
                   if not p.name.startswith(".") and p.name not in ("shards", "run.lock"))
    print(f"simstudy: results in {result.run_dir.resolve()} ({result.wall_time:.1f} s): {', '.join(files)}")


# ----------------------------------------------------------------------------- Hydra's own errors


def main() -> None:
    """The ``simstudy`` command line (returns, or raises SystemExit with the exit status)."""
    try:
        _main(sys.argv[1:])
    except KeyboardInterrupt:
        if not hydra_glue.task_has_started():
            fail("simstudy", "interrupted before the run started; nothing was computed.", 130)
        raise


def console_main() -> None:
    """Console-script entry point ``simstudy``: :func:`main`, then, once everything is written,
    exit without the interpreter's teardown.

    A finished run has written and closed every file; what is left is stopping the loky workers
    gracefully and tearing down the modules a run imports (scikit-learn, scipy, pandas,
    matplotlib, numba), which takes longer than many short runs. The workers are killed instead and the process ends with ``os._exit`` after flushing the logs and streams.
    Errors and Ctrl-C (SystemExit, KeyboardInterrupt) take the ordinary exit.
    """
    main()
    from simstudy.engine.backends.workers import kill_workers

    kill_workers()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _main(argv: list[str]) -> None:
    if argv[:1] == ["audit"]:  # ``simstudy audit DATA ...``: the audit's own command line
        from simstudy.cli.audit import main as audit_main

        audit_main(argv[1:])
        return
    if argv[:1] in (["benchmark"], ["certify"]):  # the benchmark's own command lines
        from simstudy.cli import benchmark

        (benchmark.benchmark_main if argv[0] == "benchmark" else benchmark.certify_main)(argv[1:])
        return
    if os.getcwd() not in sys.path:  # the user's own modules (study._target_=..., population._target_=...)
        sys.path.insert(0, os.getcwd())
    if any(a in ("--help", "-h") for a in argv):
        from simstudy.cli.help import help_text

        print(help_text())
        return
    create_run_dir(argv)
    import hydra

    setup_logging()
    hydra_glue.register_configs()

    @hydra.main(version_base="1.3", config_path="../conf", config_name="config")
    def _task(cfg) -> None:
        # Only module-level names here: Hydra's joblib launcher pickles this function (by value),
        # and a held stream would not pickle.
        hydra_glue.task_started()
        _run(cfg)

    held = hydra_glue.HeldStderr(sys.stderr)
    sys.stderr = held
    try:
        with hydra_glue.mode_from_command_line(argv):
            _task()
        if not hydra_glue.task_has_started():  # --cfg, --info, ...: Hydra printed something and ran nothing
            remove_created_dirs("")
    except SystemExit as exc:
        if exc.code not in (0, None) and not hydra_glue.task_has_started():  # Hydra's composition errors (unknown key, wrong type)
            sys.stderr, text, held.held = held.stream, "".join(held.held), []
            remove_created_dirs("")
            fail("simstudy", hydra_glue.hydra_message(text))
        raise
    finally:
        sys.stderr = held.stream
        held.release()


# ----------------------------------------------------------------------------- simstudy-collect
