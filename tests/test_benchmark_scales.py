"""The benchmark's scales: the blocks of a scale (which cells, which procedures), the full grid's
minimum counts (issue: >= 16 procedures, >= 20 mechanisms, >= 7 learners with a random forest and
gradient boosting, every loss, several sizes, both estimands), the ci and quick grids without
blocks, and the local data of a mechanism (``--data letter=PATH``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from simstudy.errors import ConfigError
from simstudy.studies.benchmark.scales import SCALES, TASK_LOSSES, Block, cell_procedures

PROCS = ("a", "b", "c", "d")
BLOCKS = (Block(("lin",), ("m1", "m2"), (50, 100)),
          Block(("lin",), ("m1",), (500,), losses=("zero_one",), procedures=("b", "d")),
          Block(("lin",), ("m1",), (500,), losses=("zero_one",), procedures=("a",)))


@pytest.mark.parametrize("mechanism, learner, loss, n, expected", [
    ("m2", "lin", "squared", 100, PROCS),          # a block without procedures: all of them
    ("m2", "lin", "squared", 500, ()),             # the learner is named, no block holds the cell
    ("m1", "lin", "log_loss", 500, ()),            # the blocks at 500 hold zero_one only
    ("m1", "lin", "zero_one", 500, ("a", "b", "d")),   # the union of two blocks, in the scale's order
    ("m9", "tree", "squared", 7, PROCS),           # a learner in no block keeps the product grid
])
def test_cell_procedures_by_hand(mechanism, learner, loss, n, expected):
    assert cell_procedures(BLOCKS, mechanism, learner, loss, n, PROCS) == expected


def test_ci_and_quick_grids_have_no_blocks():
    assert SCALES["ci"].blocks == () and SCALES["quick"].blocks == ()


def _full_cells():
    from simstudy.cv.losses import resolve_loss
    from simstudy.populations import build_population
    from simstudy.studies.benchmark.study import build_cells
    from simstudy.studies.benchmark.config import BenchmarkConfig

    grid = SCALES["full"]
    letter = Path(__file__).resolve().parents[2] / "shared" / "data" / "letter-recognition.data"
    # Letter comes from OpenML by default; without the local file its cells are counted from the blocks.
    names = [m for m in grid.mechanisms if m != "letter" or letter.is_file()]
    config = BenchmarkConfig(scale="full", procedures=list(grid.procedures), mechanisms=names,
                             learners=list(grid.learners + grid.comparisons), losses=list(grid.losses),
                             sizes=list(grid.sizes), replicates=grid.replicates,
                             truth_replicates=grid.truth_replicates)
    populations = {m: build_population({"name": m, "path": str(letter)} if m == "letter" else m) for m in names}
    cells, _, _ = build_cells(config, populations, {name: resolve_loss(name) for name in config.losses})
    return grid, cells


def test_full_grid_meets_the_issue_minimum_counts():
    from simstudy.studies.benchmark.procedures import resolve_procedure

    grid, cells = _full_cells()
    run = {p for cell in cells for p in (cell.procedures or grid.procedures)}
    mechanisms = {c.mechanism for c in cells} | {m for b in grid.blocks for m in b.mechanisms if m == "letter"}
    learners = {part for c in cells for part in (c.pair or (c.learner,))} - {"none"}
    assert len(run) >= 16 and set(run) == set(grid.procedures)
    assert len(mechanisms) >= 20 and mechanisms == set(grid.mechanisms)
    assert len(learners) >= 7 and {"random_forest", "gradient_boosting"} <= learners
    assert set(TASK_LOSSES["classification"] + TASK_LOSSES["regression"]) <= {c.loss for c in cells}
    assert len({c.n for c in cells}) >= 3
    assert {"R_n", "Err_n", "Err_XY"} <= {resolve_procedure(p).estimand for p in run}
    assert any(c.pair for c in cells) and grid.replicates >= 400


def test_data_names_a_mechanism_of_the_run():
    from simstudy.benchmark import run_benchmark

    with pytest.raises(ConfigError, match="study.data"):
        run_benchmark("ci", mechanisms=["gaussian_linear"], learners=["ols"], data={"letter": "x.data"})


@pytest.mark.parametrize("item", ["letter", "letter=/no/such/file.data"])
def test_the_command_refuses_bad_data_without_traceback(capsys, item):
    from simstudy.cli.benchmark import benchmark_main

    with pytest.raises(SystemExit) as exit_info:
        benchmark_main(["--scale", "ci", "--data", item])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--data=" in err and "Traceback" not in err


def test_a_block_restricted_cell_skips_the_other_procedures(monkeypatch):
    import dataclasses

    from simstudy.benchmark import run_benchmark
    from simstudy.studies.benchmark import scales

    blocks = (Block(("ols",), ("gaussian_linear",), (30,), procedures=("kfold_t",)),)
    monkeypatch.setitem(scales.SCALES, "ci", dataclasses.replace(scales.SCALES["ci"], blocks=blocks))
    result = run_benchmark("ci", procedures=["kfold_t", "holdout_wald"], mechanisms=["gaussian_linear"],
                           learners=["ols"], losses=["squared"], sizes=[30, 40], replicates=4)
    rec = result.run.records
    assert rec["condition_key"].nunique() == 1          # n=40: no block holds it, so no cell
    skipped = rec[rec["subject"] == "holdout_wald"]
    assert len(skipped) == 4 and (skipped["kind"] == "skipped").all()
    assert skipped["note"].str.contains("block").all()
    assert (rec[rec["subject"] == "kfold_t"]["kind"] != "skipped").all()
