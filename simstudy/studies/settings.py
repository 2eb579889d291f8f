"""A study's settings: the config dataclass base, field roles and the shared field checks.

Separate from :mod:`simstudy.studies.base` (the engine's side of a study: phases, conditions,
records, which needs pandas) so that the ``simstudy`` command can register every study's config
with Hydra without importing pandas: the command starts its workers only after the config is
checked, so whatever the config modules import is on every run's critical path.
:mod:`simstudy.studies.base` re-exports all of it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from simstudy.errors import ConfigError

__all__ = ["StudyConfig", "targets_of", "extent", "prefix", "report", "location", "fail", "as_list", "validate_sizes",
           "validate_level", "ROLE", "RECORD", "EXTENT", "REPORT", "PREFIX", "LOCATION"]

ROLE = "role"
RECORD, EXTENT, REPORT, PREFIX, LOCATION = "record", "extent", "report", "prefix", "location"


def _field(role: str, default: Any, default_factory: Any) -> Any:
    if default_factory is not dataclasses.MISSING:
        return field(default_factory=default_factory, metadata={ROLE: role})
    return field(default=default, metadata={ROLE: role})


def extent(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING) -> Any:
    """A config field that only sets how much is computed (a larger value extends a run)."""
    return _field(EXTENT, default, default_factory)


def prefix(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING) -> Any:
    """A count k of leading replicates that get extra work (nested CV on replicates r < k).

    Lowering k to a number of replicates already run changes no record: the replicates below k keep
    their extra work and none after them get it, so the records equal those of a run with the lower
    k from the start. Such a field is therefore not part of a run's identity; the one caller that
    lowers it (the sequential audit's rounds, :mod:`simstudy.audit.rounds`) keeps to that rule.
    """
    return _field(PREFIX, default, default_factory)


def report(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING) -> Any:
    """A config field that only changes the aggregation and the reports, not the records."""
    return _field(REPORT, default, default_factory)


def location(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING) -> Any:
    """A config field that says where data is read from (a file path), not what it holds.

    Not part of a run's identity: the study names the data's contents instead
    (:meth:`simstudy.Study.data_fingerprints`), which the run directory checks. The same data at
    another path (a clone of a repository, another machine) extends the same run; other contents
    at the same path are refused.
    """
    return _field(LOCATION, default, default_factory)


def fail(field_name: str, value: Any, fix: str) -> None:
    """Raise :class:`ConfigError` naming the field, the value and the fix."""
    raise ConfigError(f"{field_name}={value!r} is invalid: {fix}")


def as_list(value: Any) -> list:
    """A scalar or a sequence from a config, as a list."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "__len__") and not isinstance(value, (str, dict))):
        return list(value)
    return [value]


@dataclass
class StudyConfig:
    """Base of every study's config dataclass (Hydra schema and Python API alike)."""

    name: str = ""

    def validate(self) -> None:
        """Check the fields (and relations between them); raise :class:`ConfigError`."""

    @classmethod
    def field_names(cls, role: str | None = None) -> list[str]:
        """Names of the fields, or of the fields with ``role`` (record / extent / report)."""
        return [f.name for f in dataclasses.fields(cls)
                if role is None or f.metadata.get(ROLE, RECORD) == role]

    def as_dict(self) -> dict[str, Any]:
        """The fields as plain Python values (lists, dicts, numbers, strings)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value: Any) -> Any:
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - omegaconf is a dependency
        pass
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def targets_of(config: Any) -> dict[str, Any]:
    """A config's Monte Carlo error targets as ``{measure: half-width}``, the unset ones left out.

    ``config.targets`` is the study's targets dataclass (one optional field per measure: the
    command line's ``study.targets.rho=0.01``) or a mapping (the Python API's
    ``targets={"rho": 0.01}``); a config without the field has no targets.
    """
    value = _plain(getattr(config, "targets", None))
    if value is None:
        return {}
    if not isinstance(value, dict):
        return {"": value}  # not a mapping: validate_targets names the field and the fix
    return {k: v for k, v in value.items() if v is not None}


def validate_sizes(sizes: Sequence[int], K: int, min_per_fold: int = 2, reason: str = "",
                   equal_folds: str = "", field_name: str = "study.sizes") -> None:
    """Training-set sizes: non-empty, distinct integers, each with at least ``min_per_fold``
    examples in the smallest of K folds (folds of floor(n/K) or ceil(n/K) examples); with
    ``equal_folds`` (the reason) each size must be a multiple of K."""
    sizes = list(sizes)
    if not sizes:
        fail(field_name, sizes, "give at least one training-set size, e.g. study.sizes=[20,400].")
    for n in sizes:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            fail(field_name, sizes, f"sizes are whole numbers; got {n!r}.")
        if n < K:
            fail(field_name, sizes, f"every size must be >= K={K} (got n={n}); raise the sizes or lower study.K.")
        if equal_folds and n % K:
            fail(field_name, sizes, f"n={n} is not a multiple of K={K}; {equal_folds}: use n={n - n % K} "
                                    f"or n={n + K - n % K}.")
        if n // K < min_per_fold:
            fail(field_name, sizes, f"n={n} with K={K} gives folds of {n // K} example(s); {reason} "
                                    f"(use n >= {min_per_fold * K} or a smaller K).")
    if len(set(sizes)) != len(sizes):
        fail(field_name, sizes, "remove the repeated sizes.")


def validate_level(value: float, field_name: str = "study.alpha") -> None:
    """A test level / miscoverage in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        fail(field_name, value, "the level must lie in (0, 1), e.g. 0.05.")
