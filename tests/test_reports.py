"""Issue 15: the headline, the tables' Monte Carlo errors, the HTML report, the LaTeX export,
the figure style and the browser check; issue 13 item 5 (Table 2 z-scores) and item 7 (cv_clt
counts and Wilson intervals)."""
from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy.report.figures import plt, size_axis
from simstudy.report.latex import frame_to_latex, latex_escape
from simstudy.report.paper import PAPER_REPLICATES, table2_comparison
from simstudy.report.tables import rate_with_interval, with_error
from simstudy.results import load_run
from simstudy.studies.metrics import between_block_correlation
from simstudy.sweeps import collect

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def table2_run(tmp_path_factory):
    """A small cv_variance run on a synthetic population, compared with the paper's Letter row."""
    out = tmp_path_factory.mktemp("reports") / "run"
    result = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[20, 40],
                                replicates=60, paper="letter", out=out, runner={"progress": False, "n_jobs": 1})
    return result, out


# ----------------------------------------------------------------------------- Monte Carlo errors
def test_with_error_is_196_standard_errors_and_rates_carry_counts():
    assert with_error(0.5242, 0.00698, 100) == "52.42 ± 1.37"
    assert with_error(float("nan"), 0.1) == ""
    assert rate_with_interval(8, 72, 0.0573, 0.2043) == "11.1 [5.7, 20.4] (8/72)"
    assert rate_with_interval(0, 0, float("nan"), float("nan")) == "- (0/0)"


def test_relative_bias_standard_errors_follow_the_delta_method(table2_run):
    """rel_bias_theta3 = -rho exactly, so their SEs agree; every rel. bias has a finite SE."""
    result, _ = table2_run
    s = result.summary
    assert np.allclose(s["rel_bias_theta3"], -s["rho"]) and np.allclose(s["rel_bias_theta3_se"], s["rho_se"])
    for name in ("theta1", "theta2", "theta4", "theta5", ""):
        column = f"rel_bias_{name}_se" if name else "theta_se"
        assert np.isfinite(s[column]).all() and (s[column] > 0).all()
    rec = result.records[result.records["n"] == 20]
    assert s.loc[s["n"] == 20, "rel_bias_theta1_se"].item() == pytest.approx(
        between_block_correlation(rec["mu_hat"], rec["theta1"]).se)


def test_theta_standard_error_matches_a_bootstrap():
    rng = np.random.default_rng(3)
    values = rng.standard_normal(4000)
    from simstudy.studies.cv_variance.aggregate import _variance_se

    boot = [np.var(rng.choice(values, values.size), ddof=1) for _ in range(400)]
    assert _variance_se(values) == pytest.approx(np.std(boot), rel=0.15)
    # normal data: SE(s^2) = sigma^2 sqrt(2 / R)
    assert _variance_se(values) == pytest.approx(np.sqrt(2 / values.size), rel=0.1)


def test_table2_comparison_z_by_hand():
    """Issue 13, item 5: z = (ours - paper) / sqrt(SE_ours^2 + SE_paper^2)."""
    summary = pd.DataFrame({"n": [80], "replicates": [10_000], "rho": [0.3863], "rho_se": [0.00926]})
    tests = pd.DataFrame({"n": [80, 80], "test": "cv_t", "rho_hat": [0.0, 0.7], "rejection_rate": [0.1174, 0.0126],
                          "rejections": [1174, 126], "replicates": 10_000})
    c = table2_comparison(summary, tests, "letter").set_index("quantity")
    rho = c.loc["rho"]
    assert rho["paper"] == 42.16 and rho["paper_se"] == pytest.approx(0.926)
    assert rho["z"] == pytest.approx((38.63 - 42.16) / math.hypot(0.926, 0.926), abs=1e-3)  # the 2.7 sigma cell
    t1 = c.loc["type1_rho_hat_0"]
    se_ours, se_paper = 100 * math.sqrt(0.1174 * 0.8826 / 1e4), 100 * math.sqrt(0.124 * 0.876 / PAPER_REPLICATES)
    assert t1["z"] == pytest.approx((11.74 - 12.4) / math.hypot(se_ours, se_paper))


