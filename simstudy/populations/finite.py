"""Finite tabular populations: a whole data set is the population, sampled uniformly.

The data come from OpenML (``sklearn.datasets.fetch_openml``, cached under ``data_home``),
from scikit-learn's CoverType fetcher (the raw UCI file), or from a local delimited file
(UCI style with the class first, or OpenML/CSV style with the class last).

Nothing is guessed silently. A cell is *missing* when, stripped of blanks, it is one of
:data:`MISSING_MARKERS` (the empty cell, ``?``, ``NA``, ``N/A``, ``NaN``, ``nan``, ``null``,
``NULL``, ``None``); missing features are refused (``missing="error"``, the default) or their
rows dropped with a warning (``missing="drop_rows"``), and a missing class is always an error.
Every error names the configuration field, the bad value and the fix, and is a
:class:`DataUnavailableError` when the data cannot be read at all, a ``ValueError`` otherwise.

Each loader returns a :class:`TabularData` whose ``fingerprint`` (:func:`data_fingerprint`)
identifies the data content: it lets a resumed run refuse changed data. It is separate from
:meth:`TabularPopulation.seed_params`, so moving or re-compressing a file changes no seed.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import logging
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from simstudy.populations.base import Population, Sample
from simstudy.populations.configs import MISSING_POLICIES

__all__ = ["MISSING_MARKERS", "MISSING_POLICIES", "DataUnavailableError", "TabularData",
           "TabularPopulation", "binarize", "build_tabular_population", "data_fingerprint",
           "load_covtype", "load_openml", "load_table_file", "load_tabular"]

log = logging.getLogger("simstudy")

#: Cell contents (after stripping blanks) that mean "no value".
MISSING_MARKERS = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")

_DELIMITERS = (",", "\t", ";")  # sniffed in this order of preference; else runs of blanks
_CHUNK = 1 << 20
_LISTED = 5  # how many columns or rows a message lists
_GZIP_MAGIC = b"\x1f\x8b"
_BINARY_SIGNATURES = {
    b"PK\x03\x04": "a zip archive (an .xlsx workbook is one too)", b"BZh": "a bzip2 file",
    b"\xfd7zXZ\x00": "an xz file", b"7z\xbc\xaf": "a 7-Zip archive", b"PAR1": "a Parquet file",
    b"\x89HDF": "an HDF5 file", b"\x93NUMPY": "a NumPy .npy file",
    b"\xff\xfe": "UTF-16 text", b"\xfe\xff": "UTF-16 text",
}
_TEXT_FIX = ("population.path needs a delimited UTF-8 text file (CSV or UCI .data, optionally "
             "gzip-compressed): export, unpack or convert the data to such a file and point population.path at it.")


from simstudy.errors import DataUnavailableError  # noqa: E402  (re-exported)


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class TabularData:
    """A loaded data set: numeric features, class labels and what identifies them.

    Attributes
    ----------
    X : ndarray of float64, shape (N, p)
    labels : ndarray of str, shape (N,)
    fingerprint : str
        :func:`data_fingerprint` of the data: of the file's content for a file, of the
        loaded arrays for a download.
    source : str
        ``"file"``, ``"openml:<id>"`` or ``"covtype"``.
    feature_names : tuple of str
        Column names (the header of a file; empty when the file has none).
    dropped_rows : int
        Rows left out for missing features (``missing="drop_rows"``).
    """

    X: np.ndarray
    labels: np.ndarray
    fingerprint: str
    source: str
    feature_names: tuple[str, ...] = ()
    dropped_rows: int = 0

    def __iter__(self) -> Iterator[np.ndarray]:
        """Unpack as ``X, labels = load_table_file(...)``, as when the loaders returned a pair."""
        return iter((self.X, self.labels))


@dataclass(frozen=True)
class _Origin:
    """Where data rows come from, for messages: the field, and the row numbers users see."""

    where: str  # e.g. "population.path='x.csv'"
    row_word: str  # "line" (of a file) or "row" (of a download)
    rows: np.ndarray  # 1-based number of each data row
    missing_note: str  # which cells count as missing
    number_fix: str  # what to do about a cell that is not a finite number

    def at(self, i: int) -> str:
        return f"{self.row_word} {self.rows[i]}"

    def listing(self, mask: np.ndarray) -> str:
        """The first few row numbers where ``mask`` holds, e.g. 'lines 4, 9 and 2 more'."""
        hits = self.rows[np.flatnonzero(mask)]
        shown = ", ".join(str(r) for r in hits[:_LISTED])
        more = f" and {hits.size - _LISTED} more" if hits.size > _LISTED else ""
        return f"{self.row_word}{'s' if hits.size > 1 else ''} {shown}{more}"


@dataclass
class _Column:
    """One column of data rows, converted to numbers where possible.

    ``values`` is NaN where the cell is missing or not a finite number; ``text`` holds the
    stripped cells of columns read as text (class candidates), else None.
    """

    index: int
    name: str | None
    values: np.ndarray
    missing: np.ndarray
    bad: np.ndarray
    text: np.ndarray | None = None

    def describe(self) -> str:
        """E.g. "column 3 ('age')": the 0-based index, as ``population.label_column`` takes it."""
        return f"column {self.index}" + (f" ({self.name!r})" if self.name else "")

    @property
    def kind(self) -> str:
        """'empty' (only missing cells), 'text' (some non-number) or 'number'."""
        if self.missing.all():
            return "empty"
        return "text" if self.bad.any() else "number"

    def first_bad(self) -> int:
        return int(np.argmax(self.bad))

    def shown(self, i: int) -> str:
        """Cell ``i`` as the user wrote it (as parsed, for number columns)."""
        return repr(str(self.text[i])) if self.text is not None else repr(str(self.values[i]))

    def joined(self, below: _Column) -> _Column:
        """This column's rows followed by those of ``below`` (text kept if either side has it)."""
        text = None
        if self.text is not None or below.text is not None:
            text = np.concatenate([part.text if part.text is not None else part.values.astype(object)
                                   for part in (self, below)])
        return _Column(self.index, self.name, np.concatenate([self.values, below.values]),
                       np.concatenate([self.missing, below.missing]), np.concatenate([self.bad, below.bad]),
                       text)


