"""The run directory named on the command line (``hydra.run.dir``): created before Hydra does
(Hydra would print a traceback when it cannot), removed again when the run is refused."""
from __future__ import annotations

from pathlib import Path

from simstudy.cli.console import fail

__all__ = ["create_run_dir", "remove_created_dirs", "run_dir_argument"]

#: The ``hydra.run.dir`` of the command line, if any (else Hydra names the directory).
_RUN_DIR_GIVEN: str | None = None

#: Directories created by simstudy (or Hydra) for this run, removed again if the run is refused.
_CREATED_DIRS: list[Path] = []


def run_dir_argument(argv: list[str]) -> str | None:
    given = [a.split("=", 1)[1] for a in argv if a.startswith("hydra.run.dir=")]
    return given[-1] if given else None


def create_run_dir(argv: list[str]) -> None:
    """Create ``hydra.run.dir`` before Hydra does (Hydra would print a traceback when it cannot).

    The directories created are remembered, and removed again if the run is refused.
    """
    global _RUN_DIR_GIVEN
    value = _RUN_DIR_GIVEN = run_dir_argument(argv)
    if value is None or "${" in value or any(a in ("-m", "--multirun") for a in argv):
        return
    path = Path(value)
    if path.exists() and not path.is_dir():
        fail("simstudy", f"hydra.run.dir={value!r} is a file, not a directory: choose a new directory for the run's "
                          "outputs.")
    missing = []
    parent = path
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        fail("simstudy", f"hydra.run.dir={value!r} cannot be created: {str(parent)!r} is a file, not a directory. "
                          "Choose a directory you can write to.")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail("simstudy", f"hydra.run.dir={value!r} cannot be created ({exc.strerror or exc}). Choose a directory you "
                          "can write to.")
    _CREATED_DIRS[:] = missing


def remove_created_dirs(run_dir: str) -> None:
    """After a refusal: remove the run directory if it is empty and was made for this run."""
    created = _CREATED_DIRS or ([Path(run_dir)] if _RUN_DIR_GIVEN is None and run_dir else [])
    for path in created:  # deepest first
        try:
            path.rmdir()  # only if empty
        except OSError:
            break