# ----------------------------------------------------------------------------- headline
def test_cv_variance_headline_shows_rho_type1_and_the_paper(table2_run):
    result, out = table2_run
    text = result.headline()
    lines = text.splitlines()
    assert "rho (%)" in lines[0] and "Grandvalet & Bengio (2006) Table 2, letter" in lines[0]
    for n, paper_rho in ((20, "52.45"), (40, "43.43")):
        line = next(line for line in lines if line.strip().startswith(f"n={n} "))
        assert re.search(r"rho \d+\.\d\d ± \d+\.\d\d \(paper " + paper_rho + r", z [+-]\d+\.\d\)", line), line
        assert "rho_hat=0 " in line and "rho_hat=0.7 " in line
    assert (out / "headline.txt").read_text().strip() == text.strip()


def test_cli_run_ends_with_the_headline_then_the_files(tmp_path):
    import subprocess
    import sys

    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "simstudy.cli", "study.sizes=[20]", "study.replicates=20",
                           "runner.n_jobs=1", "runner.progress=false", f"hydra.run.dir={tmp_path / 'run'}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("[")]
    assert lines[0].startswith("cv_variance (") and "type-I error" in lines[0]
    assert any(line.strip().startswith("n=20 ") and "rho " in line for line in lines)
    assert not any("paper" in line for line in lines[:4])   # no paper row set: no z and no paper column
    assert lines[-1].startswith("simstudy: results in ") and "report.html" in lines[-1]


def test_collect_prints_every_runs_headline_and_writes_a_sweep_report(table2_run, tmp_path):
    import shutil

    _, out = table2_run
    for i in range(2):
        shutil.copytree(out, tmp_path / "sweep" / str(i))
    result = collect(tmp_path / "sweep")
    text = "\n".join(result.headlines)
    assert text.count("Grandvalet & Bengio (2006) Table 2, letter") == 2
    report = (tmp_path / "sweep" / "collected_report.html").read_text()
    assert report.count("<h4>") == 2 and "data:image/png;base64," in report
    assert (tmp_path / "sweep" / "collected.tex").read_text().count(r"\toprule") == 1


# ----------------------------------------------------------------------------- HTML and LaTeX
def test_run_report_structure(table2_run):
    """report.html: self-contained (no external resource), every section, tables and figures."""
    result, out = table2_run
    page = (out / "report.html").read_text()
    for anchor in ("headline", "tables", "figures", "failures", "config", "provenance"):
        assert f'id="{anchor}"' in page
    assert page.count('<img src="data:image/png;base64,') == len(result.figures())
    assert not re.search(r'(src|href)="(?!data:|#)', page)  # nothing fetched from elsewhere
    assert "Table 2 of Grandvalet &amp; Bengio (2006), letter" in page
    assert "52.45" in page and "Wilson" in page
    assert "0 failed replicate(s) of 120" in page
    manifest = result.manifest
    assert manifest["environment"]["git_commit"].split("-")[0] in page


def test_latex_tables_are_booktabs_and_escaped(table2_run):
    _, out = table2_run
    tex = (out / "tables.tex").read_text()
    assert tex.count(r"\begin{table}") == tex.count(r"\bottomrule") >= 3
    assert r"$\pm$" in tex and "±" not in tex and r"rel. bias theta1 (\%)" in tex
    frame = pd.DataFrame({"a_b": ["x & y"], "v": [0.123456]})
    assert "a\\_b & v" in frame_to_latex(frame) and "x \\& y & 0.1235" in frame_to_latex(frame)
    assert latex_escape("50% ± 1") == r"50\% $\pm$ 1"


# ----------------------------------------------------------------------------- cv_clt tables
def test_cv_clt_summary_md_has_counts_and_wilson_intervals():
    """Issue 13 item 7: size and power as counts with Wilson intervals."""
    from simstudy.studies.cv_clt.aggregate import rate_table

    tests = pd.DataFrame({"comparison": "knn vs tree", "test": "cv_t", "n": [400, 800], "size": [0.036, 8 / 72],
                          "size_count": [36, 8], "h0_replicates": [1002, 72], "size_low": [0.026, 0.0573],
                          "size_high": [0.049, 0.2043]})
    table = rate_table(tests, "size", "test")
    assert table.loc[0, "n=800"] == "11.1 [5.7, 20.4] (8/72)"


# ----------------------------------------------------------------------------- figures
def test_size_axis_ticks_are_the_sizes_run_in_plain_numbers():
    fig, ax = plt.subplots()
    ax.plot([100, 200, 400, 3200], [1, 2, 3, 4])
    size_axis(ax, [100, 200, 400, 3200])
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["100", "200", "400", "3200"] and ax.get_xscale() == "log"
    plt.close(fig)


def test_every_panel_has_at_most_five_series_and_a_legend_outside(table2_run):
    result, _ = table2_run
    for name, fig in result.figures().items():
        for ax in fig.axes:
            assert ax.get_legend() is None, name   # one figure legend, outside the axes
            assert len([h for h in ax.get_legend_handles_labels()[1] if not h.startswith("_")]) <= 6, name
        assert fig.legends, name
        plt.close(fig)


# ----------------------------------------------------------------------------- browser check
_CHECKER = ROOT / "benchmarks" / "check_report_html.py"


def _checker():
    spec = importlib.util.spec_from_file_location("check_report_html", _CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_report_renders_in_headless_chromium(table2_run, tmp_path):
    """The run report renders in a real browser (all images decode); a broken page is caught."""
    checker = _checker()
    browser = checker.find_chromium()
    if browser is None:
        pytest.skip("no Chromium (apt-get install -y chromium)")
    _, out = table2_run
    good = checker.check_report(out / "report.html", browser, min_sections=6)
    assert good["problems"] == [] and good["images"] >= 3 and good["tables"] >= 3, good
    broken = tmp_path / "broken.html"
    broken.write_text((out / "report.html").read_text().replace("data:image/png;base64,", "data:image/png;base64,AA", 1))
    assert any("did not render" in p for p in checker.check_report(broken, browser)["problems"])


def test_in_memory_result_gives_its_report_and_latex(table2_run):
    result, _ = table2_run
    page = result.html()
    assert page.startswith("<!DOCTYPE html>") and 'id="provenance"' in page
    assert result.latex().count(r"\toprule") == len(result.report_tables())


def _figure(i: int, name: str):
    from simstudy.report.figures import finish

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.errorbar([1, 2, 3], [i, i + 1, i + 0.5], yerr=[0.1, 0.2, 0.1], label=f"series {i}")
    return finish(fig, ax, f"panel {name}")


def _three_figures():
    return {name: _figure(i, name) for i, name in enumerate(("a", "b", "c"))}


def _three_makers(drawn_by: list | None = None):
    """Figure makers; each records the process that drew it (a file per figure in ``drawn_by[0]``)."""
    import functools
    import os

    def make(i, name):
        if drawn_by:
            with open(drawn_by[0] / name, "a") as fh:
                fh.write(f"{os.getpid()}\n")
        return _figure(i, name)

    return {name: functools.partial(make, i, name) for i, name in enumerate(("a", "b", "c"))}


@pytest.mark.parametrize("kind", ["figures", "makers"])
def test_figures_saved_by_forked_children_are_the_same_bytes(tmp_path, monkeypatch, kind):
    """One child per core (up to one per figure) takes figures from the queue, figure makers
    drawn where the figure is saved: the same bytes as saved in this process, every figure drawn
    once, by a child or (what is left when this process waits) by this process."""
    import os

    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    if not forkpool.fork_available():
        pytest.skip("fork: Linux only")
    make = _three_figures if kind == "figures" else _three_makers
    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: False)
    serial = figures_module.save_figures(make(), tmp_path / "serial")
    forks = []
    real_fork = os.fork

    def counting_fork():
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: True)
    monkeypatch.setattr(os, "fork", counting_fork)
    (tmp_path / "drawn").mkdir()
    figures = _three_figures() if kind == "figures" else _three_makers([tmp_path / "drawn"])
    saving = figures_module.start_saving_figures(figures, tmp_path / "parallel")
    parallel = saving.wait()
    assert len(forks) == min(3, len(os.sched_getaffinity(0))) and list(parallel) == ["a", "b", "c"]
    for name in serial:
        assert parallel[name].read_bytes() == serial[name].read_bytes(), name
    drawn = [p.read_text().split() for p in (tmp_path / "drawn").iterdir()]
    assert all(len(pids) == 1 for pids in drawn) and len(drawn) == (0 if kind == "figures" else 3)


