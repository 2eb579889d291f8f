"""Parts that misbehave on purpose, and the assertions of the hostile-input suite (issue 32).

Populations, learners, losses and studies a user could write by mistake; each is importable by
path (``hostile_parts.ShortX``) so that the command line and subprocesses can use them. Only public
names of simstudy are used (``simstudy.Population``, ``simstudy.Sample``, ``simstudy.Study``,
``simstudy.StudyConfig``, ``simstudy.Phase``, ``simstudy.STUDIES``, ``simstudy.errors``), so the
suite does not depend on the package's internal layout.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.neighbors import KNeighborsRegressor as _SklearnKNNRegressor
from sklearn.tree import DecisionTreeClassifier

import simstudy
from simstudy.errors import UserError

# ----------------------------------------------------------------------------- assertions
#: Words by which a message proposes a fix.
_FIX_WORDS = ("use ", "choose", "give ", "set ", "remove", "add ", "pass ", "e.g.", "for example", "write ",
              "rename", "did you mean", "instead", "run ", "re-run", "rebuild", "fix ", "return", "delete",
              "settings are", "one of", "nearest", "valid ", "known", "must ", "need", "check ", "at least",
              "lie in", "whole numbers", "indices")


def _shown(value: Any) -> list[str]:
    """Ways a message may show ``value``: repr, str, quoted, and numpy scalars as plain numbers."""
    forms = {repr(value), str(value)}
    if isinstance(value, np.generic):
        forms |= {repr(value.item()), str(value.item())}
    if isinstance(value, str):
        forms |= {f"'{value}'", f'"{value}"', f"={value}"}
    return sorted(forms)


def clear_message(exc: BaseException, field: str | None = None, value: Any = dataclasses.MISSING,
                  words: tuple[str, ...] = ()) -> str:
    """Check that ``exc`` is a clear error and return its message (one paragraph).

    A clear error is a :class:`simstudy.errors.UserError` whose message names ``field`` (its last
    dotted part at least: ``study.sizes`` may be shown as ``sizes``), shows ``value`` (repr or
    str) and proposes a fix; ``words`` must all appear too (case-insensitive).
    """
    assert isinstance(exc, UserError), f"not a UserError: {type(exc).__module__}.{type(exc).__name__}: {exc}"
    message = " ".join(str(exc).split())
    low = message.lower()
    if field is not None:
        short = field.rsplit(".", 1)[-1]
        assert field in message or re.search(rf"\b{re.escape(short)}\b", message), \
            f"the message does not name {field!r}: {message}"
    if value is not dataclasses.MISSING:
        assert any(form in message for form in _shown(value)), f"the message does not show {value!r}: {message}"
    assert any(w in low for w in _FIX_WORDS), f"the message proposes no fix: {message}"
    for word in words:
        assert word.lower() in low, f"the message does not say {word!r}: {message}"
    return message


def assert_clear_error(excinfo, field: str | None = None, value: Any = dataclasses.MISSING,
                       words: tuple[str, ...] = ()) -> str:
    """:func:`clear_message` of a ``pytest.raises`` excinfo."""
    return clear_message(excinfo.value, field, value, words)


def part_failure(call, part: str, returned: tuple[str, ...] = ()) -> str:
    """Run ``call()`` (a run with a misbehaving part) and check the issue's two acceptable outcomes:

    - the run stops with a clear error (a UserError naming ``part``), or
    - it returns a result in which the replicates the part broke are recorded as failed
      (``failed`` > 0 in the summary and the manifest) with an ``error`` naming ``part``, and no
      replicate counted as successful holds a non-finite ``mu_hat``.

    ``returned``: words of which at least one must describe what the part returned (e.g.
    ``("nan",)`` or ``("shape", "length", "rows")``). Returns the message seen.
    """
    try:
        result = call()
    except UserError as exc:
        message = " ".join(str(exc).split())
    else:
        records = result.records
        errors = records["error"].fillna("")
        assert (errors != "").any(), "no replicate failed: the part's output was scored"
        assert int(result.summary["failed"].sum()) > 0 and result.manifest["replicates_failed"] > 0
        good = records[errors == ""]
        if "mu_hat" in good:
            assert np.isfinite(good["mu_hat"].astype(float)).all(), "a non-finite mu_hat counted as a success"
        message = errors[errors != ""].iloc[0]
        assert (errors[errors != ""].str.contains(part, regex=False)).all(), f"an error does not name {part}: {message}"
    assert part in message, f"the message does not name {part!r}: {message}"
    if returned:
        assert any(w.lower() in message.lower() for w in returned), f"the message does not say {returned}: {message}"
    return message


def records_without_arrays(frame: pd.DataFrame) -> pd.DataFrame:
    """The records' scalar columns (array cells such as fold_means compared elsewhere)."""
    return frame.drop(columns=[c for c in frame.columns
                               if frame[c].map(lambda v: hasattr(v, "__len__") and not isinstance(v, str)).any()])


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ----------------------------------------------------------------------------- populations
class TwoBlobs(simstudy.Population):
    """A well-behaved population: two Gaussian classes in 2-D, labels 0/1, and a fixed evaluation
    set (so ``truth=True`` works). Subclasses break one thing each."""

    task = "classification"
    name = "two_blobs"

    def __init__(self, shift: float = 1.0, evaluation_size: int = 2000):
        self.shift, self.evaluation_size = float(shift), int(evaluation_size)

    def seed_params(self) -> dict:
        return {"kind": "two_blobs", "shift": self.shift}

    def draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 2, n)
        X = rng.standard_normal((n, 2)) + self.shift * y[:, None]
        return X, y

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X, y=y)

    def evaluation_set(self, dtype=np.float64):
        X, y = self.draw(self.evaluation_size, np.random.default_rng(12345))
        return X.astype(dtype), y


