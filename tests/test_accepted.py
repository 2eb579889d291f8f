"""Estimator specs scikit-learn accepted, remembered across runs (simstudy.learners.accepted)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.tree import DecisionTreeClassifier

from simstudy.errors import ConfigError
from simstudy.learners import accepted
from simstudy.learners.cart import CartLearner
from simstudy.learners.dispatch import build_learner, validate_learner_config
from simstudy.learners.sklearn import SklearnLearner

ROOT = Path(__file__).resolve().parents[1]
TREE = "sklearn.tree.DecisionTreeClassifier"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "estimators"


def _tree_config(**params):
    return {"name": "tree", "estimator": {"_target_": TREE, **params}}


def test_an_accepted_spec_is_read_back_only_for_the_same_class_parameters_and_version(cache, monkeypatch):
    params = DecisionTreeClassifier(max_depth=3).get_params(deep=False)
    assert accepted.accepted_params(TREE, {"max_depth": 3}) is None
    assert accepted.remember_accepted(TREE, {"max_depth": 3}, params)
    assert accepted.accepted_params(TREE, {"max_depth": 3}) == params
    assert len(list(cache.glob("*.json"))) == 1
    assert accepted.accepted_params(TREE, {"max_depth": 4}) is None
    assert accepted.accepted_params(TREE, {"max_depth": 3.0}) is None          # another type: another spec
    assert accepted.accepted_params("sklearn.tree.ExtraTreeClassifier", {"max_depth": 3}) is None
    monkeypatch.setattr(accepted, "_sklearn_version", lambda: "0.0.1")       # another scikit-learn
    assert accepted.accepted_params(TREE, {"max_depth": 3}) is None


def test_validation_remembers_an_accepted_spec_and_never_a_rejected_one(cache):
    validate_learner_config(_tree_config(max_depth=3, criterion="entropy"))
    entry = json.loads(next(cache.glob("*.json")).read_text())
    assert entry["params"] == DecisionTreeClassifier(max_depth=3, criterion="entropy").get_params(deep=False)
    for _ in range(2):  # refused with scikit-learn's message every time, nothing stored
        with pytest.raises(ConfigError, match="max_depth"):
            validate_learner_config(_tree_config(max_depth=-1))
    assert len(list(cache.glob("*.json"))) == 1


def test_parameters_json_cannot_hold_exactly_are_not_stored(cache):
    for given in ({"class_weight": {0: 1.0, 1: 2.0}},           # integer keys come back as strings
                  {"max_depth": (3,)},                           # a tuple comes back as a list
                  {"ccp_alpha": math.nan},                       # not JSON
                  {"random_state": object()}):
        assert not accepted.remember_accepted(TREE, given, {"x": 1})
    assert not accepted.remember_accepted(TREE, {}, {"class_weight": {0: 1.0}})
    assert not cache.exists() or not list(cache.iterdir())
    assert accepted.remember_accepted(TREE, {"class_weight": {"a": 1.0}, "max_depth": None}, {"x": [1, "b", None]})


def test_an_unreadable_file_counts_as_absent_and_is_rewritten(cache):
    params = DecisionTreeClassifier().get_params(deep=False)
    assert accepted.remember_accepted(TREE, {}, params)
    path = next(cache.glob("*.json"))
    path.write_text('{"format": 1, "params": ')                  # truncated
    assert accepted.accepted_params(TREE, {}) is None
    validate_learner_config(_tree_config())
    assert accepted.accepted_params(TREE, {}) == params


def test_an_unwritable_folder_stores_nothing_and_validation_still_works(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SIMSTUDY_CACHE", str(blocker))
    validate_learner_config(_tree_config(max_depth=2))
    assert not accepted.remember_accepted(TREE, {}, {"x": 1})
    assert accepted.accepted_params(TREE, {"max_depth": 2}) is None
    assert list(tmp_path.iterdir()) == [blocker]                # no temporary file left behind


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    from simstudy.learners.knn.population import _cache_dir

    monkeypatch.setenv("SIMSTUDY_CACHE", str(tmp_path / "a"))
    assert accepted.cache_directory() == tmp_path / "a" / "estimators" and _cache_dir() == tmp_path / "a" / "knn"
    monkeypatch.delenv("SIMSTUDY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert accepted.cache_directory() == tmp_path / "xdg" / "simstudy" / "estimators"


def test_a_tree_from_remembered_parameters_is_the_tree_from_the_estimator(cache):
    config = _tree_config(max_depth=4, criterion="entropy", min_samples_leaf=2, random_state=7)
    first = build_learner(config)                                  # scikit-learn checks, then remembered
    second = build_learner(config)                                 # from the remembered parameters
    direct = CartLearner(DecisionTreeClassifier(max_depth=4, criterion="entropy", min_samples_leaf=2,
                                                random_state=7))
    assert isinstance(second, CartLearner) and second.template is None and first.template is not None
    for learner in (first, second):
        assert learner.describe() == direct.describe()
        assert learner.__getstate__() == direct.__getstate__()    # what the workers get
    assert isinstance(build_learner({**config, "engine": "sklearn"}), SklearnLearner)
    unsupported = _tree_config(class_weight="balanced")            # remembered, but no kernel: scikit-learn
    build_learner(unsupported)
    assert isinstance(build_learner(unsupported), SklearnLearner)


def test_a_remembered_tree_run_does_not_import_scikit_learn(tmp_path):
    """The second process validates and builds the tree without importing scikit-learn; both
    describe the same learner (the run identity)."""
    code = ("import json, sys\n"
            "from simstudy.learners import build_learner, validate_learner_config\n"
            "config = {'name': 'tree', 'estimator': {'_target_': 'sklearn.tree.DecisionTreeClassifier', "
            "'max_depth': 5}}\n"
            "validate_learner_config(config)\n"
            "learner = build_learner(config)\n"
            "print(json.dumps({'sklearn': 'sklearn' in sys.modules, 'describe': learner.describe()}))\n")
    env = dict(os.environ, SIMSTUDY_CACHE=str(tmp_path / "cache"))
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                                      text=True, check=True).stdout) for _ in range(2)]
    assert [r["sklearn"] for r in runs] == [True, False]
    assert runs[0]["describe"] == runs[1]["describe"]
