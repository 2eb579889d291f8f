"""What every data source gives (:class:`TabularData`), how its rows and columns are spoken of in
messages, and the checks all sources share: numeric features, a class in every row, at least two
classes and rows, missing values refused or their rows dropped (:func:`_assemble`); and labels
turned into classes (:func:`binarize`)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from simstudy.populations.configs import MISSING_POLICIES
from simstudy.populations.io.files import _LISTED
from simstudy.populations.io.fingerprint import data_fingerprint

__all__ = ["MISSING_MARKERS", "TabularData", "binarize"]

log = logging.getLogger("simstudy")

#: Cell contents (after stripping blanks) that mean "no value".
MISSING_MARKERS = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")


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
