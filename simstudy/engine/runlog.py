"""The run's log: everything logged during a run also goes to ``RUN_DIR/cli.log``."""
from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["attach_log", "detach_log", "note_cold_start"]

log = logging.getLogger("simstudy")

#: The package folder: numba writes each module's compiled kernels into a cache beside it.
PACKAGE = Path(__file__).resolve().parents[1]

_LOG_HANDLER: logging.Handler | None = None


def attach_log(path: Path) -> None:
    """Everything logged during the run also goes to ``RUN_DIR/cli.log`` (all levels, all loggers)."""
    global _LOG_HANDLER
    handler = logging.FileHandler(path / "cli.log")
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    for early in [h for h in root.handlers if getattr(h, "early_records", None) is not None]:
        for record in early.early_records:  # logged before the directory was claimed (the CLI keeps them)
            handler.handle(record)
        root.removeHandler(early)
    root.addHandler(handler)
    _LOG_HANDLER = handler


def detach_log() -> None:
    global _LOG_HANDLER
    if _LOG_HANDLER is not None:
        logging.getLogger().removeHandler(_LOG_HANDLER)
        _LOG_HANDLER.close()
        _LOG_HANDLER = None


def note_cold_start() -> bool:
    """Log that numba kernels are being compiled when no compiled cache exists yet."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    roots = [PACKAGE] + ([Path(cache_dir)] if cache_dir else [])
    if any(any(root.rglob("*.nbi")) for root in roots if root.exists()):
        return False
    log.info("first run on this installation: compiling simstudy's numba kernels "
             "(about 10-30 s once; later runs load them from the cache)")
    return True