@pytest.mark.parametrize("child", ["idle", "no fork"])
def test_figures_left_in_the_queue_are_saved_while_this_process_waits(tmp_path, monkeypatch, child):
    """Children that take nothing (here: processes that exit at once) or a fork that fails
    (OSError) leave every figure to this process's wait, in the study's order."""
    import os

    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    if not forkpool.fork_available():
        pytest.skip("fork: Linux only")
    real_fork = os.fork

    def idle_child():
        if child == "no fork":
            raise OSError(11, "Resource temporarily unavailable")
        pid = real_fork()
        if pid == 0:
            os._exit(0)
        return pid

    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: True)
    monkeypatch.setattr(os, "fork", idle_child)
    (tmp_path / "drawn").mkdir()
    paths = figures_module.start_saving_figures(_three_makers([tmp_path / "drawn"]), tmp_path / "figs").wait()
    assert list(paths) == ["a", "b", "c"] and all(p.is_file() for p in paths.values())
    assert {p.read_text() for p in (tmp_path / "drawn").iterdir()} == {f"{os.getpid()}\n"}


def test_figures_of_a_failing_child_are_saved_by_the_parent(tmp_path, monkeypatch):
    import os

    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    if not forkpool.fork_available():
        pytest.skip("fork: Linux only")
    parent, real_save = os.getpid(), figures_module.save_figure

    def dies_in_the_child(fig, path, dpi=130):
        if os.getpid() != parent:
            os._exit(3)
        return real_save(fig, path, dpi)

    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: True)
    monkeypatch.setattr(figures_module, "save_figure", dies_in_the_child)
    for kind, figures in (("figures", _three_figures()), ("makers", _three_makers())):
        paths = figures_module.save_figures(figures, tmp_path / kind)
        assert all(p.is_file() and p.stat().st_size > 0 for p in paths.values())


