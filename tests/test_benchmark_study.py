"""The benchmark study: its cell table (columns, hand-computed aggregation), seeds derived from
the cells' identity (an extended run leaves the old records byte-identical), n_jobs
independence, the truths' weights, and the command's errors."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simstudy.errors import ConfigError
from simstudy.inference.procedures import KFoldDesign, NestedCVDesign
from simstudy.benchmark import load_benchmark, run_benchmark
from simstudy.studies.benchmark.aggregate import CELL_COLUMNS, aggregate_cells
from simstudy.studies.benchmark.cells import cell_key, cell_seed
from simstudy.studies.benchmark.truth import err_n_truth, estimate_weights

SMALL = dict(procedures=["kfold_t", "holdout_wald"], mechanisms=["gaussian_linear"], learners=["ols"],
             sizes=[30], replicates=12)


def _main_records(result, timing: bool = True) -> pd.DataFrame:
    """The main records in (cell, replicate, procedure) order; ``timing=False`` drops the one measured
    column (CPU seconds), which no rerun reproduces."""
    rec = result.run.records
    rec = rec.sort_values(["condition_key", "replicate", "subject"]).reset_index(drop=True)
    return rec if timing else rec.drop(columns=["cpu_seconds"])


def test_ci_scale_gives_the_contract_table(tmp_path):
    result = run_benchmark("ci", out=tmp_path / "run")
    cells = result.cells
    assert list(cells.columns) == CELL_COLUMNS
    assert set(cells["kind"]) == {"interval", "test"} and set(cells["estimand"]) >= {"R_n", "Err_n"}
    assert (cells["failed"] == 0).all() and (cells["replicates"] == 60).all()
    intervals = cells[cells["kind"] == "interval"]
    assert intervals["coverage"].between(0, 1).all() and intervals["rejection_rate"].isna().all()
    assert np.allclose(intervals["miss_left"] + intervals["miss_right"] + intervals["coverage"], 1)
    row = cells[(cells["mechanism"] == "gaussian_linear") & (cells["learner"] == "ols")].iloc[0]
    assert row["cell_seed"] == cell_seed(cell_key("gaussian_linear", "ols", "squared", 40), 0)
    folds = cells[cells["mechanism"] == "gaussian_folds"]
    assert (folds["truth_mean"] == 0).all() and (folds["truth_mcse"] == 0).all()
    loaded = load_benchmark(tmp_path / "run")
    pd.testing.assert_frame_equal(loaded.cells, cells)
    from simstudy import load_run                        # the generic road reads it too

    pd.testing.assert_frame_equal(load_run(tmp_path / "run").tables.summary, cells)
    assert loaded.config["replicates"] == 60 and "justification" in loaded.config["mcse_target"]
    assert {"cells.csv", "manifest.json", "config.json"} <= {p.name for p in (tmp_path / "run").iterdir()}


def test_a_folder_without_its_records_says_what_was_left_out_and_what_still_reads(tmp_path):
    """A committed results folder leaves replicates.parquet and shards/ out: load_run says so, and names
    load_benchmark, which reads the cell tables without them."""
    import shutil

    from simstudy import load_run
    from simstudy.errors import UserError

    run = tmp_path / "run"
    cells = run_benchmark("ci", out=run, **SMALL).cells
    rows = len(pd.read_parquet(run / "replicates.parquet"))
    (run / "replicates.parquet").unlink()
    with pytest.raises(UserError, match="simstudy-report --rebuild"):  # shards left: rebuild from them
        load_run(run)
    shutil.rmtree(run / "shards")
    with pytest.raises(UserError) as refused:
        load_run(run)
    message = str(refused.value)
    assert f"the manifest says the run finished and wrote it ({rows:,} rows" in message
    assert "committed without it" in message and f"load_benchmark({str(run)!r})" in message
    pd.testing.assert_frame_equal(load_benchmark(run).cells, cells)


def test_an_extended_run_computes_only_new_cells_and_keeps_old_records(tmp_path):
    first = run_benchmark("ci", out=tmp_path / "run", **SMALL)
    old = _main_records(first)
    more = dict(SMALL, procedures=["kfold_t", "holdout_wald", "cv_clt_all_pairs"],
                mechanisms=["gaussian_linear", "gaussian_folds"], sizes=[30, 40])
    second = run_benchmark("ci", out=tmp_path / "run", **more)
    assert second.run.manifest["resumed_chunks"] >= 1
    new = _main_records(second)
    kept = new[new["condition_key"].isin(old["condition_key"]) & new["subject"].isin(old["subject"])]
    pd.testing.assert_frame_equal(kept.reset_index(drop=True), old)
    alone = run_benchmark("ci", **more)                 # a fresh run of the larger grid: the same records
    pd.testing.assert_frame_equal(_main_records(alone, False), new.drop(columns=["cpu_seconds"]))


def test_a_data_file_changed_in_place_is_refused_when_the_run_goes_on(tmp_path, capsys):
    """The mechanisms' data are fingerprinted in run_state.json: the same file resumes; other rows at the same
    path are refused (naming the mechanism) before any work, and the run's records stay as they were."""
    import json

    from conftest import make_letter_like
    from simstudy.errors import UserError

    def write(path, seed):
        X, y = make_letter_like(rows=300, seed=seed)
        path.write_text("\n".join(",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)) + "\n")

    data, out = tmp_path / "letter.data", tmp_path / "run"
    write(data, 0)
    grid = dict(procedures=["kfold_t"], mechanisms=["letter"], learners=["lda"], losses=["zero_one"], sizes=[40],
                replicates=4, data={"letter": str(data)})
    first = run_benchmark("ci", out=out, **grid)
    state = json.loads((out / "run_state.json").read_text())
    assert set(state["data"]) == {"mechanism letter"}
    assert run_benchmark("ci", out=out, **{**grid, "replicates": 6}).run.manifest["resumed_chunks"] >= 1
    records = (out / "replicates.parquet").read_bytes()
    write(data, 1)
    with pytest.raises(UserError, match="'mechanism letter' computed on other data"):
        run_benchmark("ci", out=out, **{**grid, "replicates": 8})
    assert (out / "replicates.parquet").read_bytes() == records
    assert len(first.run.records) == 4
    from simstudy.cli.benchmark import benchmark_main        # the command names its own flag

    with pytest.raises(SystemExit) as exit_info:
        benchmark_main(["--scale", "ci", "--mechanisms", "letter", "--learners", "lda", "--losses", "zero_one",
                        "--sizes", "40", "--replicates", "8", "--procedures", "kfold_t", "--data", f"letter={data}",
                        "-o", str(out), "--no-site"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"--out={str(out)!r} holds records of 'mechanism letter'" in err
    assert "Choose another --out" in err and "hydra" not in err and "Traceback" not in err
    assert (out / "replicates.parquet").read_bytes() == records



def test_the_same_rows_at_another_path_extend_the_run(tmp_path):
    """A run is tied to its data's contents, not to the path it was read from (a clone of the
    repository on another machine): the same file copied elsewhere extends the run, its records kept."""
    import json
    import shutil

    from conftest import make_letter_like

    X, y = make_letter_like(rows=300, seed=0)
    data, moved, out = tmp_path / "letter.data", tmp_path / "elsewhere" / "copy.data", tmp_path / "run"
    data.write_text("\n".join(",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)) + "\n")
    moved.parent.mkdir()
    shutil.copy(data, moved)
    grid = dict(procedures=["kfold_t"], mechanisms=["letter"], learners=["lda"], losses=["zero_one"], sizes=[40],
                replicates=4)
    first = run_benchmark("ci", out=out, **grid, data={"letter": str(data)})
    old = _main_records(first)
    state = json.loads((out / "run_state.json").read_text())
    assert "data" not in state["identity"]["study"]
    second = run_benchmark("ci", out=out, **{**grid, "replicates": 6}, data={"letter": str(moved)})
    assert second.run.manifest["resumed_chunks"] >= 1
    assert second.run.manifest["identity_hash"] == state["identity_hash"]
    pd.testing.assert_frame_equal(_main_records(second).iloc[:len(old)].reset_index(drop=True), old)
    assert second.run.config["study"]["data"] == {"letter": str(moved)}  # the provenance names the path read
    moved.unlink()                          # reading it back names the field that gave the path
    from simstudy import load_run
    from simstudy.errors import DataUnavailableError

    for read in (lambda: load_run(out), lambda: run_benchmark("ci", **grid, data={"letter": str(moved)})):
        with pytest.raises(DataUnavailableError, match=r"study.data\['letter'\]=.*no such file") as info:
            read()
        assert "population.path" not in str(info.value) and "--data letter=PATH" in str(info.value)


def test_a_directory_recorded_with_its_data_paths_hashed_keeps_its_hash(tmp_path):
    """A run directory written while the benchmark's data paths were part of the identity hash is the
    same run once they are not (its shards carry the old hash): with the recorded paths (then its data's
    fingerprints are recorded), and after that with the same rows anywhere. Any other difference, or
    other data, is still refused; so is another path once its run_state.json is lost."""
    import json

    from simstudy.engine.admission import RunIdentity, identity_digest
    from simstudy.engine.rundir import RunDirectory
    from simstudy.errors import RunDirectoryError

    study, letter = {"alpha": 0.05, "seed": 0}, {"mechanism letter": "f" * 64}
    here, there = {"data": {"letter": "/here/letter.data"}}, {"data": {"letter": "/there/letter.data"}}

    def now(locations, data=letter, **changes):
        content = {"study": {**study, **changes}}
        return RunIdentity("benchmark", identity_digest(content), {}, content, data, locations,
                           identity_digest({"study": {**content["study"], **locations}}))

    old = {"study": {**study, **here}}
    with RunDirectory(tmp_path).claim(RunIdentity("benchmark", identity_digest(old), {}, old)):   # as recorded then
        pass
    with pytest.raises(RunDirectoryError, match=r"changed: study.data.letter\).*run it once with those"):
        RunDirectory(tmp_path).claim(now(there))
    with pytest.raises(RunDirectoryError, match=r"changed: study.seed\)"):
        RunDirectory(tmp_path).claim(now(here, seed=1))
    with RunDirectory(tmp_path).claim(now(here)) as run_dir:
        assert run_dir.identity.hash == identity_digest(old) and run_dir.resumed
    state = json.loads((tmp_path / "run_state.json").read_text())
    assert state["identity_hash"] == identity_digest(old) and state["identity"] == old and state["data"] == letter
    with RunDirectory(tmp_path).claim(now(there)) as run_dir:   # fingerprinted now: the same rows anywhere
        assert run_dir.identity.hash == identity_digest(old)
    for changed in (now(there, seed=1), now(there, {"mechanism letter": "e" * 64}), now(there, seed=0.0)):
        with pytest.raises(RunDirectoryError, match=r"configuration \(changed: study.seed\)|configuration: |other data"):
            RunDirectory(tmp_path).claim(changed)
    (tmp_path / "run_state.json").unlink()             # lost: the recorded paths and the fingerprint file remain
    (tmp_path / "shards" / "replicates").mkdir(parents=True)
    (tmp_path / "shards" / "replicates" / "x.json").write_text(json.dumps({"run_hash": identity_digest(old)}))
    with pytest.raises(RunDirectoryError, match="run_state.json missing"):
        RunDirectory(tmp_path).claim(now(there))
    with pytest.raises(RunDirectoryError, match="computed on other data"):
        RunDirectory(tmp_path).claim(now(here, {"mechanism letter": "e" * 64}))
    with RunDirectory(tmp_path).claim(now(here)) as run_dir:
        assert run_dir.identity.hash == identity_digest(old)

    downloaded = {"study": {**study, "data": {}}}      # letter read from its download, no path recorded
    with RunDirectory(tmp_path / "d").claim(RunIdentity("benchmark", identity_digest(downloaded), {}, downloaded)):
        pass
    with RunDirectory(tmp_path / "d").claim(now({"data": {}}, data={})):   # a run reading no data: admitted
        pass
    with pytest.raises(RunDirectoryError, match="changed: study.data.letter"):  # letter's fingerprint was never taken
        RunDirectory(tmp_path / "d").claim(now(there))


def test_a_run_whose_state_file_is_lost_keeps_its_data_by_the_fingerprint_file(tmp_path):
    """With run_state.json gone, data_fingerprints.json (written at every claim) says what the records
    were computed on: the same rows elsewhere resume, other rows are refused, even after a run that read no
    data; without it the run is refused rather than taken on trust. A result is never written over a run
    of the same configuration on other data."""
    import shutil

    from conftest import make_letter_like
    from simstudy.errors import RunDirectoryError, UserError

    def write(path, seed):
        X, y = make_letter_like(rows=300, seed=seed)
        path.write_text("\n".join(",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)) + "\n")

    data, copy, other, out = (tmp_path / name for name in ("a.data", "b.data", "c.data", "run"))
    write(data, 0)
    shutil.copy(data, copy)
    write(other, 1)
    grid = dict(procedures=["kfold_t"], learners=["lda"], losses=["zero_one"], sizes=[40], replicates=4)
    both = dict(grid, mechanisms=["letter", "logistic"])
    first = run_benchmark("ci", out=out, **both, data={"letter": str(data)})
    assert (out / "data_fingerprints.json").exists()
    (out / "run_state.json").unlink()
    with pytest.raises(UserError, match="'mechanism letter' computed on other data"):
        run_benchmark("ci", out=out, **both, data={"letter": str(other)})
    (out / "run_state.json").unlink(missing_ok=True)
    run_benchmark("ci", out=out, **grid, mechanisms=["logistic"])          # reads no data: admitted, letter kept
    with pytest.raises(UserError, match="'mechanism letter' computed on other data"):
        run_benchmark("ci", out=out, **both, data={"letter": str(other)})
    assert run_benchmark("ci", out=out, **both, data={"letter": str(copy)}).run.manifest["resumed_chunks"] >= 2
    (out / "run_state.json").unlink()
    (out / "data_fingerprints.json").unlink()
    with pytest.raises(UserError, match="so is data_fingerprints.json"):
        run_benchmark("ci", out=out, **both, data={"letter": str(copy)})
    older = tmp_path / "older"                  # a run_state.json from before letter was read (git checkout)
    run_benchmark("ci", out=older, **grid, mechanisms=["logistic"])
    state = (older / "run_state.json").read_bytes()
    run_benchmark("ci", out=older, **both, data={"letter": str(data)})
    (older / "run_state.json").write_bytes(state)
    with pytest.raises(UserError, match="'mechanism letter' computed on other data"):
        run_benchmark("ci", out=older, **both, data={"letter": str(other)})
    run_benchmark("ci", out=older, **both, data={"letter": str(data)})    # its own rows: both files record them
    (older / "data_fingerprints.json").write_text('{"mechanism letter": "' + "e" * 64 + '"}')  # edited
    with pytest.raises(UserError, match="run_state.json and data_fingerprints.json name other contents"):
        run_benchmark("ci", out=older, **both, data={"letter": str(data)})
    assert run_benchmark("ci", out=older, **both, data={"letter": str(data)}, overwrite=True).run.manifest[
        "resumed_chunks"] == 0                       # overwrite discards the run, as the refusal says
    elsewhere = run_benchmark("ci", out=tmp_path / "other", **both, data={"letter": str(other)})
    with pytest.raises(RunDirectoryError, match="computed on other data"):
        first.run.write(tmp_path / "other")
    assert elsewhere.run.manifest["data_fingerprints"] != first.run.manifest["data_fingerprints"]



@pytest.mark.parametrize("data", ["letter", ["letter"], {"letter": 3}])
def test_data_that_is_not_a_mapping_of_paths_is_refused_naming_the_field(data):
    from simstudy.errors import ConfigError

    with pytest.raises(ConfigError, match=r"study.data=.* is invalid"):
        run_benchmark("ci", procedures=["kfold_t"], mechanisms=["letter"], learners=["lda"], losses=["zero_one"],
                      sizes=[40], replicates=2, data=data)

def test_records_do_not_depend_on_n_jobs():
    one = run_benchmark("ci", **SMALL, n_jobs=1)
    two = run_benchmark("ci", **SMALL, n_jobs=2)
    pd.testing.assert_frame_equal(_main_records(one, False), _main_records(two, False))
    pd.testing.assert_frame_equal(one.cells.drop(columns=["cpu_seconds"]), two.cells.drop(columns=["cpu_seconds"]))


def _fake_records():
    """Two data cells, hand-made: an interval procedure with 4 replicates (one failed) and a test."""
    base = {"mechanism": "m", "loss": "squared", "n": 20, "note": "", "fits": 10.0, "pvalue": np.nan,
            "truth_Err_XY": np.nan, "estimate": np.nan}
    rows = []
    for r, (lo, hi, truth, cpu, err) in enumerate([(0.0, 1.0, 0.5, 1.0, ""), (0.6, 0.9, 0.5, 3.0, ""),
                                                   (0.1, 0.3, 0.5, 2.0, ""), (np.nan, np.nan, np.nan, np.nan, "X")]):
        rows.append({**base, "learner": "a", "condition_key": "k1", "replicate": r, "subject": "p", "kind": "interval",
                     "lower": lo, "upper": hi, "reject": np.nan, "truth_R_n": truth, "cpu_seconds": cpu, "error": err})
        rows.append({**base, "learner": "a", "condition_key": "k1", "replicate": r, "subject": "q", "kind": "interval",
                     "lower": lo, "upper": hi + 1, "reject": np.nan, "truth_R_n": truth, "cpu_seconds": cpu,
                     "error": err})
    for r, reject in enumerate([1.0, 0.0, 0.0, 1.0, 1.0]):
        rows.append({**base, "learner": "a-vs-a", "condition_key": "k2", "replicate": r, "subject": "p",
                     "kind": "test", "lower": np.nan, "upper": np.nan, "reject": reject, "truth_R_n": 0.0,
                     "cpu_seconds": 1.0, "error": ""})
    truths = pd.DataFrame({"cell_key": ["k1", "k1", "k1", "k2", "k2"], "truth": [0.4, 0.5, 0.6, 0.0, 0.0],
                           "truth_se": [0.0] * 5, "error": [""] * 5})
    return pd.DataFrame(rows), truths


def test_aggregation_matches_hand_computed_values():
    records, truths = _fake_records()
    cells = aggregate_cells(records, truths, 0.1, {"p": "R_n", "q": "R_n"},
                            {"k1": {"task": "regression", "cell_seed": 7}, "k2": {"task": "regression", "cell_seed": 8}})
    p = cells[(cells["procedure"] == "p") & (cells["learner"] == "a")].set_index("estimand")
    # R_n = 0.5 in each of the 3 good replicates: covered by [0, 1] only; [0.6, 0.9] misses right, [0.1, 0.3] left
    assert p.loc["R_n", "replicates"] == 3 and p.loc["R_n", "failed"] == 1 and p.loc["R_n", "nominal"] == 0.9
    assert p.loc["R_n", "coverage"] == pytest.approx(1 / 3)
    assert p.loc["R_n", "coverage_mcse"] == pytest.approx(np.sqrt(1 / 3 * 2 / 3 / 3))
    assert (p.loc["R_n", "miss_left"], p.loc["R_n", "miss_right"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    z, k, m = 1.959963984540054, 1, 3                 # Wilson 95% for 1 of 3, by its formula
    centre, half = (k / m + z**2 / (2 * m)), z * np.sqrt(k / m * (1 - k / m) / m + z**2 / (4 * m**2))
    lo, hi = (centre - half) / (1 + z**2 / m), (centre + half) / (1 + z**2 / m)
    assert (p.loc["R_n", "coverage_lo"], p.loc["R_n", "coverage_hi"]) == (pytest.approx(lo, abs=1e-4),
                                                                         pytest.approx(hi, abs=1e-4))
    assert p.loc["R_n", "width_mean"] == pytest.approx((1.0 + 0.3 + 0.2) / 3)
    assert p.loc["R_n", "width_median"] == pytest.approx(0.3) and p.loc["R_n", "cpu_seconds"] == pytest.approx(2.0)
    # Err_n = mean(0.4, 0.5, 0.6) = 0.5, MC error sd / sqrt(3) = 0.1 / sqrt(3)
    assert p.loc["Err_n", "truth_mean"] == pytest.approx(0.5)
    assert p.loc["Err_n", "truth_mcse"] == pytest.approx(0.1 / np.sqrt(3))
    # q's widths are p's + 1: medians 0.3 and 1.3, their median 0.8
    q = cells[(cells["procedure"] == "q")].set_index("estimand")
    assert p.loc["R_n", "relative_width"] == pytest.approx(0.3 / 0.8)
    assert q.loc["R_n", "relative_width"] == pytest.approx(1.3 / 0.8)
    test = cells[cells["kind"] == "test"].set_index("estimand")
    assert test.loc["R_n", "rejection_rate"] == pytest.approx(3 / 5) and bool(test.loc["R_n", "null_true"])
    assert np.isnan(test.loc["R_n", "coverage"]) and test.loc["R_n", "cell_seed"] == 8


def test_truth_weights_and_err_n():
    plan = KFoldDesign(3).plan(10, np.random.default_rng(0))           # folds of 4, 3, 3 points
    assert np.allclose(np.sort(estimate_weights(plan)), [0.3, 0.3, 0.4])
    nested = NestedCVDesign(3, 2).plan(12, np.random.default_rng(0))  # 2 x (3 outer + 3 pair) splits
    assert np.allclose(estimate_weights(nested), [1 / 6] * 3 + [0] * 3 + [1 / 6] * 3 + [0] * 3)
    assert err_n_truth(np.array([1.0, 3.0]), np.array([0.3, 0.4])) == (2.0, pytest.approx(np.sqrt(1.0 + 0.125)))


@pytest.mark.parametrize("field, value, near", [("mechanisms", ["gausian_linear"], "gaussian_linear"),
                                                ("learners", ["olss"], "ols"), ("procedures", ["kfold_tt"], "kfold_t"),
                                                ("learners", ["ols-vs-rdge"], "ridge")])
def test_bad_names_name_the_nearest_valid_one(field, value, near):
    with pytest.raises(ConfigError, match=f"Did you mean '{near}'"):
        run_benchmark("ci", **{**SMALL, field: value})


def test_the_command_refuses_a_bad_scale_without_traceback(capsys):
    from simstudy.cli.benchmark import benchmark_main

    with pytest.raises(SystemExit) as exit_info:
        benchmark_main(["--scale", "quik"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Did you mean 'quick'" in err and "Traceback" not in err


def test_cv_clt_streams_reproduce_the_cv_clt_intervals_and_truths():
    import simstudy
    from simstudy.studies.cv_clt.aggregate import procedure_intervals

    cv = simstudy.run_study("cv_clt", population="hastie_10_2", sizes=[40], replicates=15, seed=2020, progress=False,
                            learners={"ridge": {"_target_": "sklearn.linear_model.RidgeClassifier", "alpha": 1.0}},
                            comparisons=[], nested_cv_replicates=0)
    theirs = procedure_intervals(cv.records, 0.05)
    ours = run_benchmark("ci", procedures=["kfold_t", "kfold_t_rho0.7", "cv_clt_all_pairs", "cv_clt_within_fold"],
                         mechanisms=["hastie_10_2"], learners=["ridge"], losses=["zero_one"], sizes=[40],
                         replicates=15, seed=2020, streams="cv_clt").run.records
    for mine, name in [("kfold_t", "cv_t"), ("kfold_t_rho0.7", "cv_t_rho0.7"), ("cv_clt_all_pairs", "cv_clt_all_pairs"),
                       ("cv_clt_within_fold", "cv_clt_within_fold")]:
        rows = ours[ours["subject"] == mine].sort_values("replicate")
        assert np.array_equal(rows["lower"].to_numpy(), np.asarray(theirs[name].low))
        assert np.array_equal(rows["upper"].to_numpy(), np.asarray(theirs[name].high))
        assert np.array_equal(rows["truth_R_n"].to_numpy(), cv.records["target"].to_numpy())


def test_the_command_writes_the_cells_and_the_results_site(tmp_path, capsys):
    from simstudy.cli.benchmark import benchmark_main

    out = tmp_path / "bench"
    benchmark_main(["--scale", "ci", "--procedures", "kfold_t", "--mechanisms", "gaussian_folds", "--replicates", "20",
                    "-o", str(out)])
    assert (out / "cells.parquet").is_file() and (out / "site" / "index.html").is_file()
    assert "site:" in capsys.readouterr().out


@pytest.mark.parametrize("field, value, fix", [("replicates", "10", "use an integer"), ("replicates", True, "use an integer"),
                                               ("sizes", "50", "give a list"), ("sizes", 50, "give a list"),
                                               ("sizes", [40.5], "use an integer")])
def test_python_road_refuses_text_and_single_values_for_counts(field, value, fix):
    with pytest.raises(ConfigError, match=fix):
        run_benchmark("ci", **{**SMALL, field: value})