@dataclass(frozen=True)
class _Labels:
    """The class of each row, whether it is missing, and how messages speak of it."""

    text: np.ndarray
    missing: np.ndarray
    description: str  # where the class is, e.g. "column 4 ('y') (population.label_column='auto')"
    fix: str  # what to do when it holds a single class


# ----------------------------------------------------------------------------- fingerprint
def data_fingerprint(data: str | os.PathLike | np.ndarray | Sequence[np.ndarray]) -> str:
    """SHA-256 (hex) identifying a data set, to refuse resuming a run onto changed data.

    Parameters
    ----------
    data : path-like, ndarray or sequence of ndarrays
        A file: its content is hashed, streamed (decompressed for gzip files, so that
        re-compressing the same text does not change it). Arrays (e.g. ``(X, labels)`` of a
        download): the dtype, shape and bytes of each, in order.

    Returns
    -------
    str
        64 hexadecimal digits. Independent of the file's name and place.
    """
    if isinstance(data, (str, os.PathLike)):
        return _file_fingerprint(Path(data))
    arrays = (data,) if isinstance(data, np.ndarray) else tuple(data)
    digest = hashlib.sha256()
    for array in arrays:
        array = np.asarray(array)
        if array.dtype == object:
            array = array.astype(str)
        array = np.ascontiguousarray(array)
        digest.update(f"{array.dtype.str}{array.shape};".encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


def _file_fingerprint(path: Path) -> str:
    _check_path(path)
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == _GZIP_MAGIC
        with (gzip.open if gzipped else open)(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise _unreadable(path, exc) from exc
    return digest.hexdigest()


# ----------------------------------------------------------------------------- reading a file
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


def _decode(content: bytes, path: Path) -> str:
    shown = f"population.path={str(path)!r}"
    if not content.strip():
        what = "empty (0 bytes)" if not content else "blank (only white space)"
        raise DataUnavailableError(
            f"{shown} is {what}: there are no data. Point population.path at the data file "
            "(an interrupted download or export leaves such files).")
    for magic, kind in _BINARY_SIGNATURES.items():
        if content.startswith(magic):
            raise DataUnavailableError(f"{shown} is {kind}, not UTF-8 text. {_TEXT_FIX}")
    if b"\x00" in content[:65536]:
        raise DataUnavailableError(f"{shown} is a binary file (it holds NUL bytes), not text. {_TEXT_FIX}")
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = content[:exc.start].count(b"\n") + 1
        raise DataUnavailableError(
            f"{shown} is not UTF-8 text (byte 0x{content[exc.start]:02x} on line {line}). Convert "
            "it to UTF-8 (e.g. iconv -f latin1 -t utf-8) and point population.path at the result."
        ) from None


# ----------------------------------------------------------------------------- file layout
@dataclass(frozen=True)
class _Layout:
    """The non-blank lines of a text file and how they split into fields."""

    lines: list[str]
    numbers: np.ndarray  # 1-based line number of each non-blank line
    delimiter: str | None  # None: runs of blanks
    first: list[str]  # the fields of the first non-blank line

    @property
    def shown(self) -> str:
        return "runs of blanks" if self.delimiter is None else repr(self.delimiter)


def _resolve_delimiter(delimiter: str | None, first_line: str) -> str | None:
    if delimiter is None:
        counts = [first_line.count(d) for d in _DELIMITERS]
        return _DELIMITERS[int(np.argmax(counts))] if max(counts) else None
    if delimiter == r"\s+" or (delimiter and not delimiter.strip()):
        return None
    if len(delimiter) != 1:
        raise ValueError(
            f"population.delimiter={delimiter!r} is not a single character; use e.g. ',', ';', "
            "'\\t', ' ' (runs of blanks), or null to detect it.")
    return delimiter


def _split_lines(lines: list[str], delimiter: str | None, quoted: bool) -> list[list[str]] | None:
    """Fields of each line when they need a parser (blanks, quotes), else None."""
    if delimiter is None:
        return [line.split() for line in lines]
    if quoted:
        return list(csv.reader(lines, delimiter=delimiter, skipinitialspace=True))
    return None


def _scan(text: str, path: Path, delimiter: str | None) -> _Layout:
    """Find the non-blank lines and the delimiter; refuse ragged rows and single columns."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    numbers = np.array([i + 1 for i, line in enumerate(raw) if line.strip()], dtype=np.int64)
    lines = [raw[i - 1] for i in numbers]
    sep = _resolve_delimiter(delimiter, lines[0])
    split = _split_lines(lines, sep, quoted='"' in text)
    if split is not None and len(split) != len(lines):
        raise ValueError(
            f"population.path={str(path)!r}: a quoted field spans lines, which is not supported; "
            "remove the line breaks inside quotes.")
    counts = np.array([len(f) for f in split] if split is not None else [line.count(sep) + 1 for line in lines])
    first = split[0] if split is not None else lines[0].split(sep)
    layout = _Layout(lines, numbers, sep, [cell.strip() for cell in first])
    _check_columns(layout, counts, path)
    return layout


def _check_columns(layout: _Layout, counts: np.ndarray, path: Path) -> None:
    shown = f"population.path={str(path)!r}"
    if counts[0] < 2:
        raise ValueError(
            f"{shown}: line {layout.numbers[0]} splits into {counts[0]} field(s) on {layout.shown}; need "
            "the class and at least one feature. Set population.delimiter to the file's separator.")
    ragged = np.flatnonzero(counts != counts[0])
    if ragged.size:
        i = ragged[0]
        blank_hint = (" With runs of blanks as separator an empty cell cannot be seen: mark missing "
                      "values with '?' or NA." if layout.delimiter is None else "")
        raise ValueError(
            f"{shown}: line {layout.numbers[i]} has {counts[i]} fields but line {layout.numbers[0]} has "
            f"{counts[0]} (separator {layout.shown}); {ragged.size} line(s) differ. Every row needs the "
            "same number of fields: repair those lines (a missing value needs an empty cell or a "
            "marker such as '?'), or set population.delimiter if the separator is wrong." + blank_hint)


# ----------------------------------------------------------------------------- columns
def _analyse(series: pd.Series, index: int) -> _Column:
    """Convert one parsed column: numbers, missing cells, cells that are not numbers."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        return _Column(index, None, values, missing, np.isinf(values))
    absent = series.isna().to_numpy()
    stripped = series.astype(object).where(~absent, "").astype(str).str.strip()
    missing = absent | stripped.isin(MISSING_MARKERS).to_numpy()
    values = pd.to_numeric(stripped.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~missing & ~np.isfinite(values)
    return _Column(index, None, np.where(bad, np.nan, values), missing, bad, stripped.to_numpy(dtype=object))


def _read_body(layout: _Layout, text_columns: Sequence[int]) -> list[_Column]:
    """Parse the lines after the first; the class candidates are read as text."""
    width = len(layout.first)
    options: dict[str, Any] = dict(header=None, names=list(range(width)), na_values=list(MISSING_MARKERS),
                                   keep_default_na=False, dtype={j: str for j in text_columns})
    if layout.delimiter is None:
        options["sep"] = r"\s+"
    else:
        options.update(sep=layout.delimiter, skipinitialspace=True)
    frame = pd.read_csv(io.StringIO("\n".join(layout.lines[1:])), **options)
    return [_analyse(frame[j], j) for j in range(width)]


def _first_row(layout: _Layout, text_columns: Sequence[int]) -> list[_Column]:
    """The first line as a row of columns; text kept for class candidates and non-numbers."""
    row = _analyse(pd.Series(layout.first, dtype=object), -1)
    return [_Column(j, None, row.values[j:j + 1], row.missing[j:j + 1], row.bad[j:j + 1],
                    row.text[j:j + 1] if j in text_columns or row.bad[j] else None)
            for j in range(len(layout.first))]


def _has_header(first: list[_Column], body: list[_Column], header: str | bool) -> bool:
    """'auto': a header when some first-row cell is text over a column of numbers."""
    if header != "auto":
        return bool(header)
    return any(f.bad[0] and b.kind == "number" for f, b in zip(first, body))


def _warn_numeric_header(first: list[_Column], line: int, path: Path) -> None:
    if not any(c.bad[0] for c in first):
        log.warning("population.path=%r with population.header=true: line %d holds only numbers and "
                    "missing markers, yet it is taken as column names and left out of the data; set "
                    "population.header=auto or false if it is a data row.", str(path), line)


# ----------------------------------------------------------------------------- the class column
def _label_candidates(label_column: str | int, width: int) -> tuple[int, ...]:
    """Columns that may hold the class (read as text); validates ``label_column``."""
    if label_column == "auto":
        return (0, width - 1)
    if label_column == "first":
        return (0,)
    if label_column == "last":
        return (width - 1,)
    if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool) \
            and -width <= label_column < width:
        return (int(label_column) % width,)
    raise ValueError(
        f"population.label_column={label_column!r} is not valid for a file of {width} columns: use "
        f"'auto', 'first', 'last' or a 0-based column index in [0, {width}) (negative counts from the end).")


def _auto_label(columns: list[_Column], origin: _Origin) -> int:
    """The class column among the first and last: refuse rather than guess."""
    first, last = columns[0], columns[-1]
    kinds = (first.kind, last.kind)
    if kinds == ("text", "number"):
        return first.index
    if kinds == ("number", "text") or (kinds == ("number", "number") and _integral(last)):
        return last.index
    if "empty" in kinds:
        empty = first if first.kind == "empty" else last
        why = f"{empty.describe()} holds only missing markers" + (
            " (a delimiter at the end of every line makes such a column: remove it)" if empty is last else "")
    elif kinds == ("text", "text"):
        i, j = first.first_bad(), last.first_bad()
        why = (f"both the first and the last column hold text ({first.describe()}: {first.shown(i)} at "
               f"{origin.at(i)}; {last.describe()}: {last.shown(j)} at {origin.at(j)})")
        if not (first.bad[1:].any() and last.bad[1:].any()):  # text only in the first row of one
            why += f"; if {origin.at(0)} holds column names, set population.header=true"
    else:
        i = int(np.argmax(~last.missing & (last.values != np.round(last.values))))
        why = (f"the first and last columns hold numbers, and the last one, {last.describe()}, holds "
               f"non-integers ({last.shown(i)} at {origin.at(i)}), which are no class labels")
    raise ValueError(
        f"population.label_column=auto cannot tell which column of {origin.where} holds the class: {why}. "
        f"Set population.label_column to 'first', 'last' or the 0-based index of the class column "
        f"(0 to {len(columns) - 1}).")


def _integral(column: _Column) -> bool:
    values = column.values[~column.missing]
    return bool(np.all(values == np.round(values)))


def _label_index(label_column: str | int, columns: list[_Column], origin: _Origin) -> int:
    if label_column == "auto":
        return _auto_label(columns, origin)
    return _label_candidates(label_column, len(columns))[0]


# ----------------------------------------------------------------------------- checks shared by all sources
def _check_numeric(features: list[_Column], origin: _Origin, label: _Labels) -> None:
    """Refuse feature columns holding cells that are not finite numbers."""
    bad = [c for c in features if c.bad.any()]
    if not bad:
        return
    column, i = bad[0], bad[0].first_bad()
    others = f"; {len(bad)} columns hold such values: {', '.join(c.describe() for c in bad[:_LISTED])}" \
        if len(bad) > 1 else ""
    raise ValueError(
        f"{origin.where}: feature {column.describe()} holds {column.shown(i)} at {origin.at(i)}, which is "
        f"not a number ({int(column.bad.sum())} such cell(s) in that column{others}); features must be "
        f"finite numbers. The class was taken from {label.description}. {origin.number_fix}")


def _check_label_missing(label: _Labels, origin: _Origin) -> None:
    if label.missing.any():
        raise ValueError(
            f"{origin.where}: the class is missing at {origin.listing(label.missing)} (class in "
            f"{label.description}; {origin.missing_note}). Every row needs a class: fill them in or remove "
            "those rows from the data (population.missing=drop_rows drops rows with missing features, never "
            "rows without a class).")


def _missing_summary(columns: list[_Column], origin: _Origin) -> str:
    parts = [f"{c.describe()}: {int(c.missing.sum())}, first at {origin.at(int(np.argmax(c.missing)))}"
             for c in columns[:_LISTED]]
    more = f"; and {len(columns) - _LISTED} more columns" if len(columns) > _LISTED else ""
    return "; ".join(parts) + more


def _rows_to_keep(features: list[_Column], origin: _Origin, missing: str) -> np.ndarray:
    """Rows without missing features; raise for ``missing="error"``, warn for ``"drop_rows"``."""
    holes = [c for c in features if c.missing.any()]
    keep = np.ones(origin.rows.size, dtype=bool)
    if not holes:
        return keep
    keep = ~np.logical_or.reduce([c.missing for c in holes])
    dropped, total = int((~keep).sum()), int(sum(c.missing.sum() for c in holes))
    summary = _missing_summary(holes, origin)
    if missing == "error":
        raise ValueError(
            f"{origin.where}: {total} missing feature value(s) in {dropped} of {keep.size} rows "
            f"({summary}; {origin.missing_note}). Set population.missing=drop_rows to leave those "
            f"{dropped} row(s) out, or fill in the values.")
    log.warning("%s with population.missing=drop_rows: %d of %d rows left out for missing features (%s).",
                origin.where, dropped, keep.size, summary)
    return keep


def _check_missing_policy(missing: str) -> None:
    if missing not in MISSING_POLICIES:
        raise ValueError(
            f"population.missing={missing!r} is not valid: use 'error' (refuse missing values) or "
            "'drop_rows' (leave out the rows with a missing feature).")


def _check_rows(n_rows: int, origin: _Origin, dropped: int) -> None:
    if n_rows < 2:
        after = f" after leaving out {dropped} row(s) with missing features" if dropped else ""
        raise ValueError(
            f"{origin.where}: {n_rows} data row(s){after}; a population needs at least 2 rows (and, for "
            "sampling without population.replace, as many as the largest study.sizes). Point it at the "
            "full data set.")


def _check_classes(labels: np.ndarray, label: _Labels, origin: _Origin) -> None:
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError(
            f"{origin.where}: the class (in {label.description}) is {str(classes[0])!r} in all "
            f"{labels.size} rows; a classification population needs at least two. {label.fix}")


def _assemble(features: list[_Column], label: _Labels, origin: _Origin, missing: str, source: str,
              names: tuple[str, ...] = (), fingerprint: str | None = None) -> TabularData:
    """The usable rows after the checks shared by all sources (fingerprint of the arrays if None)."""
    _check_label_missing(label, origin)
    keep = _rows_to_keep(features, origin, missing)
    dropped = int((~keep).sum())
    _check_rows(int(keep.sum()), origin, dropped)
    labels = np.asarray(label.text[keep]).astype(str)
    _check_classes(labels, label, origin)
    X = np.column_stack([c.values[keep] for c in features])
    return TabularData(X, labels, fingerprint or data_fingerprint((X, labels)), source, names, dropped)


# ----------------------------------------------------------------------------- files
def _check_file_options(label_column: Any, header: Any, missing: str) -> None:
    _check_missing_policy(missing)
    if header not in ("auto", True, False) or (header in (0, 1) and not isinstance(header, bool)):
        raise ValueError(
            f"population.header={header!r} is not valid: use auto (detect column names in line 1), "
            "true or false.")
    if not (label_column in ("auto", "first", "last") or isinstance(label_column, (int, np.integer))):
        raise ValueError(
            f"population.label_column={label_column!r} is not valid: use 'auto', 'first', 'last' or a "
            "0-based column index.")


def _file_origin(path: Path, rows: np.ndarray) -> _Origin:
    return _Origin(f"population.path={str(path)!r}", "line", rows,
                   "missing markers: " + ", ".join(repr(m) for m in MISSING_MARKERS),
                   "If that is wrong, set population.label_column; if the first line holds column names, set "
                   "population.header=true; encode nominal features as numbers in the file.")


def _download_origin(where: str, n_rows: int, missing_note: str) -> _Origin:
    return _Origin(where, "row", np.arange(1, n_rows + 1), missing_note,
                   "Save a cleaned copy of the data as a file and set population.path to it.")


@dataclass(frozen=True)
class _Table:
    """The data columns of a file, the header's names (empty without one) and the rows' origin."""

    columns: list[_Column]
    names: tuple[str, ...]
    origin: _Origin


def _read_table(layout: _Layout, candidates: Sequence[int], header: str | bool, path: Path) -> _Table:
    if len(layout.lines) < 2:
        _check_rows(len(layout.lines), _file_origin(path, layout.numbers), 0)
    first, body = _first_row(layout, candidates), _read_body(layout, candidates)
    if body[0].values.size != len(layout.lines) - 1:
        raise ValueError(
            f"population.path={str(path)!r}: parsed {body[0].values.size} rows from {len(layout.lines) - 1} "
            f"lines after line {layout.numbers[0]} (separator {layout.shown}); check the quoting, or set "
            "population.delimiter.")
    if not _has_header(first, body, header):
        return _Table([f.joined(b) for f, b in zip(first, body)], (), _file_origin(path, layout.numbers))
    if header is True:
        _warn_numeric_header(first, int(layout.numbers[0]), path)
    for column, name in zip(body, layout.first):
        column.name = name
    table = _Table(body, tuple(layout.first), _file_origin(path, layout.numbers[1:]))
    _check_rows(table.origin.rows.size, table.origin, 0)
    return table


def load_table_file(path: str | os.PathLike, label_column: str | int = "auto",
                    delimiter: str | None = None, header: str | bool = "auto",
                    missing: str = "error") -> TabularData:
    """Read a delimited data file into features and labels, refusing what it cannot read surely.

    Parameters
    ----------
    path : path-like
        UTF-8 text file, optionally gzip-compressed (detected from its content).
    label_column : "auto", "first", "last" or int
        Where the class is (0-based index; negative counts from the end). "auto" decides from the
        non-missing cells of the first and last columns: the first column when it holds text and
        the last numbers (UCI Letter), the last one when it holds text and the first numbers, the
        last one when both hold integers (OpenML and most CSV files); otherwise it refuses.
    delimiter : str or None
        One-character field separator; ``" "`` or ``r"\\s+"`` mean runs of blanks; None takes the
        most frequent of ``,``, tab and ``;`` in the first line, else runs of blanks.
    header : "auto", True or False
        Whether the first line holds column names. "auto": yes when a cell of it is text over a
        column of numbers.
    missing : "error" or "drop_rows"
        What to do with missing feature values (cells in :data:`MISSING_MARKERS`): refuse them,
        or leave out their rows with a warning. A missing class is always an error.

    Returns
    -------
    TabularData
        ``X`` (float64, shape (N, p)), ``labels`` (str, shape (N,)), the content's
        ``fingerprint``; unpacks as ``X, labels``.

    Raises
    ------
    DataUnavailableError
        The file is absent, a directory, empty, binary, not UTF-8 or a damaged gzip file.
    ValueError
        Ragged rows, fewer than 2 rows, no feature, text in a feature, missing values (with
        ``missing="error"``), a missing class, a single class, or an undecidable class column.
    """
    path = Path(path)
    _check_file_options(label_column, header, missing)
    content = _read_content(path)
    layout = _scan(_decode(content, path), path, delimiter)
    table = _read_table(layout, _label_candidates(label_column, len(layout.first)), header, path)
    label_index = _label_index(label_column, table.columns, table.origin)
    label = _file_labels(table.columns[label_index], label_column)
    features = [c for c in table.columns if c.index != label_index]
    _check_numeric(features, table.origin, label)
    names = tuple(table.names[c.index] for c in features) if table.names else ()
    data = _assemble(features, label, table.origin, missing, "file", names, hashlib.sha256(content).hexdigest())
    log.info("population.path=%r: separator %s, %s, class in %s; %d rows, %d features.", str(path),
             layout.shown, f"column names in line {layout.numbers[0]}" if names else "no header line",
             table.columns[label_index].describe(), *data.X.shape)
    return data


def _file_labels(column: _Column, label_column: str | int) -> _Labels:
    return _Labels(column.text, column.missing,
                   f"{column.describe()} (population.label_column={label_column!r})",
                   "Point population.label_column at the class column ('first', 'last' or a 0-based index), "
                   "or use a file with at least two classes.")


# ----------------------------------------------------------------------------- downloads
def _data_home(data_home: str | os.PathLike | None) -> str | None:
    """The download cache directory (``~`` expanded, created if missing), or None for the default."""
    if data_home is None:
        return None
    home = Path(os.path.expanduser(str(data_home)))
    shown = f"population.data_home={str(data_home)!r}"
    if home.exists() and not home.is_dir():
        raise DataUnavailableError(
            f"{shown} is a file, not a directory; point it at a directory for the download cache "
            "(created if missing), or null for scikit-learn's default ~/scikit_learn_data.")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataUnavailableError(
            f"{shown}: cannot create the download cache ({type(exc).__name__}: {exc}); point it at a "
            "writable directory, or null for scikit-learn's default ~/scikit_learn_data.") from exc
    return str(home)


def _frame_column(series: pd.Series, index: int) -> _Column:
    """One downloaded column as numbers: nominal values become ordinal codes in category order."""
    name = str(series.name)
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return _Column(index, name, values, np.isnan(values), np.isinf(values))
    missing = series.isna().to_numpy() | series.astype(object).isin(MISSING_MARKERS).to_numpy()
    present = series.astype(object).where(~missing)
    numbers = pd.to_numeric(present, errors="coerce")
    if int(numbers.notna().sum()) == int((~missing).sum()):
        values = numbers.to_numpy(dtype=np.float64)
    else:
        codes = pd.Categorical(series.where(~missing)).remove_unused_categories().codes
        values = np.where(missing, np.nan, codes.astype(np.float64))
    return _Column(index, name, values, missing, ~missing & np.isinf(values))


def _openml_target(target: Any, where: str) -> pd.Series:
    if isinstance(target, pd.DataFrame) and target.shape[1] == 1:
        target = target.iloc[:, 0]
    if target is None or isinstance(target, pd.DataFrame):
        what = "no default target column" if target is None else f"{target.shape[1]} target columns"
        raise ValueError(
            f"{where}: the data set has {what}, so the class is unknown. Save it as a CSV file and set "
            "population.path and population.label_column, or choose another population.openml_id.")
    return pd.Series(target)


def _openml_failure(data_id: Any, home: str | None, exc: Exception) -> Exception:
    """A refused request (unknown id: ValueError) or a failed download (DataUnavailableError)."""
    what = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ValueError):
        return ValueError(
            f"population.openml_id={data_id}: OpenML refused the request ({what}). Check the data id "
            "(Letter is 6), or set population.path to a local copy of the data file.")
    return DataUnavailableError(
        f"population.openml_id={data_id}: the download failed ({what}). Connect to the internet once "
        f"(the data are then cached under population.data_home={home!r}; null means "
        "~/scikit_learn_data), or set population.path to a local copy of the data file.")


def load_openml(data_id: int, data_home: str | os.PathLike | None = None,
                missing: str = "error") -> TabularData:
    """Fetch an OpenML data set (cached under ``data_home``) as numeric features and labels.

    Parameters
    ----------
    data_id : int
        OpenML data id (Letter is 6).
    data_home : path-like or None
        Download cache (``~`` expanded, created if missing); None: scikit-learn's default.
    missing : "error" or "drop_rows"
        As in :func:`load_table_file`; missing cells are those OpenML marks (and
        :data:`MISSING_MARKERS` in nominal columns).

    Returns
    -------
    TabularData
        Nominal features as ordinal codes in category order; ``fingerprint`` of the arrays.

    Raises
    ------
    DataUnavailableError
        The download failed (e.g. no internet) or ``data_home`` is unusable.
    ValueError
        OpenML refused the id, the data set has no single target, or the checks of
        :func:`load_table_file` fail (missing values, missing class, single class).
    """
    from sklearn.datasets import fetch_openml

    _check_missing_policy(missing)
    try:
        data_id = int(data_id)
    except (TypeError, ValueError):
        raise ValueError(f"population.openml_id={data_id!r} is not an integer; use the OpenML data id "
                         "(Letter is 6).") from None
    home = _data_home(data_home)
    try:
        bunch = fetch_openml(data_id=data_id, data_home=home, as_frame=True, parser="auto")
    except Exception as exc:  # network errors come in many types (URLError, OSError, ...)
        raise _openml_failure(data_id, home, exc) from exc
    where = f"population.openml_id={data_id}"
    target = _openml_target(bunch.target, where)
    frame = pd.DataFrame(bunch.data)
    features = [_frame_column(frame.iloc[:, j], j) for j in range(frame.shape[1])]
    label = _Labels(target.astype(object).where(target.notna(), "").astype(str).to_numpy(),
                    target.isna().to_numpy(), f"OpenML's target column {str(target.name)!r}",
                    "Choose another population.openml_id, or save the data as a file and set population.path.")
    origin = _download_origin(where, len(target), "cells OpenML marks as missing")
    _check_numeric(features, origin, label)
    return _assemble(features, label, origin, missing, f"openml:{data_id}", tuple(frame.columns.astype(str)))


def load_covtype(data_home: str | os.PathLike | None = None, missing: str = "error") -> TabularData:
    """CoverType (581,012 x 54, classes 1..7) through ``sklearn.datasets.fetch_covtype``.

    Parameters
    ----------
    data_home : path-like or None
        Download cache, as in :func:`load_openml`.
    missing : "error" or "drop_rows"
        As in :func:`load_table_file` (the UCI data have no missing values).

    Returns
    -------
    TabularData
        ``fingerprint`` of the arrays.
    """
    from sklearn.datasets import fetch_covtype

    _check_missing_policy(missing)
    home = _data_home(data_home)
    try:
        bunch = fetch_covtype(data_home=home, download_if_missing=True)
    except Exception as exc:
        raise DataUnavailableError(
            f"population.source=covtype: the download failed ({type(exc).__name__}: {exc}). Connect to "
            f"the internet once (scikit-learn caches it under population.data_home={home!r}; null means "
            "~/scikit_learn_data), or set population.path to the UCI file covtype.data.gz (class in the "
            "last column).") from exc
    X = np.asarray(bunch.data, dtype=np.float64)
    features = [_Column(j, None, X[:, j], np.isnan(X[:, j]), np.isinf(X[:, j])) for j in range(X.shape[1])]
    labels = np.asarray(bunch.target).astype(str)
    label = _Labels(labels, np.zeros(labels.size, dtype=bool), "the CoverType target",
                    "Delete the cache under population.data_home so that it is downloaded again.")
    origin = _download_origin("population.source=covtype", labels.size, "NaN")
    _check_numeric(features, origin, label)
    return _assemble(features, label, origin, missing, "covtype")


def load_tabular(cfg: Mapping[str, Any]) -> TabularData:
    """Load the data a ``population`` config node (kind tabular) describes.

    A non-null ``path`` means a file; else ``source`` is "openml" (with ``openml_id``) or
    "covtype". Reads ``label_column``, ``delimiter``, ``header``, ``data_home`` and ``missing``
    (default "error").
    """
    missing = cfg.get("missing", "error")
    source = cfg.get("source")
    if cfg.get("path"):
        return load_table_file(cfg["path"], label_column=cfg.get("label_column", "auto"),
                               delimiter=cfg.get("delimiter"), header=cfg.get("header", "auto"), missing=missing)
    if source == "openml" and cfg.get("openml_id") is not None:
        return load_openml(cfg["openml_id"], data_home=cfg.get("data_home"), missing=missing)
    if source == "covtype":
        return load_covtype(data_home=cfg.get("data_home"), missing=missing)
    if source == "openml":
        raise ValueError("population.openml_id=None: population.source=openml needs the OpenML data id "
                         "(Letter is 6); or set population.path to a local file.")
    raise ValueError(
        f"population.source={source!r} without population.path: set population.path to the data file, or "
        "use population.source=openml (with population.openml_id) or covtype.")


# ----------------------------------------------------------------------------- labels to classes
def _listed(values: np.ndarray, most: int = 30) -> str:
    shown = [str(v) for v in values[:most]]
    return str(shown) + (f" and {values.size - most} more" if values.size > most else "")


def binarize(labels: np.ndarray, positive: Sequence[str] | None) -> np.ndarray:
    """Map class labels to {0, 1}: 1 for the labels in ``positive``.

    Parameters
    ----------
    labels : array of str
    positive : sequence of str or None
        ``None`` keeps the original classes, encoded 0..C-1 in sorted order.

    Raises
    ------
    ValueError
        Naming ``population.positive`` when a class ends up empty or when ``positive`` lists a
        label the data do not hold (a misspelling, or '1' for '1.0').
    """
    labels = np.asarray(labels).astype(str)
    classes = np.unique(labels)
    if positive is None:
        if classes.size < 2:
            raise ValueError(
                f"population.positive=null keeps the original classes, but the data hold the single class "
                f"{_listed(classes)}; need at least two. Check population.label_column (which column holds "
                "the class) and the data.")
        return np.searchsorted(classes, labels).astype(np.int64)
    pos = {str(p) for p in positive}
    y = np.isin(labels, list(pos)).astype(np.int64)
    if y.all() or not y.any():
        which = "negative" if y.all() else "positive"
        raise ValueError(
            f"population.positive={sorted(pos)} leaves the {which} class empty; the data's "
            f"labels are {_listed(classes)}. List some (not all) of them in population.positive.")
    unknown = sorted(pos - set(classes.tolist()))
    if unknown:
        raise ValueError(
            f"population.positive={sorted(pos)} names {unknown}, not a class of the data; the classes are "
            f"{_listed(classes)}. Fix the spelling (labels compare as text: '1' is not '1.0') or remove them.")
    return y


# ----------------------------------------------------------------------------- the population
def _check_finite(X: np.ndarray, name: str) -> None:
    finite = np.isfinite(X)
    if not finite.all():
        row, col = np.argwhere(~finite)[0]
        raise ValueError(
            f"population {name!r}: the features hold {int((~finite).sum())} NaN or infinite value(s), the "
            f"first at row {row}, column {col}; learners would silently misuse them. Set "
            "population.missing=drop_rows, or clean the data.")


class TabularPopulation(Population):
    """A finite data set used as the population: training sets are drawn from its rows.

    Parameters
    ----------
    X : ndarray, shape (N, p)
        Finite numbers only.
    y : ndarray of int, shape (N,)
        Class labels 0..C-1 (classification) or real targets (regression).
    name : str
    replace : bool
        Draw rows uniformly with replacement (the protocol of Grandvalet & Bengio's Table 2:
        examples are then i.i.d. from the empirical distribution) or without.
    seed_info : dict
        Parameters that identify the data (source, binarisation) for seed derivation.
    fingerprint : str or None
        :func:`data_fingerprint` of the data as loaded (a loader's ``TabularData.fingerprint``);
        None: computed from ``X`` and ``y`` when first asked for.
    source : str or None
        Where the data come from ("file", "openml:6", "covtype"), for messages.
    task : {"classification", "regression"}
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, name: str = "tabular", replace: bool = True,
                 seed_info: dict[str, Any] | None = None, fingerprint: str | None = None,
                 source: str | None = None, task: str = "classification"):
        if task not in ("classification", "regression"):
            raise ValueError(f"population.task={task!r} is invalid: use 'classification' or 'regression'.")
        self.task = task
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.int64 if task == "classification" else np.float64)
        if task == "regression" and not np.all(np.isfinite(y)):
            raise ValueError(f"population {name!r}: the regression target holds NaN or infinite values.")
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"need X of shape (N, p) and y of shape (N,); got {X.shape} and {y.shape}.")
        _check_finite(X, name)
        self.X, self.y = X, y
        self.name = name
        self.replace = bool(replace)
        self.source = source
        self._seed_info = dict(seed_info or {})
        self._fingerprint = fingerprint
        self._cast: dict[np.dtype, np.ndarray] = {}

    @property
    def size(self) -> int:
        return self.X.shape[0]

    @property
    def fingerprint(self) -> str:
        """SHA-256 identifying the data (see :func:`data_fingerprint`); not part of the seed."""
        if self._fingerprint is None:
            self._fingerprint = data_fingerprint((self.X, self.y))
        return self._fingerprint

    def check_size(self, max_n: int, replace: bool | None = None) -> None:
        """Check that training sets of up to ``max_n`` rows can be drawn, before any work starts.

        Parameters
        ----------
        max_n : int
            The largest training size (the maximum of ``study.sizes``).
        replace : bool or None
            ``population.replace``; None: this population's own setting.

        Raises
        ------
        ValueError
            Naming ``study.sizes`` and ``population.replace`` when drawing without replacement
            needs more rows than the population has. With replacement, fewer rows than ``max_n``
            only log a warning.
        """
        replace = self.replace if replace is None else bool(replace)
        where = f"population {self.name!r}" + (f" ({self.source})" if self.source else "")
        if max_n < 1:
            raise ValueError(f"study.sizes: the largest training size is n={max_n}; use sizes of at least 1.")
        if max_n <= self.size:
            return
        if not replace:
            raise ValueError(
                f"study.sizes asks for training sets of up to n={max_n} rows drawn without replacement "
                f"(population.replace=false), but {where} has only {self.size} rows. Lower study.sizes to at "
                f"most {self.size}, or set population.replace=true (rows drawn with replacement, the Table 2 "
                "protocol).")
        log.warning("%s has %d rows, fewer than the largest training size n=%d in study.sizes: with "
                    "population.replace=true each training set of %d repeats rows (%.1f draws per row on "
                    "average), so results describe only %d distinct examples. Use a larger data set or "
                    "smaller study.sizes if that is not intended.", where, self.size, max_n, max_n,
                    max_n / self.size, self.size)

    def features(self, dtype=np.float64) -> np.ndarray:
        """The full feature matrix in ``dtype`` (cached), e.g. float32 for tree kernels."""
        dtype = np.dtype(dtype)
        if dtype == self.X.dtype:
            return self.X
        if dtype not in self._cast:
            self._cast[dtype] = np.ascontiguousarray(self.X, dtype=dtype)
        return self._cast[dtype]

    def seed_params(self) -> dict[str, Any]:
        return {"kind": "tabular", "name": self.name, "replace": self.replace, **self._seed_info}

    def describe(self) -> dict[str, Any]:
        out = {**super().describe(), "rows": self.size, "features": self.X.shape[1]}
        if self.task == "regression":
            return {**out, "task": "regression", "target_mean": float(self.y.mean()), "target_sd": float(self.y.std())}
        return {**out, "positive_rate": float(np.mean(self.y == 1))}

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        if self.replace:
            index = rng.integers(0, self.size, size=n)
        else:
            if n > self.size:
                raise ValueError(
                    f"cannot draw n={n} rows without replacement from {self.size}; "
                    "set population.replace=true or use smaller study.sizes."
                )
            index = rng.choice(self.size, size=n, replace=False)
        return Sample(X=self.X[index], y=self.y[index], index=index)

    @property
    def has_exact_error(self) -> bool:
        return True

    def exact_error(self, predict: Callable[[np.ndarray], np.ndarray], dtype=np.float64) -> float:
        """Error on the whole data set: exact, because training sets are drawn from it uniformly."""
        return float(np.mean(predict(self.features(dtype)) != self.y))

    def evaluation_set(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
        """The whole data set (features in ``dtype``, labels): the mean loss over it is a model's
        exact risk, because training sets are drawn from it uniformly."""
        return self.features(dtype), self.y


def build_tabular_population(cfg: Mapping[str, Any]) -> TabularPopulation:
    """The population a ``population`` config node of kind tabular describes, with its fingerprint.

    Seeds (:meth:`TabularPopulation.seed_params`) are those of the former builder: name, replace,
    positive labels, rows and features; the fingerprint stays out of them.
    """
    if cfg.get("task", "classification") == "regression":
        return _regression_population(cfg)
    data = load_tabular(cfg)
    positive = cfg.get("positive")
    positive = None if positive is None else [str(p) for p in positive]
    y = binarize(data.labels, positive)
    seed_info = {"positive": None if positive is None else sorted(positive),
                 "rows": int(data.X.shape[0]), "features": int(data.X.shape[1])}
    return TabularPopulation(data.X, y, name=cfg.get("name", "tabular"), replace=cfg.get("replace", True),
                             seed_info=seed_info, fingerprint=data.fingerprint, source=data.source)


def _regression_target(labels: np.ndarray, where: str) -> np.ndarray:
    """The target column's cells as floats; refuses text, naming the first offending cell."""
    try:
        return labels.astype(np.float64)
    except ValueError:
        bad = next(i for i, v in enumerate(labels) if not _is_number(v))
        raise ValueError(f"{where}: population.task=regression needs a numeric target, but the target column holds "
                         f"{str(labels[bad])!r} (row {bad + 1} of the data); point population.label_column at "
                         "the numeric target column, or use population.task=classification.") from None


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _regression_population(cfg: Mapping[str, Any]) -> TabularPopulation:
    """A file or OpenML data set with a real-valued target (``population.task=regression``).

    ``label_column=auto`` means the last column for regression (the class-detection rules of
    classification do not apply to real targets).
    """
    if cfg.get("label_column", "auto") == "auto":
        cfg = {**cfg, "label_column": "last"}
    data = load_tabular(cfg)
    where = f"population.path={cfg.get('path')!r}" if cfg.get("path") else f"population.openml_id={cfg.get('openml_id')}"
    y = _regression_target(np.asarray(data.labels), where)
    seed_info = {"task": "regression", "rows": int(data.X.shape[0]), "features": int(data.X.shape[1])}
    return TabularPopulation(data.X, y, name=cfg.get("name", "tabular"), replace=cfg.get("replace", True),
                             seed_info=seed_info, fingerprint=data.fingerprint, source=data.source, task="regression")