def test_a_figure_maker_that_raises_raises_in_this_process(tmp_path, monkeypatch):
    """A bug in a study's figure code fails in the child, then again here, with its own exception."""
    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    def broken():
        raise ValueError("no such column")

    for fork in (True, False):
        monkeypatch.setattr(forkpool, "safe_to_fork", lambda: fork and forkpool.fork_available())
        with pytest.raises(ValueError, match="no such column"):
            figures_module.save_figures({**_three_makers(), "broken": broken}, tmp_path / str(fork))


def _slow_maker():
    import time

    time.sleep(30)
    raise AssertionError("never drawn: cancelled")


def test_cancel_stops_the_figure_children_and_saves_nothing(tmp_path, monkeypatch):
    """A run that fails (or is interrupted) while its figures are drawn stops the children at
    once, reaps them and closes the pipes; nothing more is drawn."""
    import os
    import time

    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    if not forkpool.fork_available():
        pytest.skip("fork: Linux only")
    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: True)
    start = time.perf_counter()
    saving = figures_module.start_saving_figures({"a": _slow_maker, "b": _slow_maker}, tmp_path)
    children = list(saving._children)
    saving.cancel()
    assert time.perf_counter() - start < 10 and children and not list(tmp_path.iterdir())
    for pid in children:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped


def test_a_failure_while_the_tables_are_written_cancels_the_figures(table2_run, tmp_path, monkeypatch):
    """StudyResult.write: an error between starting the figures and waiting for them (here the
    study's tables) reaches the caller at once; the figure children are stopped and reaped."""
    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    result, _ = table2_run
    cancelled = []
    real_cancel = figures_module.FigureSaving.cancel

    def cancel(self):
        cancelled.append(list(self._children))
        real_cancel(self)

    def disk_full(tables, directory):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: forkpool.fork_available())
    monkeypatch.setattr(figures_module.FigureSaving, "cancel", cancel)
    monkeypatch.setattr(result.study, "write_tables", disk_full)
    with pytest.raises(OSError, match="No space left"):
        result.write(tmp_path / "out", records=False)
    assert len(cancelled) == 1


def test_a_figure_maker_that_raises_in_this_process_leaves_no_child_behind(tmp_path, monkeypatch):
    """The error of a figure drawn by this process's wait() comes after the children are reaped."""
    import os

    from simstudy.engine.backends import figures as figures_module, fork_pool as forkpool

    if not forkpool.fork_available():
        pytest.skip("fork: Linux only")
    real_fork, children = os.fork, []

    def idle_child():
        pid = real_fork()
        if pid == 0:
            os._exit(0)
        children.append(pid)
        return pid

    def broken():
        raise ValueError("no such column")

    monkeypatch.setattr(forkpool, "safe_to_fork", lambda: True)
    monkeypatch.setattr(os, "fork", idle_child)
    with pytest.raises(ValueError, match="no such column"):
        figures_module.save_figures({"broken": broken, **_three_makers()}, tmp_path)
    assert children
    for pid in children:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_draw_figure_names_what_it_got_instead_of_a_figure():
    from simstudy.report.figures import draw_figure

    fig = _figure(0, "a")
    assert draw_figure(fig) is fig and draw_figure(lambda: fig) is fig
    with pytest.raises(TypeError, match="got str"):
        draw_figure("rho_vs_n.png")
    with pytest.raises(TypeError, match="got function returning NoneType"):
        draw_figure(lambda: None)
