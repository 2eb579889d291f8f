"""Typed settings on the Python road: values given to :func:`simstudy.run_study` (study fields,
runner settings, population and learner mappings) are checked against the same config dataclass
the command line composes with Hydra (:func:`typed_settings`).

The command line parses text with its own grammar; in Python a value must already have its type:
``True``/``False`` (or a numpy bool) for a boolean, an integer (numpy integers included) for an
integer, a number for a float, a list, tuple or 1-D array for a list. A text where a boolean,
number or list is meant is refused rather than guessed (``"false"`` is a true value in Python,
``"20,40"`` is five characters), as is a key that is not a field (the message names the nearest).
"""
from __future__ import annotations

import collections.abc
import dataclasses
import difflib
import os
import typing
from typing import Any, Iterable, Mapping

import numpy as np

from simstudy.errors import ConfigError

__all__ = ["coerce", "nearest", "typed_settings", "unknown_key"]


def nearest(name: str, valid: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest valid name, or an empty string."""
    close = difflib.get_close_matches(str(name), sorted(valid), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key(prefix: str, key: str, valid: Iterable[str], what: str) -> ConfigError:
    """The error for a key that is not a setting of ``what``, naming the nearest and all valid ones."""
    valid = sorted(valid)
    return ConfigError(f"{prefix}.{key} is not a setting of {what}{nearest(key, valid)}: its settings are "
                       f"{', '.join(valid)}.")


def typed_settings(schema: Any, values: Mapping[str, Any], prefix: str, what: str,
                   extra: Iterable[str] = ()) -> dict[str, Any]:
    """``values`` checked against the fields of the dataclass ``schema`` and converted to their types.

    Parameters
    ----------
    schema : dataclass type or instance
        The config schema (a study's ``Config``, :class:`~simstudy.engine.config.RunnerConfig`,
        a population kind's or a learner's config).
    values : mapping
        Field names to values as given in Python.
    prefix, what : str
        The config path named in messages (``"study"``, ``"runner"``) and what the fields belong to.
    extra : iterable of str
        Keys accepted besides the fields (kept as given).

    Raises
    ------
    ConfigError
        For an unknown key (with the nearest valid name) or a value of the wrong type.
    """
    schema = schema if isinstance(schema, type) else type(schema)
    hints = typing.get_type_hints(schema)
    fields = {f.name for f in dataclasses.fields(schema)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key in fields:
            out[key] = coerce(value, hints.get(key, Any), f"{prefix}.{key}")
        elif key in extra:
            out[key] = value
        else:
            raise unknown_key(prefix, str(key), fields | set(extra), what)
    return out


def coerce(value: Any, hint: Any, field_name: str) -> Any:
    """``value`` as the type ``hint`` (bool, int, float, str, List[...], Optional[...], Any)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        if value is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else Any
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return _boolean(value, field_name)
    if hint is int:
        return _integer(value, field_name)
    if hint is float:
        return _number(value, field_name)
    if hint is str:
        return _text(value, field_name)
    if origin in (list, tuple, collections.abc.Sequence):
        return _sequence(value, args[0] if args else Any, field_name)
    if origin is dict and value is not None and not isinstance(value, Mapping):
        raise ConfigError(f"{field_name}={value!r} is invalid: give a mapping of its settings.")
    return value.item() if isinstance(value, np.generic) else value


def _boolean(value: Any, field_name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    hint = f" (the text {value!r} is not a boolean in Python)" if isinstance(value, str) else ""
    raise ConfigError(f"{field_name}={value!r} is invalid{hint}: use True or False.")


def _integer(value: Any, field_name: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise ConfigError(f"{field_name}={value!r} is invalid: use an integer (e.g. 20, not {value!r}).")


def _number(value: Any, field_name: str) -> Any:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return value if isinstance(value, (int, float)) else value.item()
    raise ConfigError(f"{field_name}={value!r} is invalid: use a number (e.g. 0.05, not {value!r}).")


def _text(value: Any, field_name: str) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (bool, np.bool_, Mapping, list, tuple, np.ndarray, set)):
        raise ConfigError(f"{field_name}={value!r} is invalid: use a text (a str).")
    return value.item() if isinstance(value, np.generic) else value


def _sequence(value: Any, item: Any, field_name: str) -> list:
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if isinstance(value, collections.abc.Sequence) and not isinstance(value, (str, bytes)):  # list, tuple, ListConfig
        return [coerce(v, item, field_name) for v in value]
    example = "[20, 40]" if item is int else "[0.0, 0.5]" if item is float else "['A', 'B']"
    kind = "the text" if isinstance(value, str) else "the single value"
    raise ConfigError(f"{field_name}={value!r} is invalid: give a list, e.g. {example}, not {kind} {value!r}.")