class ShortX(TwoBlobs):
    """X one row short of y (the issue's example: heap corruption in the compiled tree)."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X[:-1], y=y)


class ShortY(TwoBlobs):
    """y one label short of X."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X, y=y[:-1])


class ExtraRows(TwoBlobs):
    """n + 1 rows instead of n."""

    def sample(self, n, rng):
        X, y = self.draw(n + 1, rng)
        return simstudy.Sample(X=X, y=y)


class NaNFeatures(TwoBlobs):
    """A NaN in the first row's features."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        X[0, 0] = np.nan
        return simstudy.Sample(X=X, y=y)


class InfFeatures(TwoBlobs):
    """+inf in one feature of every fifth row."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        X[::5, 1] = np.inf
        return simstudy.Sample(X=X, y=y)


class FlatX(TwoBlobs):
    """X as a 1-D array (one feature, but not a column)."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X[:, 0].copy(), y=y)


class FractionalLabels(TwoBlobs):
    """Classification labels 0.25 / 0.75: not class labels."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X, y=0.25 + 0.5 * y)


class NaNLabels(TwoBlobs):
    """A NaN among the class labels."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        y = y.astype(float)
        y[1] = np.nan
        return simstudy.Sample(X=X, y=y)


class SignedLabels(TwoBlobs):
    """Labels -1 / +1 (a common convention; the kernels index classes from 0)."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X, y=2 * y - 1)

    def evaluation_set(self, dtype=np.float64):
        X, y = super().evaluation_set(dtype)
        return X, 2 * y - 1


