"""Extend a finished run (issue 11, item 7): more replicates, sizes, learners or comparisons into
the same run directory compute only the new work and give the records of a fresh run of the
larger config; a change of what the records depend on is refused; a report setting reuses all.

The run identity (``run_state.json``) hashes the study's ``record`` fields, the population's
parameters and data fingerprint, the learner and the loss; ``extent`` fields (sizes, replicates,
cv_clt's learners and comparisons) and ``report`` fields (alpha, rho_hats) are left out, and
cv_clt's learners and comparisons each have their own hash (a known name with new settings is
refused).
"""
import json
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT, make_letter_like

from simstudy import run_study
from simstudy.errors import RunDirectoryError

RUN = dict(population="logistic", learner="tree", K=5, n_jobs=1, chunk_size=20, progress=False)


def _manifest(out):
    return json.loads((out / "manifest.json").read_text())


def _chunks(out):
    m = _manifest(out)
    return m["resumed_chunks"], m["computed_chunks"]


def _plain(records):
    """Records without array columns (compared separately where they exist)."""
    keep = [c for c in records.columns if not records[c].map(lambda v: hasattr(v, "__len__")
                                                             and not isinstance(v, str)).any()]
    return records[keep].reset_index(drop=True)


def _same(a, b):
    pd.testing.assert_frame_equal(_plain(a), _plain(b))


def _snapshot(directory):
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def fresh():
    """Fresh in-memory runs of the larger configs, for comparison."""
    return {
        "80": run_study("cv_variance", sizes=[20, 40], replicates=80, **RUN).records,
        "80+": run_study("cv_variance", sizes=[20, 40, 80], replicates=80, **RUN).records,
        "40": run_study("cv_variance", sizes=[20], replicates=40, **RUN).records,
    }


def test_more_replicates_and_sizes_compute_only_the_new_chunks(tmp_path, fresh):
    out = tmp_path / "run"
    run_study("cv_variance", sizes=[20, 40], replicates=40, out=out, **RUN)
    assert _chunks(out) == (0, 4)
    identity = json.loads((out / "run_state.json").read_text())["identity_hash"]

    more = run_study("cv_variance", sizes=[20, 40], replicates=80, out=out, **RUN)
    assert _chunks(out) == (4, 4)  # replicates 40..79 of both sizes
    _same(more.records, fresh["80"])

    wider = run_study("cv_variance", sizes=[20, 40, 80], replicates=80, out=out, **RUN)
    assert _chunks(out) == (8, 4)  # only n = 80 is new
    _same(wider.records, fresh["80+"])
    _same(pd.read_parquet(out / "replicates.parquet"), fresh["80+"])

    narrower = run_study("cv_variance", sizes=[20], replicates=40, out=out, **RUN)
    assert _chunks(out) == (2, 0)  # a narrower view of the same run computes nothing ...
    _same(narrower.records, fresh["40"])
    run_study("cv_variance", sizes=[20, 40, 80], replicates=80, out=out, **RUN)
    assert _chunks(out) == (12, 0)  # ... and keeps the other shards for a wider one
    assert json.loads((out / "run_state.json").read_text())["identity_hash"] == identity


@pytest.mark.parametrize("change,named", [
    (dict(seed=7), "study.seed"),
    (dict(K=10), "study.K"),
    (dict(population={"kind": "logistic", "name": "logistic", "bayes_error": 0.1}), "population.bayes_error"),
    (dict(learner={"name": "tree", "estimator": {"_target_": "sklearn.tree.DecisionTreeClassifier",
                                                 "max_depth": 3}}), "learner"),
    (dict(loss="log_loss"), "loss"),
])
def test_a_change_of_what_the_records_depend_on_is_refused(tmp_path, change, named):
    out = tmp_path / "run"
    run_study("cv_variance", sizes=[20], replicates=20, out=out, **RUN)
    before = _snapshot(out)
    with pytest.raises(RunDirectoryError) as info:
        run_study("cv_variance", **{**dict(sizes=[20], replicates=40), **RUN, **change}, out=out)
    message = str(info.value)
    assert "different configuration" in message and named in message and "pass overwrite=True" in message
    assert _snapshot(out) == before  # refused before anything was written


