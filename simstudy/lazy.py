"""Deferred imports of heavy modules (scipy.stats alone takes about a second to import).

Worker processes import only what their replicates use; a module such as ``scipy.stats`` that
only the aggregation needs is imported on its first use instead of at start-up.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["LazyModule"]


class LazyModule:
    """Stands for the module ``name``; the first attribute access imports it.

    Examples
    --------
    >>> stats = LazyModule("scipy.stats")    # nothing imported yet
    >>> float(stats.norm.cdf(0.0))            # imported here
    0.5
    """

    __slots__ = ("_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str):
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
