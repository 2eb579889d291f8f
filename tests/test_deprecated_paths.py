"""Old import paths keep working for one release: each gives the object from its new home, with a
DeprecationWarning that names the new path (:mod:`simstudy._deprecated`)."""
from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from conftest import ROOT
from simstudy._deprecated import MOVED, MOVED_NAMES


def _public_name(module) -> str:
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return sorted(names)[0]


def _old_paths() -> list[tuple[str, str, str]]:
    """(old module, name, new module): every moved name and one public name of every moved module."""
    cases = [(old, name, new) for old, names in MOVED_NAMES.items() for name, new in names.items()]
    for old, new in MOVED.items():
        cases.append((old, _public_name(importlib.import_module(new)), new))
    return cases


@pytest.mark.parametrize("old, name, new", _old_paths(), ids=lambda v: v if "." in str(v) else None)
def test_an_old_path_gives_the_new_object_with_a_warning(old, name, new):
    module = importlib.import_module(old)
    sys.modules[old].__dict__.pop(name, None)  # warn again even if an earlier test used the name
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated: import it from {new}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_from_import_of_an_old_path_warns_once_at_the_caller():
    code = ("import warnings; warnings.simplefilter('always')\n"
            "from simstudy.runner import run_chunks\n"
            "from simstudy.cvinference import infer\n"
            "from simstudy.learners.knn import PopulationKNN\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "DeprecationWarning" in line]
    assert len(lines) == 3, proc.stderr
    assert lines[0].startswith("<string>:2: DeprecationWarning: simstudy.runner.run_chunks is deprecated")


def test_old_submodules_of_a_moved_package_import():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build = importlib.import_module("simstudy.cvinference.build")  # importing alone does not warn
    with pytest.warns(DeprecationWarning, match="simstudy.evaluate.build"):
        assert build.cross_validate_losses is importlib.import_module("simstudy.evaluate.build").cross_validate_losses


def test_an_unknown_name_of_an_old_path_is_an_attribute_error():
    module = importlib.import_module("simstudy.runner")
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018
