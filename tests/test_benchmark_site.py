"""The benchmark's results site (simstudy.report.benchmark): files, hand-computed leaderboard
numbers, downloads that round-trip, the filters' data equal to the cell table, no external URL,
the script's leaderboard equal to Python's (in headless Chromium when present), clear errors."""
from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pandas as pd
import pytest

from benchmark_fake import FakeResult, fake_cells, fake_config
from simstudy.errors import ConfigError, DataUnavailableError
from simstudy.report.benchmark import leaderboard, read_benchmark, write_benchmark_site
from simstudy.report.benchmark.ademp import replicate_justification
from simstudy.report.benchmark.comparison import compare_with_schulz_kuempel
from simstudy.report.benchmark.heatmap import coverage_grid
from simstudy.report.benchmark.table import checked_cells


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A site written once from a made-up table of one mechanism at n = 100 and 400 (the all-failed cell
    is at n = 100), of one size for the second learner (9 data cells)."""
    cells = fake_cells(mechanisms=("letter",))
    cells = cells[(cells["n"] == 100) | (cells["learner"] == "tree")]
    out = tmp_path_factory.mktemp("site")
    index = write_benchmark_site(FakeResult(cells, fake_config()), out)
    return index, checked_cells(cells)


def _row(**values):
    base = dict(procedure="A", kind="interval", mechanism="m", task="regression", learner="lrn", loss="squared", n=100,
                estimand="R_n", nominal=0.95, replicates=100, failed=0, coverage=np.nan, coverage_lo=np.nan,
                coverage_hi=np.nan, coverage_mcse=np.nan, miss_left=np.nan, miss_right=np.nan, width_mean=1.0,
                width_median=1.0, relative_width=1.0, null_true=False, rejection_rate=np.nan, rejection_lo=np.nan,
                rejection_hi=np.nan, truth_mean=0.3, truth_mcse=0.0, fits=10.0, cpu_seconds=0.01, cell_seed=1)
    base.update(values)
    return base


def _tiny() -> pd.DataFrame:
    """Three scored interval cells and one where every replicate failed; five test cells."""
    rows = [_row(coverage=0.93, relative_width=1.0, failed=1, n=100),
            _row(coverage=0.90, relative_width=1.2, n=200, mechanism="worst"),
            _row(coverage=0.97, relative_width=0.8, fits=20.0, failed=2, n=400),
            _row(coverage=np.nan, replicates=0, failed=5, n=800, relative_width=np.nan)]
    for n, rate, null in ((100, 0.05, True), (200, 0.10, True), (100, 0.6, False), (200, 0.8, False),
                          (400, 0.7, False)):
        rows.append(_row(procedure="T", kind="test", learner="a-vs-b", n=n, nominal=0.05, rejection_rate=rate,
                         null_true=null, mechanism="null" if null else "alt"))
    return pd.DataFrame(rows)


def test_leaderboard_numbers_equal_hand_computed_values():
    board = leaderboard(checked_cells(_tiny()), by=("kind", "procedure")).set_index("procedure")
    a = board.loc["A"]
    # MCSE_0 = sqrt(.95 * .05 / 100) = 0.021794; the band +- 0.043589 holds 0.93 and 0.97, not 0.90
    assert (a["cells"], a["unscored"]) == (3, 1)
    assert a["within_share"] == pytest.approx(2 / 3)
    assert a["worst_gap"] == pytest.approx(0.90 - 0.95) and a["worst_cell"] == "worst / lrn / squared / n=200"
    assert a["mean_undercoverage"] == pytest.approx((0.02 + 0.05 + 0.0) / 3)
    assert a["median_relative_width"] == pytest.approx(1.0)
    assert a["median_fits"] == 10.0 and a["failed_share"] == pytest.approx(8 / (300 + 8))
    t = board.loc["T"]
    # alpha = .05, R = 100: band +- 2 sqrt(.05 * .95 / 100) = 0.043589 holds 0.05, not 0.10
    assert (t["size_cells"], t["power_cells"]) == (2, 3)
    assert t["size_within_share"] == pytest.approx(0.5)
    assert t["worst_size"] == pytest.approx(0.10) and t["worst_size_cell"] == "null / a-vs-b / squared / n=200"
    assert t["median_power"] == pytest.approx(0.7)


def test_heat_map_grid_is_the_mean_over_cells_and_links_the_worst():
    cells = checked_cells(_tiny())
    grid = coverage_grid(cells, "R_n").set_index("mechanism")
    assert grid.loc["m", "coverage"] == pytest.approx(0.95) and grid.loc["m", "cells"] == 2
    assert grid.loc["m", "gap"] == pytest.approx(0.0) and grid.loc["worst", "worst_slug"] == "worst__lrn__squared__n200"


def test_site_files_exist(site):
    index, cells = site
    out = index.parent
    for name in ("index.html", "site.css", "site.js", "data.js", "heatmap_R_n.svg", "heatmap_Err_n.svg", "cells.csv",
                 "cells.parquet", "leaderboard_intervals.csv", "leaderboard_tests.parquet", "config.json",
                 "comparison_schulz_kuempel.csv"):
        assert (out / name).is_file(), name
    data_cells = cells[["mechanism", "learner", "loss", "n"]].drop_duplicates()
    assert len(list((out / "cells").glob("*.html"))) == len(data_cells) == len(list((out / "cells").glob("*.svg")))
    text = index.read_text()
    for anchor in ("leaderboard", "heatmap", "comparison", "cells", "ademp", "downloads"):
        assert f'id="{anchor}"' in text
    for link in re.findall(r'href="(cells/[^"]+)"', text):
        assert (out / link).is_file(), link
    assert "#67001f" in (out / "site.js").read_text()     # the figure's colour map, darkest red
    assert "No replicate of this data cell gave an outcome" in (out / "cells" / "letter__tree__log_loss__n100.html"
                                                                 ).read_text()


def test_downloads_round_trip(site):
    index, cells = site
    out = index.parent
    pd.testing.assert_frame_equal(pd.read_parquet(out / "cells.parquet"), cells)
    pd.testing.assert_frame_equal(pd.read_csv(out / "cells.csv", keep_default_na=True), cells, check_dtype=False)
    board = leaderboard(cells)
    stored = pd.read_parquet(out / "leaderboard_intervals.parquet")
    expected = board[board["kind"] == "interval"].reset_index(drop=True)[stored.columns]
    pd.testing.assert_frame_equal(stored, expected, check_dtype=False)
    assert read_benchmark(out).cells.equals(cells)    # the site's folder is itself a readable run


def test_the_filters_data_equal_the_cell_table(site):
    index, cells = site
    text = (index.parent / "data.js").read_text()
    payload = json.loads(text.removeprefix("window.BENCH = ").rstrip().removesuffix(";"))
    data = pd.DataFrame(payload["rows"], columns=payload["columns"])
    assert len(data) == len(cells)
    for column in payload["columns"]:
        if column == "slug":
            continue
        ours, theirs = data[column].to_numpy(), cells[column].to_numpy()
        if cells[column].dtype.kind == "f":
            np.testing.assert_array_equal(np.asarray(ours, dtype=float), theirs)   # null <-> NaN
        else:
            assert list(ours) == list(theirs), column


def test_no_external_url(site):
    index, _ = site
    for path in index.parent.rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            assert not re.search(r"https?:|//cdn|@import", path.read_text()), path.name
        if path.suffix == ".svg":
            text = path.read_text()
            assert not re.search(r'(href|src)="https?:', text) and "@import" not in text, path.name


@pytest.mark.parametrize("query, chosen", [("", {"estimand": "R_n"}),
                                           ("?estimand=Err_n&learner=tree&n=400", {"estimand": "Err_n",
                                                                                   "learner": "tree", "n": 400})])
def test_the_script_computes_the_leaderboard_python_computes(site, query, chosen):
    """The page's script, run by headless Chromium, gives the same leaderboard as Python for the
    default filters (estimand R_n) and for filters set in the address, and the same heat-map cells."""
    browser = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if browser is None:
        pytest.skip("no Chromium")
    index, cells = site
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                              "--virtual-time-budget=5000", "--dump-dom", index.as_uri() + query],
                             capture_output=True, text=True, timeout=120).stdout
    match = re.search(r'data-bench-check="([^"]*)"', dom)
    assert match, "the page's script did not run"
    check = json.loads(html.unescape(match.group(1)))
    keep = np.logical_and.reduce([cells[k] == v for k, v in chosen.items()])
    assert check["filters"]["estimand"] == chosen["estimand"] and check["rows"] == int(keep.sum()) > 0
    board = leaderboard(cells[keep], by=("kind", "procedure"))
    for kind in ("interval", "test"):
        python = board[board["kind"] == kind].reset_index(drop=True)
        assert [r["procedure"] for r in check[kind]] == list(python["procedure"])
        for js_row, (_, py_row) in zip(check[kind], python.iterrows()):
            for key, value in js_row.items():
                expected = py_row[key]
                if isinstance(value, str) or value is None:
                    assert value == expected or (value is None and pd.isna(expected)) or (value == "" and expected
                                                                                          in ("", None)), key
                else:
                    assert math.isclose(value, float(expected), rel_tol=1e-12, abs_tol=1e-12), (kind, key)
    others = np.logical_and.reduce([cells[k] == v for k, v in chosen.items() if k != "estimand"] + [cells["n"] > 0])
    assert check["heat_R_n"]["cells"] == len(coverage_grid(cells[others], "R_n"))


def test_bad_input_gets_a_clear_error(tmp_path):
    with pytest.raises(DataUnavailableError, match="cells.parquet"):
        read_benchmark(tmp_path)
    with pytest.raises(ConfigError, match="coverage_mcse"):
        read_benchmark(FakeResult(_tiny().drop(columns="coverage_mcse"), {}))
    with pytest.raises(ConfigError, match="kind"):
        read_benchmark(FakeResult(_tiny().assign(kind="posterior"), {}))


def test_comparison_follows_the_table():
    """The same claim agrees or disagrees as the cells say: the corrected t 'tends to be liberal'."""
    cells = checked_cells(fake_cells(mechanisms=("friedman1",)))
    rows = compare_with_schulz_kuempel(cells, fake_config()).set_index("their verdict")
    assert rows.loc["tends to be liberal (under-covers)", "agrees"] == "agrees"    # made up at 0.94 on Err_n
    covering = cells.assign(coverage=np.where(cells["procedure"] == "nadeau_bengio_t", 0.99, cells["coverage"]))
    rows = compare_with_schulz_kuempel(covering, fake_config()).set_index("their verdict")
    assert rows.loc["tends to be liberal (under-covers)", "agrees"] == "disagrees"
    nothing = compare_with_schulz_kuempel(cells[cells["procedure"] != "nested_cv"], fake_config())
    assert "not measured" in set(nothing["agrees"])


def test_replicate_count_is_justified_by_its_monte_carlo_error():
    text = replicate_justification(1000, 0.95)
    assert "0.0069" in text and "MCSE ≤ 0.01" in text and "R ≥ 1,900" not in text
    assert "misses it" in replicate_justification(1000, 0.95, {"mcse": 0.005})


def test_the_docs_page_links_the_site_of_a_committed_run_or_says_not_yet_run(tmp_path):
    """docs/sphinxext/benchsite.py: a placeholder without a run; with one, the site beside the pages,
    a link to it and the leaderboard's head as valid reStructuredText; the site is rewritten only
    when the run changes."""
    import sys

    from docutils.core import publish_doctree

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))
    import benchsite

    run, extra = tmp_path / "run", tmp_path / "extra"
    run.mkdir()
    assert "Not yet run" in benchsite.benchmark_results_rst(run, extra) and not (extra / "benchmark").exists()
    cells = fake_cells(mechanisms=("logistic",))
    cells = cells[(cells["n"] == 100) & (cells["loss"] == "zero_one") & (cells["learner"] != "tree")]   # 2 data cells
    cells.to_parquet(run / "cells.parquet")
    (run / "config.json").write_text(json.dumps(fake_config()))
    text = benchsite.benchmark_results_rst(run, extra)
    assert "<benchmark/index.html>`_" in text and (extra / "benchmark" / "index.html").is_file()
    stamp = (extra / "benchmark" / "index.html").stat().st_mtime_ns
    assert benchsite.benchmark_results_rst(run, extra) == text
    assert (extra / "benchmark" / "index.html").stat().st_mtime_ns == stamp     # not rewritten
    tree = publish_doctree(text, settings_overrides={"report_level": 2, "halt_level": 2})
    assert sum(node.tagname == "table" for node in tree.findall()) == 2     # R_n and Err_n
    (run / "manifest.json").write_text(json.dumps({                 # the provenance its manifest gives
        "status": "complete", "finished_utc": "2026-11-27T23:00:00+00:00", "replicates_total": 10,
        "replicates_failed": 1, "environment": {"git_commit": "7d74332abcdef0123"},
        "shards": [{"cpu_time": 3600.0}], "phases": {"truth": {"shards": [{"cpu_time": 1800.0}]}}}))
    text = benchsite.benchmark_results_rst(run, extra)
    assert ("at commit ``7d74332abcde``, status ``complete``, finished 2026-11-27; its 2 chunks took 1.5 CPU hours"
            in " ".join(text.split()))
    assert "1 of 10 replicates failed" in text
    publish_doctree(text, settings_overrides={"report_level": 2, "halt_level": 2})



def test_nice_ticks_by_hand():
    from simstudy.report.benchmark.svg import nice_ticks
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.53, 1.0) == [0.6, 0.7, 0.8, 0.9, 1.0]
    assert nice_ticks(-0.55, 0.55) == [-0.5, -0.25, 0.0, 0.25, 0.5]
    assert nice_ticks(0.0, 0.42) == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert nice_ticks(3.0, 3.0) == [3.0]


def test_cell_figures_are_svg_showing_every_rate_and_width_of_the_table(site):
    """Each drill-down figure parses as SVG and has one rate marker per (procedure, estimand) with a rate,
    at that rate, and the median and mean width of each interval procedure; every procedure labels a row."""
    import xml.etree.ElementTree as ET
    from simstudy.report.benchmark.drilldown import data_cells
    from simstudy.report.benchmark.scores import scored_cells

    index, cells = site
    ns = "{http://www.w3.org/2000/svg}"
    for slug, rows in data_cells(cells):
        root = ET.parse(index.parent / "cells" / f"{slug}.svg").getroot()
        assert root.tag == f"{ns}svg" and root.find(f"{ns}title").text
        shown = {e.get("data-label"): float(e.get("data-value")) for e in root if e.get("data-label")}
        rows = scored_cells(rows)
        expected = {f"rate {r.procedure} {r.estimand}": r.rate for r in rows.itertuples() if not math.isnan(r.rate)}
        for r in rows[rows["kind"] == "interval"].dropna(subset=["width_median"]).itertuples():
            expected[f"width_median {r.procedure}"] = r.width_median
            expected[f"width_mean {r.procedure}"] = r.width_mean
        assert shown == expected, slug
        labels = {e.text for e in root if e.tag == f"{ns}text" and e.get("text-anchor") == "end"}
        assert set(rows["procedure"]) <= labels, slug
