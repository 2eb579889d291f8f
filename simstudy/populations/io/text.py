"""Delimited text files (UCI style with the class first, OpenML/CSV style with the class last):
:func:`load_table_file` reads one, refusing what it cannot read surely: the separator, a header
line and the class column are found or must be named, and every refusal names the
``population.*`` field to set."""
from __future__ import annotations

import csv
import io
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from simstudy.errors import DataUnavailableError
from simstudy.populations.io.files import _read_content
from simstudy.populations.io.fingerprint import data_fingerprint
from simstudy.populations.io.table import (
    MISSING_MARKERS, TabularData, _assemble, _check_missing_policy, _check_numeric, _check_rows, _Column, _Labels,
    _Origin,
)

__all__ = ["load_table_file"]

log = logging.getLogger("simstudy")

_DELIMITERS = (",", "\t", ";")  # sniffed in this order of preference; else runs of blanks


_BINARY_SIGNATURES = {
    b"PK\x03\x04": "a zip archive (an .xlsx workbook is one too)", b"BZh": "a bzip2 file",
    b"\xfd7zXZ\x00": "an xz file", b"7z\xbc\xaf": "a 7-Zip archive", b"PAR1": "a Parquet file",
    b"\x89HDF": "an HDF5 file", b"\x93NUMPY": "a NumPy .npy file",
    b"\xff\xfe": "UTF-16 text", b"\xfe\xff": "UTF-16 text",
}


_TEXT_FIX = ("population.path needs a delimited UTF-8 text file (CSV or UCI .data, optionally "
             "gzip-compressed): export, unpack or convert the data to such a file and point population.path at it.")


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
    data = _assemble(features, label, table.origin, missing, "file", names, data_fingerprint(content))
    log.info("population.path=%r: separator %s, %s, class in %s; %d rows, %d features.", str(path),
             layout.shown, f"column names in line {layout.numbers[0]}" if names else "no header line",
             table.columns[label_index].describe(), *data.X.shape)
    return data


def _file_labels(column: _Column, label_column: str | int) -> _Labels:
    return _Labels(column.text, column.missing,
                   f"{column.describe()} (population.label_column={label_column!r})",
                   "Point population.label_column at the class column ('first', 'last' or a 0-based index), "
                   "or use a file with at least two classes.")
