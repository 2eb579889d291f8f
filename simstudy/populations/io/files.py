"""Reading a data file: its checks (:func:`_check_path`) and content, decompressed when it is gzip
(:func:`_read_content`, :func:`_content_chunks`), with messages that name ``population.path``."""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Iterator

from simstudy.errors import DataUnavailableError

#: How many columns or rows a message lists.
_LISTED = 5
_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"


def _check_path(path: Path) -> None:
    shown = f"population.path={str(path)!r}"
    if path.is_dir():
        inside = sorted(p.name for p in path.iterdir() if p.is_file())
        listed = ", ".join(inside[:_LISTED]) + (", ..." if len(inside) > _LISTED else "")
        raise DataUnavailableError(
            f"{shown} is a directory, not a data file; point population.path at the data file "
            f"inside it ({'it holds: ' + listed if inside else 'it holds no files'}).")
    if not path.exists():
        raise DataUnavailableError(
            f"{shown}: no such file (looked for {str(path.absolute())!r}). Point population.path "
            "at the data file; a relative path is taken from the directory simstudy runs in.")
    if not path.is_file():
        raise DataUnavailableError(f"{shown} is not a regular file; point population.path at a data file.")


def _unreadable(path: Path, exc: BaseException) -> DataUnavailableError:
    """The message for a file that exists but cannot be read (permissions, damaged gzip, I/O)."""
    shown, what = f"population.path={str(path)!r}", f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
        return DataUnavailableError(
            f"{shown} is a damaged gzip file ({what}); download it again, or decompress what can be "
            "saved and point population.path at the text file.")
    return DataUnavailableError(
        f"{shown} cannot be read ({what}); make it readable or point population.path at a readable copy.")


def _read_content(path: Path) -> bytes:
    """The file's bytes, decompressed when it starts with the gzip signature (any suffix)."""
    _check_path(path)
    try:
        content = path.read_bytes()
        return gzip.decompress(content) if content[:2] == _GZIP_MAGIC else content
    except (OSError, EOFError, zlib.error) as exc:
        raise _unreadable(path, exc) from exc


def _content_chunks(path: Path) -> Iterator[bytes]:
    """The file's content in blocks, decompressed when it starts with the gzip signature."""
    _check_path(path)
    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == _GZIP_MAGIC
        with (gzip.open if gzipped else open)(path, "rb") as fh:
            yield from iter(lambda: fh.read(_CHUNK), b"")
    except (OSError, EOFError, zlib.error) as exc:
        raise _unreadable(path, exc) from exc