class HugeLabels(TwoBlobs):
    """Labels 0 / 10**9 (a class id used as an array index would allocate or read far away)."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X, y=y * 10**9)


class TupleSample(TwoBlobs):
    """``sample`` returns a plain tuple (X, y) instead of a Sample."""

    def sample(self, n, rng):
        return self.draw(n, rng)


class NoneSample(TwoBlobs):
    """``sample`` returns None (a forgotten return)."""

    def sample(self, n, rng):
        self.draw(n, rng)


class NoneSeedParams(TwoBlobs):
    """``seed_params`` returns None (a forgotten return)."""

    def seed_params(self):
        return None


class XAttribute(TwoBlobs):
    """A well-behaved population that happens to have attributes named ``X`` and ``y`` (its
    feature and label names): it is no finite population, so nothing may treat it as one."""

    X = ("x1", "x2")
    y = "label"


class ListSample(TwoBlobs):
    """X and y as nested Python lists: acceptable input if converted exactly."""

    def sample(self, n, rng):
        X, y = self.draw(n, rng)
        return simstudy.Sample(X=X.tolist(), y=y.tolist())


class ShortEvaluation(TwoBlobs):
    """An evaluation set whose y is one label short of X (the truth would be computed on garbage)."""

    def evaluation_set(self, dtype=np.float64):
        X, y = super().evaluation_set(dtype)
        return X, y[:-1]


class NaNEvaluation(TwoBlobs):
    """An evaluation set with NaN features."""

    def evaluation_set(self, dtype=np.float64):
        X, y = super().evaluation_set(dtype)
        X = X.copy()
        X[::7, 0] = np.nan
        return X, y


class Line(simstudy.Population):
    """Regression: y = x1 + noise, 3 features."""

    task = "regression"
    name = "line"

    def seed_params(self) -> dict:
        return {"kind": "line"}

    def sample(self, n, rng):
        X = rng.standard_normal((n, 3))
        return simstudy.Sample(X=X, y=X[:, 0] + 0.5 * rng.standard_normal(n))


class NaNTargets(Line):
    """Regression targets with a NaN."""

    def sample(self, n, rng):
        s = super().sample(n, rng)
        y = s.y.copy()
        y[2] = np.nan
        return simstudy.Sample(X=s.X, y=y)


# ----------------------------------------------------------------------------- learners (scikit-learn)
class ProbaTree(DecisionTreeClassifier):
    """``predict`` returns the probability of class 1 instead of a label (use with max_depth=2, so
    that leaves are impure and the probabilities fractional)."""

    def predict(self, X, check_input=True):
        return self.predict_proba(X)[:, -1]


class StringTree(DecisionTreeClassifier):
    """``predict`` returns the labels as strings."""

    def predict(self, X, check_input=True):
        return super().predict(X).astype(str)


class ScalarTree(DecisionTreeClassifier):
    """``predict`` returns one scalar for all rows."""

    def predict(self, X, check_input=True):
        return 0


class ShortTree(DecisionTreeClassifier):
    """``predict`` returns one value too few."""

    def predict(self, X, check_input=True):
        return super().predict(X)[:-1]


class ColumnTree(DecisionTreeClassifier):
    """``predict`` returns a column (rows, 1) instead of a vector."""

    def predict(self, X, check_input=True):
        return super().predict(X)[:, None]


class AlienLabelTree(DecisionTreeClassifier):
    """``predict`` returns a label (7) that is not a class of the population."""

    def predict(self, X, check_input=True):
        return np.full(len(X), 7)


class NaNRegressor(LinearRegression):
    """A regressor whose predictions are NaN for every third row."""

    def predict(self, X):
        out = np.asarray(super().predict(X), dtype=float).copy()
        out[::3] = np.nan
        return out


class KNeighborsRegressor(_SklearnKNNRegressor):
    """A user's k-NN regressor that shifts every prediction by 100: same class name as
    scikit-learn's, so a fast path chosen by the name would ignore the user's ``predict``."""

    def predict(self, X):
        return super().predict(X) + 100.0


def _unlucky(X) -> bool:
    """True for about 2% of training sets (about 18% of 10-fold replicates), the same ones every time."""
    return int(abs(float(np.sum(X[:, 0]))) * 1000) % 50 == 0


class FlakyOnFlag(DecisionTreeClassifier):
    """Raises in ``fit`` on some training sets while the file named by HOSTILE_FAIL_FLAG exists (a
    transient failure: a resume after it is gone should compute those replicates)."""

    def fit(self, X, y, **kwargs):
        flag = os.environ.get("HOSTILE_FAIL_FLAG")
        if flag and os.path.exists(flag) and _unlucky(X):
            raise RuntimeError("transient failure (flag file present)")
        return super().fit(X, y, **kwargs)


class MemoryHungry(DecisionTreeClassifier):
    """Raises MemoryError in ``fit`` on some training sets while the file named by HOSTILE_FAIL_FLAG
    exists."""

    def fit(self, X, y, **kwargs):
        flag = os.environ.get("HOSTILE_FAIL_FLAG")
        if flag and os.path.exists(flag) and _unlucky(X):
            raise MemoryError("cannot allocate 64 GiB")
        return super().fit(X, y, **kwargs)


class AlwaysFails(DecisionTreeClassifier):
    """Raises in every ``fit``."""

    def fit(self, X, y, **kwargs):
        raise RuntimeError("this learner always fails")


def _gate(variable: str) -> None:
    """Sleep the seconds written in the file named by ``variable`` while it exists; first touch
    ``<file>.entered`` so that a test knows the gate was reached."""
    gate = os.environ.get(variable)
    if not gate:
        return
    try:
        Path(gate + ".entered").touch()
    except OSError:
        pass
    while True:
        try:
            seconds = float(Path(gate).read_text() or 0)
        except (FileNotFoundError, ValueError):
            return
        time.sleep(seconds)
        if variable == "HOSTILE_GATE":  # a fit sleeps once; report gates hold until the file is removed
            return


class GatedTree(DecisionTreeClassifier):
    """Every fit first sleeps the seconds written in the file named by HOSTILE_GATE, while that
    file exists: a run slow enough to be caught in the act, and fast (same records) once the file
    is gone."""

    def fit(self, X, y, **kwargs):
        _gate("HOSTILE_GATE")
        return super().fit(X, y, **kwargs)


# ----------------------------------------------------------------------------- learners (the protocol)
class ProtocolLearner:
    """A minimal learner object: ``name``, ``start``, ``fit``, ``predict`` and nothing optional;
    predicts the majority class of the training rows. Subclasses break ``predict``."""

    name = "majority"
    task = "classification"

    def start(self, sample):
        return np.asarray(sample.y)

    def fit(self, state, rows, rng):
        return int(np.bincount(state[rows].astype(int)).argmax())

    def predict(self, state, model, rows):
        return np.full(len(rows), model)


class ProtocolShortPredict(ProtocolLearner):
    name = "majority_short"

    def predict(self, state, model, rows):
        return np.full(len(rows) - 1, model)


class ProtocolNoName(ProtocolLearner):
    name = None


# ----------------------------------------------------------------------------- losses
def nan_on_full(y, y_hat):
    """A 0-1 loss that passes an 8-point probe but returns NaN on longer vectors."""
    out = (np.asarray(y) != np.asarray(y_hat)).astype(float)
    if out.size > 8:
        out[-1] = np.nan
    return out


def neg_inf_on_full(y, y_hat):
    """A 0-1 loss that passes an 8-point probe but returns -inf on longer vectors."""
    out = (np.asarray(y) != np.asarray(y_hat)).astype(float)
    if out.size > 8:
        out[0] = -np.inf
    return out


def short_on_full(y, y_hat):
    """A 0-1 loss that returns one value too few on vectors longer than the probe."""
    out = (np.asarray(y) != np.asarray(y_hat)).astype(float)
    return out[:-1] if out.size > 8 else out


def mean_on_full(y, y_hat):
    """A loss that returns the mean (a scalar) instead of per-point losses beyond the probe."""
    out = (np.asarray(y) != np.asarray(y_hat)).astype(float)
    return out.mean() if out.size > 8 else out


#: Read by :func:`cost_from_global` at call time; a script changes it between two runs.
COST = 1.0


def cost_from_global(y, y_hat):
    """0-1 loss scaled by the module global COST (read when called)."""
    return COST * (np.asarray(y) != np.asarray(y_hat)).astype(float)


# ----------------------------------------------------------------------------- studies
CVVariance = simstudy.STUDIES["cv_variance"].load()


def _slow_figure(maker):
    _gate("HOSTILE_FIGURE_GATE")
    from matplotlib.figure import Figure

    return maker if isinstance(maker, Figure) else maker()


class SlowReportStudy(CVVariance):
    """cv_variance (same name, same records) whose report can be held at two moments: its tables
    (HOSTILE_REPORT_GATE, in the main process) and its figures (HOSTILE_FIGURE_GATE, in the
    processes that draw them)."""

    def write_tables(self, tables, directory):
        _gate("HOSTILE_REPORT_GATE")
        return super().write_tables(tables, directory)

    def figures(self, tables):
        return {name: functools.partial(_slow_figure, maker) for name, maker in super().figures(tables).items()}


@dataclasses.dataclass(frozen=True)
class Cell:
    """The one condition of :class:`ToyStudy`."""

    key: str = "toy-cell"

    def label(self) -> str:
        return "toy"

    def selection(self) -> str:
        return ""


@dataclasses.dataclass
class ToyConfig(simstudy.StudyConfig):
    name: str = "toy"
    replicates: int = 20
    seed: int = 1


def _toy_rows(chunk) -> pd.DataFrame:
    replicates = np.arange(chunk.start, chunk.stop)
    return pd.DataFrame({"condition_key": "toy-cell", "replicate": replicates, "value": replicates * 0.5,
                         "error": ""})


class ToyStudy(simstudy.Study):
    """A user's study: one condition, one value per replicate, summary = mean of the values.
    Subclasses' workers misbehave."""

    name = "toy"
    Config = ToyConfig
    uses = ()

    def worker(self, chunk) -> Any:
        return _toy_rows(chunk)

    def phases(self, on_error: str = "record"):
        return [simstudy.Phase("replicates", [Cell()], [int(self.config.replicates)], self.worker)]

    def aggregate(self, records):
        rec = records["replicates"]
        ok = rec[rec["error"].fillna("") == ""] if "error" in rec else rec
        return simstudy.StudyTables(pd.DataFrame({"replicates": [len(rec)], "mean": [ok["value"].mean()]}))


