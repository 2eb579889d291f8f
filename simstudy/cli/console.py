"""The console of the command lines: one-paragraph errors (:func:`fail`), the log handlers
(:func:`setup_logging`) and the message for a failed write (:func:`disk_message`).

Anything a user can cause ends with a one-paragraph message on stderr and exit status 2
(Ctrl-C: one line on how to resume, status 130); only bugs show a traceback.
"""
from __future__ import annotations

import errno
import logging
import sys

__all__ = ["ConsoleFilter", "EarlyRecords", "disk_message", "fail", "setup_logging"]


def fail(prog: str, message: str, code: int = 2) -> None:
    print(f"{prog}: error: {message}", file=sys.stderr)
    sys.exit(code)


class ConsoleFilter(logging.Filter):
    """simstudy's own INFO lines on the terminal; other libraries only from WARNING up
    (dask, numba, matplotlib's font manager...). The run's cli.log gets everything."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.startswith("simstudy") or record.levelno >= logging.WARNING


class EarlyRecords(logging.Handler):
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
    """Console handler (stdout) with :class:`ConsoleFilter`; root level INFO; early records kept
    for ``cli.log``."""
    logging.raiseExceptions = False  # a full disk under cli.log: no "--- Logging error ---" tracebacks
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    if not any(getattr(h, "_simstudy", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s", "%H:%M:%S"))
        handler.addFilter(ConsoleFilter())
        handler._simstudy = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    if not any(isinstance(h, EarlyRecords) for h in root.handlers):  # again for every job of a sweep
        root.addHandler(EarlyRecords())


def disk_message(exc: OSError, run_dir: str) -> str:
    if exc.errno == errno.ENOSPC:
        return (f"no space left on the device of {run_dir!r} (errno 28). Free some space or choose another "
                "hydra.run.dir; the chunks already finished are kept and the same command resumes the run.")
    return (f"cannot write the run's files in {run_dir!r} ({exc.strerror or exc}). Check the permissions and free "
            "space, or choose another hydra.run.dir.")
