"""Old import paths of simstudy, kept working for one release with a :class:`DeprecationWarning`.

One table says where every moved name lives now: :data:`MOVED` maps an old module to the module
that took its place, :data:`MOVED_NAMES` the names of an old module that went elsewhere. Old
modules that no longer exist as files (``simstudy.runner``) are served by :class:`_Finder`, a
meta-path finder that makes a stand-in module; old modules that became packages
(``simstudy.engine``) serve their moved names through :func:`moved_attribute` in their
``__getattr__``. Either way the first use of a name warns and gives the object from its new home,
so ``from simstudy.runner import run_chunks`` keeps working until the paths are removed in
simstudy 0.4.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__all__ = ["MOVED", "MOVED_NAMES", "install", "moved_attribute"]

#: Old module -> the module that now holds its names (packages: their submodules follow).
MOVED: dict[str, str] = {
    "simstudy.audit.cli": "simstudy.cli.audit",
    "simstudy.cache": "simstudy.learners.cache",
    "simstudy.collect": "simstudy.sweeps",
    "simstudy.config": "simstudy.engine.config",
    "simstudy.crossval": "simstudy.cv.loop",
    "simstudy.cvinference": "simstudy.evaluate",
    "simstudy.forkpool": "simstudy.engine.backends.fork_pool",
    "simstudy.help": "simstudy.cli.help",
    "simstudy.learners.fisher": "simstudy.learners.linear.fisher",
    "simstudy.learners.fisher_reference": "simstudy.learners.linear.fisher_reference",
    "simstudy.learners.knn": "simstudy.learners.knn.population",
    "simstudy.learners.knn_regression": "simstudy.learners.knn.regression",
    "simstudy.learners.knn_walks": "simstudy.learners.knn.walks",
    "simstudy.learners.linear": "simstudy.learners.linear.batched",
    "simstudy.learners.logistic": "simstudy.learners.logistic.newton",
    "simstudy.learners.logistic_learner": "simstudy.learners.logistic.learner",
    "simstudy.learners.simd_math": "simstudy.learners.logistic.simd_math",
    "simstudy.learners.sklearn_linear": "simstudy.learners.linear.exact",
    "simstudy.libm": "simstudy.studies.nedelko_histogram.libm",
    "simstudy.losses": "simstudy.cv.losses",
    "simstudy.manifest": "simstudy.engine.manifest",
    "simstudy.metrics": "simstudy.studies.metrics",
    "simstudy.populations.tabular": "simstudy.populations.finite",
    "simstudy.records": "simstudy.engine.records",
    "simstudy.report.prewarm": "simstudy.engine.backends.prewarm",
    "simstudy.rundir": "simstudy.engine.rundir",
    "simstudy.runner": "simstudy.engine.runner",
    "simstudy.schemes": "simstudy.cv.splits",
    "simstudy.truth": "simstudy.populations.truth",
    "simstudy.warmup": "simstudy.engine.backends.workers",
}

#: Old module -> {name: module now defining it}, for names that did not follow :data:`MOVED`.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "simstudy.engine": {"resolve_study": "simstudy.studies.resolve", "make_config": "simstudy.studies.resolve",
                        "resolved_config": "simstudy.engine.identity",
                        "run_phase": "simstudy.engine.execution"},
    "simstudy.cli": {"plan_from_config": "simstudy.cli.hydra", "setup_logging": "simstudy.cli.console"},
    "simstudy.config": {"Config": "simstudy.cli.hydra", "register_configs": "simstudy.cli.hydra"},
    "simstudy.runner": {"Chunk": "simstudy.studies.base", "ChunkOutput": "simstudy.engine.chunks",
                        "RunReport": "simstudy.engine.chunks", "plan_chunks": "simstudy.engine.chunks",
                        "ShardStore": "simstudy.engine.shards", "BACKENDS": "simstudy.engine.backends",
                        "FailureRateExceeded": "simstudy.errors"},
    "simstudy.learners.fisher": {name: "simstudy.learners.linear.threshold" for name in (
        "TIE_RULES", "Thresholds", "erm_threshold", "tie_uniforms")},
    "simstudy.learners.logistic": {name: "simstudy.learners.logistic.batch" for name in (
        "BatchedLogistic", "LogisticFit", "fit_logistic_batch", "supported_logistic_params")},
    "simstudy.populations.tabular": {
        "MISSING_MARKERS": "simstudy.populations.io.table", "TabularData": "simstudy.populations.io.table",
        "binarize": "simstudy.populations.io.table", "data_fingerprint": "simstudy.populations.io.fingerprint",
        "load_covtype": "simstudy.populations.io.openml", "load_openml": "simstudy.populations.io.openml",
        "load_table_file": "simstudy.populations.io.text", "DataUnavailableError": "simstudy.errors",
        "MISSING_POLICIES": "simstudy.populations.configs"},
    "simstudy.losses": {"check_learner_loss": "simstudy.learners.base"},
    "simstudy.schemes": {"nested_cv_losses": "simstudy.cv.loop", "NestedCVLosses": "simstudy.cv.loop"},
    "simstudy.warmup": {"ignore_interrupts_in_worker": "simstudy.engine.backends.tasks"},
}


def _new_home(old: str, name: str) -> str | None:
    """The module that now defines ``old.name``, or None when the name never lived there."""
    home = MOVED_NAMES.get(old, {}).get(name) or MOVED.get(old)
    if home is None:
        for package, target in MOVED.items():  # a submodule of a moved package
            if old.startswith(package + "."):
                home = target + old[len(package):]
                break
    return home


def moved_attribute(old: str, name: str, stacklevel: int = 3) -> Any:
    """``old.name`` from its new module, with a DeprecationWarning naming the new path.

    Raises
    ------
    AttributeError
        ``name`` is not a moved name of ``old``.
    """
    home = _new_home(old, name)
    if home is None or name.startswith("__"):
        raise AttributeError(f"module {old!r} has no attribute {name!r}")
    module = importlib.import_module(home)
    if not hasattr(module, name):
        raise AttributeError(f"module {old!r} has no attribute {name!r}")
    warnings.warn(f"{old}.{name} is deprecated: import it from {home} (the old path goes in simstudy 0.4).",
                  DeprecationWarning, stacklevel=stacklevel)
    value = getattr(module, name)
    if old in sys.modules:
        setattr(sys.modules[old], name, value)  # warned once; ``from old import name`` looks twice
    return value


class _MovedModule(types.ModuleType):
    """Stand-in for an old module path: its names come from their new homes, with a warning."""

    def __getattr__(self, name: str) -> Any:
        return moved_attribute(self.__name__, name)


#: Old module paths that are packages again: their own ``__getattr__`` serves the moved names.
_STILL_PACKAGES = {"simstudy.engine", "simstudy.cli", "simstudy.learners.knn", "simstudy.learners.linear",
                   "simstudy.learners.logistic"}


#: Old packages that are gone: their stand-ins have a ``__path__`` so their old submodules import.
_OLD_PACKAGES = {"simstudy.cvinference"}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds old module paths and makes their stand-in modules."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if not fullname.startswith("simstudy.") or fullname in _STILL_PACKAGES:
            return None
        if not any(fullname == old or fullname.startswith(old + ".") for old in MOVED if old not in _STILL_PACKAGES):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname in _OLD_PACKAGES)

    def create_module(self, spec) -> types.ModuleType:
        module = _MovedModule(spec.name)
        if spec.submodule_search_locations is not None:
            module.__path__ = []  # an old package: its old submodules are found by this finder too
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: every name is looked up on use."""


def install() -> None:
    """Put the finder of old paths first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