class ShortChunkStudy(ToyStudy):
    """The worker returns one row too few for every chunk."""

    name = "toy_short"

    def worker(self, chunk):
        return _toy_rows(chunk).iloc[:-1]


class NoneChunkStudy(ToyStudy):
    """The worker returns None (a forgotten return)."""

    name = "toy_none"

    def worker(self, chunk):
        _toy_rows(chunk)


class DuplicateRowsStudy(ToyStudy):
    """The worker returns every replicate twice."""

    name = "toy_duplicate"

    def worker(self, chunk):
        rows = _toy_rows(chunk)
        return pd.concat([rows, rows], ignore_index=True)


class DictChunkStudy(ToyStudy):
    """The worker returns a dict of columns instead of a DataFrame."""

    name = "toy_dict"

    def worker(self, chunk):
        return _toy_rows(chunk).to_dict("list")


class NoPhasesStudy(ToyStudy):
    """``phases`` returns an empty list."""

    name = "toy_no_phases"

    def phases(self, on_error: str = "record"):
        return []


class FlippedTree(DecisionTreeClassifier):
    """A user's tree subclass whose ``predict`` flips the binary labels: valid labels, so only a
    learner that calls it sees the difference (its error is about 1 - the tree's)."""

    def predict(self, X, check_input=True):
        return 1 - super().predict(X, check_input=check_input)
