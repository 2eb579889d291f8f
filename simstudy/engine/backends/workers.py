"""Stopping the run's workers (:func:`kill_workers`): loky's reusable executor and the kept fork
pool, whichever this process started. Imports neither: a process that started no pool pays
nothing to call it.

Whether a run may reuse workers kept from an earlier run (:func:`user_modules`): a worker runs
the code it imported (loky) or inherited (fork) when it started. Functions and classes of the
user's own modules travel to the workers by reference (module and name, as pickle does), so a
kept worker would run them as they were then: a module global the script changed between two
runs, or a module it reloaded, would keep its old value there. Code defined in ``__main__`` (a
script, a notebook) travels by value, with the values of its globals, and the installed packages
(scikit-learn, simstudy's presets) do not change while a program runs. So a run whose parts
reference a module of the user's (any module outside the standard library, the installed
packages and simstudy) gets fresh workers; other runs may reuse the kept ones.
"""
from __future__ import annotations

import io
import logging
import os
import sys
import sysconfig
import types
from typing import Any

__all__ = ["kill_workers", "user_modules"]

log = logging.getLogger("simstudy")


def kill_workers(wait: bool = True) -> None:
    """Kill the run's workers: loky's reusable executor's and the kept fork pool's, if any."""
    fork_pool = sys.modules.get("simstudy.engine.backends.fork_pool")
    if fork_pool is not None:
        fork_pool.kill_pool()
    executor = _reusable_executor()
    if executor is None:
        return
    try:
        executor.shutdown(wait=wait, kill_workers=True)
    except Exception as exc:  # pragma: no cover - depends on loky's internals
        log.debug("could not stop the loky workers: %s", exc)


def _reusable_executor():
    """loky's reusable executor if this process created one (never imports loky itself)."""
    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    return getattr(module, "_executor", None)


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(os.path.dirname(sys.modules["simstudy"].__file__))
    return tuple(os.path.realpath(r) + os.sep for r in roots if r)


def _is_user_module(name: str, roots: tuple[str, ...]) -> bool:
    if name in ("__main__", "__mp_main__") or name in sys.builtin_module_names:
        return False
    module = sys.modules.get(name.split(".")[0] if name not in sys.modules else name)
    path = getattr(module, "__file__", None)
    if module is None or path is None:
        return name.split(".")[0] not in ("simstudy", "builtins")  # unknown: count it (fresh workers are safe)
    return not os.path.realpath(path).startswith(roots)


def user_modules(*parts: Any) -> set[str]:
    """The user's modules (see the module docstring) that ``parts`` reference by module and name
    when pickled for the workers; ``{"<unpicklable>"}`` when they cannot be pickled here."""
    import cloudpickle

    roots = _installed_roots()
    found: set[str] = set()

    class Recorder(cloudpickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, types.ModuleType):
                name = obj.__name__
            elif isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
                name = getattr(obj, "__module__", None) or ""
            else:
                name = ""
            if name and _is_user_module(name, roots):
                found.add(name)
            return super().reducer_override(obj)

    try:
        Recorder(io.BytesIO()).dump(parts)
    except Exception as exc:  # the workers will report it; meanwhile, count it as the user's code
        log.debug("could not pickle the run's parts to look for the user's modules: %s", exc)
        return {"<unpicklable>"}
    return found
