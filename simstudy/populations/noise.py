"""Label noise as a population transform: each training label flipped with probability eta.

:class:`LabelNoisePopulation` wraps a classification population. A training set is the base
population's sample with each label replaced, independently with probability ``eta``, by
another class (binary: the other class; C classes: one of the C - 1 others, uniformly).

The truth (``study.truth``) is the risk on the clean population (``noise_truth="clean"``, the
default: how well the fold models predict the true labels) or on the noisy one
(``noise_truth="noisy"``: the quantity the CV estimate on noisy labels estimates). For a
model with clean risk R(y, f) under any loss, the noisy risk is exactly

    (1 - eta) E L(y, f(x)) + eta / (C - 1) sum_{c != y} E L(c, f(x)),

computed on the base population's evaluation set with those weights; for the 0-1 loss with two
classes this is eta + (1 - 2 eta) R.

Random numbers: the flips are drawn after the base sample, one uniform per point, and a point is
flipped when its uniform is below eta. The noise level is not part of the seed
(:meth:`LabelNoisePopulation.seed_params` adds it, but the condition seeds come from
:meth:`LabelNoisePopulation.stream_params`), so runs at different eta see the same base
samples, the same uniforms and the same folds: the flipped points at a smaller eta are a
subset of those at a larger one (a coupling that makes noise curves smooth).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simstudy.populations.base import Population, Sample
from simstudy.populations.io.fingerprint import population_fingerprint
from simstudy.populations.truth import RiskValues, true_risks

__all__ = ["LabelNoisePopulation", "NOISE_TRUTHS"]

#: Which population the truth refers to.
NOISE_TRUTHS = ("clean", "noisy")


class LabelNoisePopulation(Population):
    """A classification population whose training labels are flipped with probability ``eta``.

    Parameters
    ----------
    base : Population
        A classification population (integer labels 0..C-1).
    eta : float in [0, 1)
        Flip probability.
    truth : {"clean", "noisy"}
        The population the true risk refers to (see the module docstring).
    classes : int, optional
        Number of classes C (default: from the base population's labels, at least 2).
    """

    task = "classification"

    def __init__(self, base: Any, eta: float, truth: str = "clean", classes: int | None = None):
        if getattr(base, "task", "classification") != "classification":
            raise ValueError(f"population.label_noise={eta!r} is invalid for population {base.name!r}: label noise "
                             f"flips class labels, but this is a {base.task} population; set population.label_noise=0.")
        if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 <= eta < 1:
            raise ValueError(f"population.label_noise={eta!r} is invalid: the flip probability must lie in [0, 1).")
        if truth not in NOISE_TRUTHS:
            raise ValueError(f"population.noise_truth={truth!r} is invalid: use 'clean' (risk on the true labels) "
                             "or 'noisy' (risk on labels flipped like the training labels).")
        self.base, self.eta, self.truth = base, float(eta), truth
        self.name = getattr(base, "name", "population")
        if classes is None:
            labels = getattr(base, "y", None)
            if labels is None:
                labels = base.sample(256, np.random.default_rng(0)).y
            classes = int(np.max(labels)) + 1
        self.classes = max(int(classes), 2)
        for part in ("evaluation_set", "exact_risks"):    # a truth only where the base population has one
            if not (callable(getattr(base, "evaluation_set", None)) or callable(getattr(base, "exact_risks", None))):
                setattr(self, part, None)

    @property
    def fingerprint(self) -> str | None:
        """The base population's data fingerprint (part of a run's identity, as without noise)."""
        return population_fingerprint(self.base)

    # -- sampling
    def stream_params(self) -> dict[str, Any]:
        """What seeds the random streams: the base population's parameters (not eta, see above)."""
        return self.base.seed_params()

    def seed_params(self) -> dict[str, Any]:
        return {**self.base.seed_params(), "label_noise": self.eta, "noise_truth": self.truth}

    def describe(self) -> dict[str, Any]:
        return {**self.base.describe(), "label_noise": self.eta, "noise_truth": self.truth, "classes": self.classes}

    def flip(self, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Labels with each flipped with probability eta (two draws per point, whatever eta)."""
        u = rng.random(y.shape[0])
        shift = 1 + rng.integers(0, self.classes - 1, size=y.shape[0])   # 1..C-1
        return np.where(u < self.eta, (y + shift) % self.classes, y).astype(y.dtype)

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        """The base sample with flipped labels; no row indices (a learner built on the base
        population's labels, such as the population k-NN, would otherwise see clean labels)."""
        s = self.base.sample(n, rng)
        return Sample(X=s.X, y=self.flip(np.asarray(s.y), rng), index=None)

    # -- the truth
    def evaluation_set(self, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
        """The base evaluation set; for the noisy truth stacked C times with the labels shifted
        by 0..C-1 (weights :attr:`evaluation_weights`)."""
        X, y = self.base.evaluation_set(dtype)
        if self.truth == "clean":
            return X, y
        y = np.asarray(y)
        return (np.concatenate([X] * self.classes),
                np.concatenate([(y + c) % self.classes for c in range(self.classes)]).astype(y.dtype))

    @property
    def evaluation_weights(self) -> np.ndarray | None:
        """None (clean truth), else weight 1 - eta on the true labels and eta / (C - 1) on each other class."""
        if self.truth == "clean":
            return None
        N = self.base.evaluation_set()[1].shape[0]
        per_class = np.r_[1 - self.eta, np.full(self.classes - 1, self.eta / (self.classes - 1))]
        return np.repeat(per_class, N)

    @property
    def evaluation_is_sample(self) -> bool:
        return bool(getattr(self.base, "evaluation_is_sample", False))

    def exact_risks(self, learner: Any, models: Sequence[Any], loss: Any):
        """Clean truth: the base population's truth (its fast paths included); noisy truth with
        the 0-1 loss and two classes: eta + (1 - 2 eta) x clean risk; otherwise None (the weighted
        evaluation set)."""
        if self.truth == "clean":
            return true_risks(learner, models, self.base, loss)
        if loss.name == "zero_one" and self.classes == 2:
            clean = true_risks(learner, models, self.base, loss)
            return RiskValues(self.eta + (1 - 2 * self.eta) * clean.values, (1 - 2 * self.eta) * clean.mc_se)
        return None