def test_a_report_setting_reuses_everything(tmp_path):
    out = tmp_path / "run"
    first = run_study("cv_variance", sizes=[20], replicates=40, out=out, **RUN)
    again = run_study("cv_variance", sizes=[20], replicates=40, alpha=0.01, rho_hats=[0.0, 0.5], out=out, **RUN)
    assert _chunks(out) == (2, 0)
    _same(first.records, again.records)
    tests = pd.read_csv(out / "tests.csv")
    assert (tests.alpha == 0.01).all() and sorted(set(tests.rho_hat)) == [0.0, 0.5]


# ----------------------------------------------------------------------------- cv_clt: learners and comparisons
@pytest.fixture(scope="module")
def letter_like(tmp_path_factory):
    X, y = make_letter_like(rows=600)
    path = tmp_path_factory.mktemp("data") / "letters.data"
    path.write_text("\n".join(",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)) + "\n")
    return {"kind": "tabular", "name": "letter", "path": str(path), "label_column": "first",
            "positive": list("ABCDEFGHIJKLM")}


TREE = {"_target_": "sklearn.tree.DecisionTreeClassifier"}
KNN = {"_target_": "sklearn.neighbors.KNeighborsClassifier", "n_neighbors": 5}
CLT = dict(sizes=[40], K=5, replicates=20, repeated_splits=2, nested_cv_replicates=0, n_jobs=1, chunk_size=10,
           progress=False)


def _clt(population, out=None, **kw):
    return run_study("cv_clt", population=population, out=out, **{**CLT, **kw})


def _sorted(records):
    return _plain(records).sort_values(["condition_key", "replicate", "subject"]).reset_index(drop=True)


def test_cv_clt_more_learners_and_comparisons_compute_only_those(tmp_path, letter_like):
    out = tmp_path / "run"
    _clt(letter_like, out, learners={"tree": TREE}, comparisons=[["tree", "tree"]])
    assert _chunks(out) == (0, 2)
    extended = _clt(letter_like, out, learners={"tree": TREE, "knn": KNN}, comparisons=[["tree", "tree"],
                                                                                     ["knn", "tree"]])
    resumed, computed = _chunks(out)
    assert (resumed, computed) == (2, 2)  # the 2 chunks of knn and knn-vs-tree only
    old_subjects = {"tree", "tree vs tree (independent seed)"}
    shards = _manifest(out)["shards"]
    assert sorted(set(s["subjects"]) == old_subjects for s in shards) == [False, False, True, True], shards
    assert all(set(s["subjects"]) == {"knn", "knn vs tree"} for s in shards if set(s["subjects"]) != old_subjects)
    fresh = _clt(letter_like, learners={"tree": TREE, "knn": KNN}, comparisons=[["tree", "tree"], ["knn", "tree"]])
    assert set(extended.records.subject) == set(fresh.records.subject)
    _same(_sorted(extended.records), _sorted(fresh.records))
    more = _clt(letter_like, out, replicates=30, learners={"tree": TREE, "knn": KNN},
                comparisons=[["tree", "tree"], ["knn", "tree"]])
    assert _chunks(out)[1] == 1  # replicates 20..29, all subjects at once
    _same(_sorted(more.records), _sorted(_clt(letter_like, replicates=30, learners={"tree": TREE, "knn": KNN},
                                              comparisons=[["tree", "tree"], ["knn", "tree"]]).records))


def test_cv_clt_a_learner_with_new_settings_under_its_old_name_is_refused(tmp_path, letter_like):
    out = tmp_path / "run"
    _clt(letter_like, out, learners={"tree": TREE}, comparisons=[["tree", "tree"]])
    before = _snapshot(out)
    with pytest.raises(RunDirectoryError, match="subject 'tree' with other settings"):
        _clt(letter_like, out, learners={"tree": {**TREE, "max_depth": 2}}, comparisons=[["tree", "tree"]])
    assert _snapshot(out) == before


def test_extension_through_the_command_line(tmp_path):
    """The same through ``simstudy``: a larger study.replicates in the same hydra.run.dir."""
    out = tmp_path / "run"
    args = [sys.executable, "-m", "simstudy.cli", "study.sizes=[20]", "runner.n_jobs=1", "runner.chunk_size=20",
            "runner.progress=false", f"hydra.run.dir={out}"]
    for replicates, expected in ((40, (0, 2)), (60, (2, 1))):
        proc = subprocess.run(args + [f"study.replicates={replicates}"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert _chunks(out) == expected
    assert "resuming, 2 chunk(s) loaded" in (out / "cli.log").read_text()
