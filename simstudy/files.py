"""Writing a file so that a reader never sees it half-written: :func:`atomic_path`.

Every file of a run directory (records, tables, figures, report, manifest, config) is written
to a temporary name in its own directory and then renamed over the final name
(:func:`os.replace`, atomic on POSIX within one file system). A process killed while writing
leaves the previous file, or none, and a ``<name>.tmp<pid>`` file that the next run removes
(:func:`remove_temporary_files`); never a truncated final file.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Iterator

__all__ = ["TEMPORARY_MARK", "atomic_path", "remove_temporary_files", "sha256_file", "write_csv_atomic",
           "write_text_atomic"]

#: What marks a temporary name: ``<final name>.tmp<pid>``.
TEMPORARY_MARK = ".tmp"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed to ``path`` when the block ends
    without an error, removed when it raises (``path`` is then left as it was).

    The temporary name keeps no extension of its own, so writers that infer a format from the
    name (matplotlib) must be given the format explicitly.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(folder / "a.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> (folder / "a.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('done', ['a.txt'])
    """
    path = Path(path)
    tmp = path.with_name(f"{path.name}{TEMPORARY_MARK}{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` through :func:`atomic_path`; returns ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)
    return Path(path)


def write_csv_atomic(frame, path: str | os.PathLike) -> Path:
    """``frame.to_csv(path, index=False)`` through :func:`atomic_path`; returns ``path``."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
    return Path(path)


def remove_temporary_files(folder: str | os.PathLike, recursive: bool = False) -> list[Path]:
    """Remove the temporary files (``*.tmp<pid>``) a killed writer left in ``folder``; returns them."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = folder.rglob(f"*{TEMPORARY_MARK}*") if recursive else folder.glob(f"*{TEMPORARY_MARK}*")
    removed = [p for p in found if p.is_file() and p.name.rsplit(TEMPORARY_MARK, 1)[-1].isdigit()]
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
