"""Estimator settings scikit-learn has accepted, remembered so that later runs need not import it.

Checking a learner config's estimator (its class and parameters) means building it with
scikit-learn, and a bad field is refused before any worker starts, so the check sits on every
run's critical path, and importing scikit-learn (which imports ``scipy.stats``) is one of the
slowest imports of a run. The answer depends only on the class path,
the parameters given and the installed scikit-learn, so the first run that checks a spec stores
the estimator's full ``get_params(deep=False)`` in a small JSON file named by a hash of those
three; a later run with the same spec reads it back instead. The numba CART needs nothing but
those parameters, so a run of it then never imports scikit-learn in the main process (its
workers never do). Other kernels, and scikit-learn itself, still build the estimator.

What is stored, and what is not:

- only specs scikit-learn accepted: a rejected spec is checked, and refused with
  scikit-learn's own message, every time;
- only parameters JSON holds exactly (None, bools, numbers, strings, and lists/dicts of them
  that come back equal, with the same types and ``repr``): anything else (a tuple, a dict with
  integer keys, an object) is simply checked every time;
- a file that cannot be read back (truncated, edited) counts as absent and is rewritten.

The files live in the ``estimators`` folder of simstudy's cache (:func:`simstudy.learners.cache.cache_root`:
``$SIMSTUDY_CACHE``, else ``~/.cache/simstudy``). Deleting the folder is always safe. When it cannot be written, nothing is stored and every run checks with
scikit-learn, as before.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

log = logging.getLogger("simstudy")

__all__ = ["accepted_params", "cache_directory", "remember_accepted"]

#: Bump when the stored format or the meaning of "accepted" changes: older files are then ignored.
FORMAT = 1


def cache_directory() -> Path:
    """Where accepted estimator specs are stored (see the module docstring)."""
    from simstudy.learners.cache import cache_root

    return cache_root() / "estimators"


@lru_cache(maxsize=1)
def _sklearn_version() -> str | None:
    """The installed scikit-learn's version, read from its metadata (no import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scikit-learn")
    except PackageNotFoundError:  # pragma: no cover - scikit-learn is a dependency
        return None


def _exact(value: Any) -> bool:
    """JSON gives ``value`` back with the same types and ``repr`` (so the run identity is the same)."""
    try:
        back = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return False
    return repr(back) == repr(value) and _same_types(back, value)


def _same_types(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return all(_same_types(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return all(_same_types(a[k], b[k]) for k in a)
    return True


def _path(target: str, given: Mapping[str, Any]) -> Path | None:
    """The file of this spec, or None when it cannot be stored (parameters JSON does not hold exactly)."""
    sklearn = _sklearn_version()
    given = dict(given)
    if sklearn is None or not _exact(given):
        return None
    key = json.dumps({"format": FORMAT, "target": target, "given": given, "scikit-learn": sklearn}, sort_keys=True)
    return cache_directory() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def accepted_params(target: str, given: Mapping[str, Any]) -> dict[str, Any] | None:
    """The full parameters of ``target(**given)`` if scikit-learn accepted this spec before
    (same class path, parameters and scikit-learn version), else None.

    Parameters
    ----------
    target : str
        The estimator's class path as configured (``learner.estimator._target_``).
    given : mapping
        The parameters configured with it.
    """
    path = _path(target, given)
    if path is None or not path.is_file():
        return None
    try:
        entry = json.loads(path.read_text())
        if entry["target"] != target or entry["given"] != dict(given) or entry["scikit-learn"] != _sklearn_version():
            return None
        params = entry["params"]
        return params if isinstance(params, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        log.debug("ignoring unreadable accepted-estimator file %s", path)
        return None


def remember_accepted(target: str, given: Mapping[str, Any], params: Mapping[str, Any]) -> bool:
    """Store that scikit-learn accepted ``target(**given)``, whose ``get_params(deep=False)`` is
    ``params``; returns whether it was stored (see the module docstring for what is not)."""
    path = _path(target, given)
    params = dict(params)
    if path is None or not _exact(params):
        return False
    entry = {"format": FORMAT, "target": target, "given": dict(given), "scikit-learn": _sklearn_version(),
             "params": params}
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as tmp:
            json.dump(entry, tmp, sort_keys=True)
        os.replace(tmp.name, path)  # atomic: a concurrent reader sees the old file or the new one
    except OSError as exc:
        log.debug("cannot store the accepted estimator in %s: %s", path.parent, exc)
        if tmp is not None:
            Path(tmp.name).unlink(missing_ok=True)
        return False
    return True
