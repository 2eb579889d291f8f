"""Command-line front ends: ``simstudy`` (Hydra: compose a config, then the same
:func:`simstudy.engine.execute.run_study` path as Python), ``simstudy-report`` and ``simstudy-collect``.

Anything a user can cause ends with a one-paragraph message on stderr and exit status 2
(Ctrl-C: one line on how to resume, status 130); only bugs show a traceback.
"""
from __future__ import annotations

import errno
import logging
import os
import sys
from contextlib import contextmanager
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


class _EarlyRecords(logging.Handler):
    """Keeps what is logged before the run directory is claimed (data loading, size warnings);
    the engine copies these records into ``cli.log`` when it opens it."""

    def __init__(self, capacity: int = 10_000):
        super().__init__(logging.INFO)
        self.early_records: list[logging.LogRecord] = []
        self.capacity = capacity

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.early_records) < self.capacity:
            self.early_records.append(record)


def setup_logging() -> None:
    """Console handler (stdout) with :class:`_ConsoleFilter`; root level INFO; early records kept
    for ``cli.log``."""
    logging.raiseExceptions = False  # a full disk under cli.log: no "--- Logging error ---" tracebacks
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    if not any(getattr(h, "_simstudy", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s", "%H:%M:%S"))
        handler.addFilter(_ConsoleFilter())
        handler._simstudy = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    if not any(isinstance(h, _EarlyRecords) for h in root.handlers):  # again for every job of a sweep
        root.addHandler(_EarlyRecords())


def _disk_message(exc: OSError, run_dir: str) -> str:
    if exc.errno == errno.ENOSPC:
        return (f"no space left on the device of {run_dir!r} (errno 28). Free some space or choose another "
                "hydra.run.dir; the chunks already finished are kept and the same command resumes the run.")
    return (f"cannot write the run's files in {run_dir!r} ({exc.strerror or exc}). Check the permissions and free "
            "space, or choose another hydra.run.dir.")


# ----------------------------------------------------------------------------- simstudy
def plan_from_config(cfg, command: str = ""):
    """A validated :class:`simstudy.engine.execute.RunPlan` from a composed Hydra config (no data loaded)."""
    from omegaconf import OmegaConf

    from simstudy.engine.execute import prepare

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


def _chunk_bound(plan) -> int | None:
    """At most this many chunks, when the config tells (``replicates`` per size); else None."""
    replicates, sizes = getattr(plan.config, "replicates", None), getattr(plan.config, "sizes", None)
    if isinstance(replicates, int) and isinstance(sizes, (list, tuple)) and sizes:
        return len(sizes) * -(-replicates // plan.runner.chunk_size)
    return None


def _prestart(plan) -> None:
    """Start (and warm) the workers while the data loads; only after every check that needs no data."""
    from simstudy.engine.backends.fork_pool import resolve_backend
    from simstudy.engine.runner import worker_count
    from simstudy.engine.backends.warmup import prestart_workers

    runner = plan.runner
    bound = _chunk_bound(plan)
    n_jobs = worker_count(runner.n_jobs, bound) if bound else runner.n_jobs
    backend = resolve_backend(runner.backend, n_jobs)  # auto: fork here (one thread so far) on Linux
    if runner.only_replicate is not None or runner.n_jobs == 1 or backend not in ("loky", "fork"):
        return  # runner.n_jobs=1: everything in this process, as asked
    if backend == "loky":
        _quiet_loky_tracker()
    target = f"{plan.study.__module__}:{plan.study.__qualname__}"
    prestart_workers(n_jobs, backend, target)


def _quiet_loky_tracker() -> None:
    """Start loky's resource tracker with its stderr on /dev/null.

    The tracker is a helper process of joblib's process pool; on Ctrl-C it races with the pool's
    own clean-up and prints internal tracebacks (KeyError in resource_tracker.py, "leaked
    semlock objects") to the terminal, which say nothing the user can act on.
    """
    try:
        from joblib.externals.loky.backend.resource_tracker import _resource_tracker
    except ImportError:  # pragma: no cover - depends on joblib's layout
        return
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        _resource_tracker.ensure_running()
    except Exception as exc:  # pragma: no cover - the pool starts its own tracker then
        log.debug("could not start loky's resource tracker quietly: %s", exc)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _interrupted(run_dir: str) -> str:
    shards = Path(run_dir) / "shards"
    done = len(list(shards.rglob("*.json"))) if shards.is_dir() else 0
    if done:
        return (f"interrupted. {done} finished chunk(s) are kept in {shards}; run the same command again to resume "
                "(only the missing replicates are computed).")
    return "interrupted before any chunk finished; run the same command again to start the run."


def _run(cfg) -> None:
    """The task function: compose -> validate -> lock the run directory -> (start workers) -> run -> headline."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from simstudy.engine.execute import execute
    from simstudy.engine.rundir import RunDirectory
    from simstudy.engine.backends.warmup import cancel_workers

    setup_logging()
    hydra_cfg = HydraConfig.get()
    run_dir = hydra_cfg.runtime.output_dir
    overrides = list(hydra_cfg.overrides.task)
    command = " ".join(["simstudy", *(o for o in overrides if not o.startswith(
        ("hydra.run.dir", "runner.only_replicate", "runner.on_error")))])
    directory = RunDirectory(run_dir)
    try:
        plan = plan_from_config(cfg, command)
        plan.overrides = overrides
        _unused_parts(plan, overrides)
        directory.lock()  # busy or foreign directory: refused before any data or worker
        _prestart(plan)
        # a single run needs its workers no more once the chunks are done; a sweep's next job reuses them
        result = execute(plan, directory, release_workers=hydra_cfg.mode != RunMode.MULTIRUN)
    except BaseException as exc:
        cancel_workers()  # a refusal is not delayed by the warm-up of workers it no longer needs
        directory.abandon()
        _remove_created_dirs(run_dir)
        if isinstance(exc, UserError):
            log.debug("refused: %s", exc)
            _fail("simstudy", " ".join(str(exc).split()))
        if isinstance(exc, KeyboardInterrupt):
            _fail("simstudy", _interrupted(run_dir), 130)
        if isinstance(exc, OSError):
            _fail("simstudy", _disk_message(exc, run_dir))
        raise
    print(result.headline())
    files = sorted(p.name + ("/" if p.is_dir() else "") for p in result.run_dir.iterdir()
                   if not p.name.startswith(".") and p.name not in ("shards", "run.lock"))
    print(f"simstudy: results in {result.run_dir.resolve()} ({result.wall_time:.1f} s): {', '.join(files)}")


# ----------------------------------------------------------------------------- the run directory argument
#: Directories created by simstudy (or Hydra) for this run, removed again if the run is refused.
_CREATED_DIRS: list[Path] = []


def _run_dir_argument(argv: list[str]) -> str | None:
    given = [a.split("=", 1)[1] for a in argv if a.startswith("hydra.run.dir=")]
    return given[-1] if given else None


def _create_run_dir(argv: list[str]) -> None:
    """Create ``hydra.run.dir`` before Hydra does (Hydra would print a traceback when it cannot).

    The directories created are remembered, and removed again if the run is refused.
    """
    value = _run_dir_argument(argv)
    if value is None or "${" in value or any(a in ("-m", "--multirun") for a in argv):
        return
    path = Path(value)
    if path.exists() and not path.is_dir():
        _fail("simstudy", f"hydra.run.dir={value!r} is a file, not a directory: choose a new directory for the run's "
                          "outputs.")
    missing = []
    parent = path
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        _fail("simstudy", f"hydra.run.dir={value!r} cannot be created: {str(parent)!r} is a file, not a directory. "
                          "Choose a directory you can write to.")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail("simstudy", f"hydra.run.dir={value!r} cannot be created ({exc.strerror or exc}). Choose a directory you "
                          "can write to.")
    _CREATED_DIRS[:] = missing


def _remove_created_dirs(run_dir: str) -> None:
    """After a refusal: remove the run directory if it is empty and was made for this run."""
    created = _CREATED_DIRS or ([Path(run_dir)] if _RUN_DIR_GIVEN is None and run_dir else [])
    for path in created:  # deepest first
        try:
            path.rmdir()  # only if empty
        except OSError:
            break


_RUN_DIR_GIVEN: str | None = None


# ----------------------------------------------------------------------------- Hydra's own errors
def _task_started() -> None:
    """Hydra composed the config and runs the task: from here on, stderr is not held back."""
    global _TASK_STARTED
    _TASK_STARTED = True
    if isinstance(sys.stderr, _HeldStderr):
        sys.stderr.release()


class _HeldStderr:
    """``sys.stderr`` while Hydra composes the config: what Hydra writes is held back until the task
    starts (then passed on) or Hydra gives up (then reworded as one ``simstudy: error:`` paragraph)."""

    def __init__(self, stream: Any):
        self.stream, self.held = stream, []

    def write(self, text: str) -> int:
        if _TASK_STARTED:
            return self.stream.write(text)
        self.held.append(text)
        return len(text)

    def release(self) -> None:
        if self.held:
            self.stream.write("".join(self.held))
            self.held = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _hydra_message(text: str) -> str:
    """Hydra's multi-line composition error as one paragraph (no stack-trace tip, no search path)."""
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("Set the environment variable HYDRA_FULL_ERROR")]
    if "Config search path:" in lines:
        lines = lines[:lines.index("Config search path:")]
    if any(line.startswith("Traceback") for line in lines):
        lines = lines[-1:]  # the exception itself
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith(":") and out[-1].startswith("Available options"):
            out[-1] += " " + line
        elif out and out[-1].startswith("Available options"):
            out[-1] += ", " + line
        else:
            out.append(line)
    message = "; ".join(line.rstrip(".") for line in out) or "the configuration could not be composed"
    return message + ". See simstudy --help for the groups, options and fields."


def main() -> None:
    """The ``simstudy`` command line (returns, or raises SystemExit with the exit status)."""
    try:
        _main(sys.argv[1:])
    except KeyboardInterrupt:
        if not _TASK_STARTED:
            _fail("simstudy", "interrupted before the run started; nothing was computed.", 130)
        raise


def console_main() -> None:
    """Console-script entry point ``simstudy``: :func:`main`, then, once everything is written,
    exit without the interpreter's teardown.

    A finished run has written and closed every file; what is left is stopping the loky workers
    gracefully and tearing down the modules a run imports (scikit-learn, scipy, pandas,
    matplotlib, numba): 1.2-1.4 s measured after the quick study's last line. The workers are
    killed instead and the process ends with ``os._exit`` after flushing the logs and streams.
    Errors and Ctrl-C (SystemExit, KeyboardInterrupt) take the ordinary exit.
    """
    main()
    from simstudy.engine.backends.warmup import kill_workers

    kill_workers()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _main(argv: list[str]) -> None:
    global _RUN_DIR_GIVEN
    if argv[:1] == ["audit"]:  # ``simstudy audit DATA ...``: the audit's own command line
        from simstudy.cli.audit import main as audit_main

        audit_main(argv[1:])
        return
    if os.getcwd() not in sys.path:  # the user's own modules (study._target_=..., population._target_=...)
        sys.path.insert(0, os.getcwd())
    if any(a in ("--help", "-h") for a in argv):
        from simstudy.cli.help import help_text

        print(help_text())
        return
    _RUN_DIR_GIVEN = _run_dir_argument(argv)
    _create_run_dir(argv)
    import hydra

    from simstudy.engine.config import register_configs

    setup_logging()
    register_configs()

    @hydra.main(version_base="1.3", config_path="../conf", config_name="config")
    def _task(cfg) -> None:
        # Only module-level names here: Hydra's joblib launcher pickles this function (by value),
        # and a held stream would not pickle.
        _task_started()
        _run(cfg)

    held = _HeldStderr(sys.stderr)
    sys.stderr = held
    try:
        with _mode_from_command_line(argv):
            _task()
        if not _TASK_STARTED:  # --cfg, --info, ...: Hydra printed something and ran nothing
            _remove_created_dirs("")
    except SystemExit as exc:
        if exc.code not in (0, None) and not _TASK_STARTED:  # Hydra's composition errors (unknown key, wrong type)
            sys.stderr, text, held.held = held.stream, "".join(held.held), []
            _remove_created_dirs("")
            _fail("simstudy", _hydra_message(text))
        raise
    finally:
        sys.stderr = held.stream
        held.release()


#: Arguments that may set ``hydra.mode`` (or bring config files that do): with any of them Hydra
#: reads the mode from the composed configuration as usual.
_MODE_ARGUMENTS = ("hydra.mode", "hydra.searchpath", "--config-dir", "--config-path", "--config-name", "-cd", "-cp",
                   "-cn")


@contextmanager
def _mode_from_command_line(argv: list[str]):
    """Run Hydra without the composition it makes only to read ``hydra.mode``.

    Before a run Hydra composes the whole configuration once just to read ``hydra.mode`` (set
    by a config file or an override), then again for the run (skipping it took a tiny Letter
    run from 1.61-1.62 to 1.51-1.52 s on the benchmark machine).
    simstudy's own configs leave the mode unset (tested for every preset), so unless the command
    line names the mode or other config files (:data:`_MODE_ARGUMENTS`), the first composition
    is skipped and Hydra takes the mode from ``-m``/``--multirun``, as it does when the composed
    config leaves it unset.
    """
    try:
        from hydra._internal.hydra import Hydra
    except ImportError:  # pragma: no cover - another Hydra layout: its own behaviour
        yield
        return
    names = [arg.split("=", 1)[0].lstrip("+~") for arg in argv]
    original = getattr(Hydra, "get_mode", None)
    if original is None or any(name.startswith(_MODE_ARGUMENTS) for name in names):
        yield
        return
    Hydra.get_mode = lambda self, config_name, overrides: None
    try:
        yield
    finally:
        Hydra.get_mode = original


# ----------------------------------------------------------------------------- simstudy-report
def report_main(argv: list[str] | None = None) -> None:
    """``simstudy-report RUN_DIR``: re-aggregate a finished run from its records.

    Changes only aggregation settings (the study's ``report`` fields, e.g. its test level); the
    new tables and figures are written beside the run's, in RUN_DIR/reaggregated/<settings>/.
    """
    import argparse

    from simstudy.results import load_run

    parser = argparse.ArgumentParser(
        prog="simstudy-report", description=report_main.__doc__,
        epilog="example: simstudy-report runs/letter study.alpha=0.01")
    parser.add_argument("run_dir", help="run directory holding config.yaml and replicates.parquet")
    parser.add_argument("settings", nargs="*", metavar="study.KEY=VALUE",
                        help="aggregation settings of the study (its 'report' fields, e.g. study.alpha); "
                             "values are YAML (0.01, [0,0.5])")
    args = parser.parse_args(argv)
    try:
        settings = _report_settings(args.settings)
    except UserError as exc:
        _fail("simstudy-report", " ".join(str(exc).split()))
    setup_logging()
    try:
        result = load_run(args.run_dir, **settings)
        out = Path(args.run_dir)  # the run's own settings: the same tables, rewritten from the records
        if settings:  # other settings: beside the run's tables, never over them
            tag = "_".join(f"{k}={'-'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in settings.items())
            out = out / "reaggregated" / tag
        files = result.write(out, records=False)
    except UserError as exc:
        _fail("simstudy-report", " ".join(str(exc).split()))
    except OSError as exc:
        _fail("simstudy-report", _disk_message(exc, args.run_dir))
    except KeyboardInterrupt:
        _fail("simstudy-report", "interrupted; run the same command again (the records are never changed by it).", 130)
    print(result.headline())
    print(f"simstudy-report: wrote {len(files)} files in {out} ({len(result.summary)} summary rows)")


def _report_settings(items: list[str]) -> dict[str, Any]:
    """``["study.alpha=0.01", ...]`` -> ``{"alpha": 0.01}``; values parsed as YAML, like Hydra's."""
    import yaml

    settings: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("study.") or len(key) <= len("study."):
            raise ConfigError(f"{item!r} is not a setting: write study.KEY=VALUE (e.g. study.alpha=0.01).")
        try:
            settings[key[len("study."):]] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ConfigError(f"{key}={value!r} is not a value (YAML: a number, a string or a list like [0,0.5]).") from None
    return settings


# ----------------------------------------------------------------------------- simstudy-collect
def collect_main(argv: list[str] | None = None) -> None:
    """``simstudy-collect SWEEP_DIR``: merge the runs of a multirun into one table and figures."""
    import argparse

    from simstudy.sweeps import collect

    parser = argparse.ArgumentParser(prog="simstudy-collect", description=collect_main.__doc__)
    parser.add_argument("sweep_dir", help="the sweep directory of 'simstudy -m ...' (hydra.sweep.dir)")
    args = parser.parse_args(argv)
    setup_logging()
    try:
        result = collect(args.sweep_dir)
    except UserError as exc:
        _fail("simstudy-collect", " ".join(str(exc).split()))
    except KeyboardInterrupt:
        _fail("simstudy-collect", "interrupted; the run directories are unchanged.", 130)
    except OSError as exc:
        _fail("simstudy-collect", _disk_message(exc, args.sweep_dir))
    for line in result.headlines:
        print(line)
    print(f"simstudy-collect: {len(result.summary)} summary rows from parameters {result.parameters}; wrote")
    for path in result.files:
        print(f"  {path}")

