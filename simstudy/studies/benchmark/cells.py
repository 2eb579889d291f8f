"""Data cells: the (mechanism, learner, loss, n) combinations a benchmark runs, and their seeds.

A data cell is one condition of the engine: every procedure of the run is a subject of it. Its
key hashes its names and its size (:func:`cell_key`), never its position in the grid, so a run
extended by a mechanism, a learner, a loss, a size or a procedure computes only the new
cells and leaves the records of the others byte-identical. Its integer ``cell_seed`` is derived
from the key and the run's base seed.

A learner "A-vs-B" makes a comparison cell (the tests): both learners are fitted on the same
splits and the procedures read the loss differences A - B.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from simstudy.errors import ConfigError
from simstudy.rng import condition_key

__all__ = ["DataCell", "cell_key", "cell_seed", "nearest", "split_pair", "PAIR_SEPARATOR"]

PAIR_SEPARATOR = "-vs-"


def nearest(field_name: str, value: str, valid) -> ConfigError:
    """A ConfigError for an unknown name, naming the nearest valid one."""
    valid = sorted(valid)
    close = difflib.get_close_matches(str(value), valid, n=1, cutoff=0.0)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ConfigError(f"{field_name}={value!r} is invalid: it is not one of {', '.join(valid)}.{hint}")


def split_pair(learner: str) -> tuple[str, str] | None:
    """("A", "B") for a comparison "A-vs-B", None for one learner."""
    if PAIR_SEPARATOR not in learner:
        return None
    a, _, b = learner.partition(PAIR_SEPARATOR)
    return a, b


def cell_key(mechanism: str, learner: str, loss: str, n: int) -> str:
    """The hash of a data cell's identity (its names and size)."""
    return condition_key({"study": "benchmark", "mechanism": mechanism, "learner": learner, "loss": loss, "n": int(n)})


def cell_seed(key: str, seed: int) -> int:
    """A 63-bit integer seed of a data cell: its key hashed with the run's base seed."""
    return int(condition_key({"cell": key, "seed": int(seed)})[:15], 16)


@dataclass(frozen=True)
class DataCell:
    """One data cell (an engine condition).

    Attributes
    ----------
    mechanism, learner, loss : str
    n : int
    task : {"classification", "regression"}
    key : str
        :func:`cell_key` of the names.
    procedures : tuple of str
        The procedures the cell runs when its scale's blocks restrict them (empty: every procedure
        of the run); not part of the key, so a cell's records do not depend on it.
    """

    mechanism: str
    learner: str
    loss: str
    n: int
    task: str
    key: str
    procedures: tuple = field(default=(), compare=False)

    @classmethod
    def make(cls, mechanism: str, learner: str, loss: str, n: int, task: str,
             procedures: tuple = ()) -> "DataCell":
        return cls(mechanism, learner, loss, int(n), task, cell_key(mechanism, learner, loss, n), tuple(procedures))

    @property
    def mechanism_is_residual(self) -> bool:
        """The losses are drawn directly (learner "none" or "none-vs-none"): no model is fitted."""
        return self.loss == "residual"

    @property
    def pair(self) -> tuple[str, str] | None:
        return split_pair(self.learner)

    def label(self) -> str:
        return f"{self.mechanism}, {self.learner}, {self.loss}, n={self.n}"

    def selection(self) -> str:
        return (f"--mechanisms {self.mechanism} --learners {self.learner} --losses {self.loss} "
                f"--sizes {self.n}")

    def columns(self) -> dict:
        return {"mechanism": self.mechanism, "learner": self.learner, "loss": self.loss, "n": self.n}
