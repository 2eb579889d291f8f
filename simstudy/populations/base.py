"""The Population interface: a data-generating process that samples training sets.

A population whose samples hold whole-number class labels (or finite targets) by construction
declares it by deriving from :class:`simstudy.contracts.GuaranteedOutputs`; the engine then skips
the check of the labels' values (shapes, dtypes and the features are still checked).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Population", "Sample", "finite_data"]


@dataclass(frozen=True)
class Sample:
    """One training set drawn from a population.

    Attributes
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
        Integer class labels.
    index : ndarray of int or None
        Row indices into a finite population (None for an infinite one).
    """

    X: np.ndarray
    y: np.ndarray
    index: np.ndarray | None = None


class Population(ABC):
    """A distribution over labelled examples from which training sets are drawn."""

    #: Short name used in tables and run directories.
    name: str = "population"
    #: "classification" (integer labels), "regression" (real targets) or "residuals".
    task: str = "classification"

    @abstractmethod
    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        """Draw a training set of size ``n`` with the generator ``rng``."""

    @abstractmethod
    def seed_params(self) -> dict[str, Any]:
        """Parameters that define the distribution; they enter the seed of every condition.

        Paths, caches and other incidental settings must not appear here, so that moving a
        data file does not change the random streams.
        """

    def describe(self) -> dict[str, Any]:
        """A JSON-serialisable description for the run manifest."""
        return {"name": self.name, **self.seed_params()}

    def finite_data(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray] | None:
        """The whole data set ``(X, y)`` of a finite population, else None (the default).

        A population that returns its data here declares that it *is* that data set, sampled
        uniformly: learners may then index its rows (the population k-NN) and compute exact
        risks over them (the tree's row bitsets). Nothing else (an attribute named ``X``, say)
        makes a population finite.

        Parameters
        ----------
        dtype : numpy dtype
            The dtype of the features returned (float32 for the tree kernels).
        """
        return None

    @property
    def has_exact_error(self) -> bool:
        """Whether :meth:`exact_error` is available for any fitted classifier."""
        return False

    def exact_error(self, predict: Callable[[np.ndarray], np.ndarray], dtype=np.float64) -> float:
        """Exact misclassification probability of a fitted classifier on this population.

        Parameters
        ----------
        predict : callable
            Maps a feature matrix to predicted labels.
        dtype : numpy dtype
            The feature dtype ``predict`` expects (float32 for scikit-learn's tree fast path).
        """
        raise NotImplementedError(
            f"population {self.name!r} has no exact error for arbitrary classifiers; "
            "set study.truth=false or use a finite (tabular) population."
        )


class ResidualPopulation(Population):
    """A population that draws CV residuals directly (no features, no learner).

    Used to check inference procedures against a known truth: :meth:`residual_blocks` returns
    the residuals of one replicate arranged as (K, m), and :attr:`mean` is their exact
    expectation mu.
    """

    mean: float = 0.0
    task = "residuals"

    @abstractmethod
    def residual_blocks(self, K: int, m: int, rng: np.random.Generator) -> np.ndarray:
        """Residuals of one replicate, shape (K, m)."""

    def sample(self, n: int, rng: np.random.Generator) -> Sample:  # pragma: no cover - not used
        raise TypeError(f"population {self.name!r} draws residuals, not examples.")

    @property
    def has_exact_error(self) -> bool:
        return True


def finite_data(population: Any, dtype=np.float64) -> tuple[np.ndarray, np.ndarray] | None:
    """``population.finite_data(dtype)`` when the population declares that capability, else None.

    A population object need not derive from :class:`Population`; one that defines no
    ``finite_data`` method is not finite, whatever other attributes it has.
    """
    declared = getattr(type(population), "finite_data", None)
    return population.finite_data(dtype) if callable(declared) else None
