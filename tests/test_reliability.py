"""Nothing silently wrong (issue 12), tried as a user would: real processes on one run directory,
kills, a changed data file, foreign shards, a full disk, Ctrl-C, simstudy-report and
simstudy-collect on bad input, and a quiet terminal."""
import errno
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, make_letter_like

ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
#: A run of 300 chunks (about 20 s in one process), with a learner that can be slowed down
#: (flaky_learners.GatedTree) so that a test catches it running whatever the machine's load.
LONG = ["study.sizes=[20,40,80]", "study.replicates=1000", "runner.chunk_size=10", "runner.n_jobs=1",
        "runner.progress=false", "learner.estimator._target_=flaky_learners.GatedTree"]


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """Slow every fit of GatedTree down to ``seconds`` while the returned file exists."""
    path = tmp_path / "gate"
    path.write_text("0.02")
    monkeypatch.setitem(ENV, "SIMSTUDY_TEST_GATE", str(path))
    return path
SMALL = ["study.sizes=[20]", "study.replicates=40", "runner.chunk_size=10", "runner.n_jobs=1", "runner.progress=false"]


def _start(*args, cwd=ROOT):
    return subprocess.Popen([sys.executable, "-m", "simstudy.cli", *args], cwd=cwd, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _simstudy(*args, cwd=ROOT, timeout=600):
    return subprocess.run([sys.executable, "-m", "simstudy.cli", *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def _script(name, *args, timeout=300):
    """simstudy-report / simstudy-collect as their console scripts call them."""
    code = f"import sys; from simstudy.cli import {name}; sys.argv[0] = {name!r}; {name}()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def _one_paragraph(proc, prog="simstudy"):
    """Exit 2, one 'prog: error:' line on stderr, no traceback; returns the message."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), proc.stderr
    return lines[0]


def _wait_for_shards(proc, run_dir, count, timeout=300):
    shards = Path(run_dir) / "shards" / "replicates"
    deadline = time.time() + timeout
    while time.time() < deadline and len(list(shards.glob("*.json"))) < count:
        assert proc.poll() is None, "the run finished before it could be caught running: " + proc.stderr.read()
        time.sleep(0.05)
    return len(list(shards.glob("*.json")))


def _kill(proc):
    os.killpg(proc.pid, signal.SIGKILL)  # the run and its workers die at once, as on a lost node
    proc.wait()


def _snapshot(directory):
    """Every file under ``directory`` with its content (to show that nothing changed)."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(Path(directory).rglob("*")) if p.is_file()}


def _records(run_dir):
    frame = pd.read_parquet(Path(run_dir) / "replicates.parquet")
    return frame.drop(columns=[c for c in frame.columns if frame[c].map(lambda v: hasattr(v, "__len__")
                                                                        and not isinstance(v, str)).any()])


# ----------------------------------------------------------------------------- one directory, one process
@pytest.mark.slow
def test_a_second_process_is_refused_and_a_killed_runs_lock_is_taken_over(tmp_path, gate):
    """Issue 12, item 2: a second run on a busy directory (even with runner.overwrite=true and
    another seed) is refused at once and changes nothing; after a SIGKILL the stale lock is
    taken over and the run resumes to exactly the records of an uninterrupted run."""
    out, reference = tmp_path / "run", tmp_path / "reference"
    # 30 chunks: the resumed and the reference runs stay short; the gate keeps the first one running
    run = [a if not a.startswith("study.replicates=") else "study.replicates=100" for a in LONG]
    first = _start(*run, f"hydra.run.dir={out}")
    _wait_for_shards(first, out, 3)
    gate.write_text("0.2")                    # the first run crawls while the second ones are refused
    for extra in (["study.seed=99", "runner.overwrite=true"], []):
        before = _snapshot(out / "shards")
        second = _simstudy(*run, *extra, f"hydra.run.dir={out}")
        message = _one_paragraph(second)
        assert "is in use by another simstudy run" in message and f"pid {first.pid}" in message
        assert first.poll() is None, "the first run must still be running while the second is refused"
        assert set(before) <= set(_snapshot(out / "shards"))  # nothing of the first run deleted
    _kill(first)
    gate.unlink()  # full speed from here on
    assert (out / "run.lock").is_file() and not (out / "replicates.parquet").exists()
    resumed = _simstudy(*run, f"hydra.run.dir={out}")
    assert resumed.returncode == 0, resumed.stderr
    assert "stale" in resumed.stdout and f"pid {first.pid}" in resumed.stdout
    assert "found stale and taken over" in (out / "cli.log").read_text()  # logged before cli.log existed: kept
    assert not (out / "run.lock").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["resumed_chunks"] >= 3 and manifest["seed"] == 2006
    fresh = _simstudy(*run, "runner.chunk_size=1000", f"hydra.run.dir={reference}")
    assert fresh.returncode == 0, fresh.stderr
    pd.testing.assert_frame_equal(_records(reference), _records(out))


@pytest.mark.slow
def test_a_changed_data_file_is_refused_on_resume(tmp_path, gate):
    """Issue 12, item 3: interrupt a run on a data file, change the file, run again: refused
    (the data fingerprint is part of the run's identity), and the old shards are left alone."""
    X, y = make_letter_like(rows=2000)
    data = tmp_path / "letters.data"
    lines = [",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)]
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    args = ["population=letter", f"population.path={data}", *LONG]
    first = _start(*args, f"hydra.run.dir={out}")
    _wait_for_shards(first, out, 3)
    _kill(first)
    shards = _snapshot(out / "shards")
    lines[7] = lines[7].rsplit(",", 1)[0] + ",15" if not lines[7].endswith(",15") else lines[7][:-3] + ",14"
    data.write_text("\n".join(lines) + "\n")
    again = _simstudy(*args, f"hydra.run.dir={out}")
    message = _one_paragraph(again)
    assert "different configuration" in message and "population.data" in message
    assert "runner.overwrite=true" in message
    assert _snapshot(out / "shards") == shards and not (out / "replicates.parquet").exists()


def test_a_shard_written_under_another_identity_is_recomputed(tmp_path):
    """Issue 12, item 2: shards carry the identity hash of the run that wrote them; a shard of
    another run (here: another seed) put in place of this run's is reported and recomputed."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    assert _simstudy(*SMALL, f"hydra.run.dir={mine}").returncode == 0
    assert _simstudy(*SMALL, "study.seed=99", f"hydra.run.dir={other}").returncode == 0
    original = _records(mine)
    folder = mine / "shards" / "replicates"
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(p.name for p in (other / "shards" / "replicates").iterdir())  # same condition keys
    for name in names[:4]:  # the first two shards (parquet + sidecar) now come from the other run
        shutil.copy(other / "shards" / "replicates" / name, folder / name)
    (mine / "replicates.parquet").unlink()
    again = _simstudy(*SMALL, f"hydra.run.dir={mine}")
    assert again.returncode == 0, again.stderr
    log = (mine / "cli.log").read_text()
    assert log.count("written by another run configuration") == 2
    manifest = json.loads((mine / "manifest.json").read_text())
    assert (manifest["resumed_chunks"], manifest["computed_chunks"]) == (2, 2)
    pd.testing.assert_frame_equal(original, _records(mine))


# ----------------------------------------------------------------------------- foreign and refused directories
def test_a_foreign_directory_is_refused_and_left_untouched(tmp_path):
    """Issue 12, item 9: a directory holding files that are not a simstudy run is never written into."""
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "summary.csv").write_text("my,own\n1,2\n")
    (foreign / "notes.txt").write_text("keep me\n")
    before = _snapshot(foreign)
    message = _one_paragraph(_simstudy(*SMALL, f"hydra.run.dir={foreign}"))
    assert "not a simstudy run" in message and "notes.txt" in message
    assert _snapshot(foreign) == before and sorted(p.name for p in foreign.iterdir()) == ["notes.txt", "summary.csv"]


def test_a_refused_run_leaves_the_run_directory_as_it_was(tmp_path):
    """Issue 12, item 9: a run of another configuration is refused before it writes anything
    (no config.yaml, overrides.yaml, cli.log or .hydra/ of its own); a new directory of a
    refused run is not left behind either."""
    out = tmp_path / "run"
    assert _simstudy(*SMALL, f"hydra.run.dir={out}").returncode == 0
    before = _snapshot(out)
    message = _one_paragraph(_simstudy(*SMALL, "study.K=5", f"hydra.run.dir={out}"))
    assert "different configuration" in message and "study.K" in message
    assert _snapshot(out) == before and not (out / ".hydra").exists()
    for bad in (["study.seed=-1"], ["study.K=abc"], ["population=letter", "population.path=/nonexistent.csv"],
                ["+learner.estimator.foo=1"]):
        fresh = tmp_path / "new" / "deeper"
        proc = _simstudy(*SMALL, *bad, f"hydra.run.dir={fresh}")
        _one_paragraph(proc)
        assert not (tmp_path / "new").exists(), bad


def test_a_debugging_run_never_writes_over_a_run(tmp_path):
    out = tmp_path / "run"
    assert _simstudy(*SMALL, f"hydra.run.dir={out}").returncode == 0
    before = _snapshot(out)
    message = _one_paragraph(_simstudy(*SMALL, "runner.only_replicate=3", f"hydra.run.dir={out}"))
    assert "runner.only_replicate=3" in message and "hydra.run.dir=runs/debug" in message
    assert _snapshot(out) == before


# ----------------------------------------------------------------------------- full disk, Ctrl-C
def test_a_full_disk_gives_one_paragraph_and_keeps_the_finished_chunks(tmp_path):
    """Issue 12, item 6: errno 28 while writing the third shard (the Parquet writer fails as on a
    full disk): one paragraph, exit 2; the two finished shards are kept and the run resumes."""
    out = tmp_path / "run"
    code = ("import errno, sys, pandas\n"
            "from simstudy.cli import main\n"
            "write, calls = pandas.DataFrame.to_parquet, []\n"
            "def full(self, *a, **k):\n"
            "    calls.append(1)\n"
            "    if len(calls) > 2:\n"
            "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
            "    return write(self, *a, **k)\n"
            "pandas.DataFrame.to_parquet = full\n"
            "sys.argv = ['simstudy', *sys.argv[1:]]\n"
            "main()\n")
    proc = subprocess.run([sys.executable, "-c", code, *SMALL, f"hydra.run.dir={out}"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)
    message = _one_paragraph(proc)
    assert "no space left" in message and "errno 28" in message and "resumes" in message
    assert len(list((out / "shards" / "replicates").glob("*.json"))) == 2
    again = _simstudy(*SMALL, f"hydra.run.dir={out}")
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "manifest.json").read_text())["resumed_chunks"] == 2


def _tmpfs(path, size="64k"):
    path.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")


def test_a_really_full_disk_gives_one_paragraph(tmp_path):
    """The same on a real 64 kB file system (skipped where tmpfs cannot be mounted)."""
    disk = tmp_path / "disk"
    _tmpfs(disk)
    try:
        proc = _simstudy(*SMALL, "study.replicates=400", f"hydra.run.dir={disk / 'run'}")
        message = _one_paragraph(proc)
        assert "no space left on the device" in message and "errno 28" in message
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def _terminal(args, interrupt_after_shards, run_dir, timeout=300):
    """Run simstudy on a pseudo-terminal, press Ctrl-C (SIGINT to the whole process group, as a
    terminal does) once some chunks are done; returns (exit status, what the terminal showed)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: simstudy, with the pty as its controlling terminal (pty.fork calls setsid)
        os.chdir(ROOT)
        # as at a terminal, Ctrl-C interrupts: a test run started in the background (cmd &) would
        # otherwise hand its ignored SIGINT down to simstudy
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(sys.executable, [sys.executable, "-m", "simstudy.cli", *args], ENV)
    shards, output, sent = Path(run_dir) / "shards" / "replicates", b"", False
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not sent and len(list(shards.glob("*.json"))) >= interrupt_after_shards:
            os.killpg(os.getpgid(pid), signal.SIGINT)
            sent = True
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            output += data
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["default", "dask"])
def test_ctrl_c_shows_one_line_saying_how_to_resume(tmp_path, gate, runner):
    """Issue 12, item 6: Ctrl-C during a run with worker processes (loky, dask): one line, exit
    130; the workers print nothing (no KeyboardInterrupt tracebacks, no resource-tracker noise)."""
    if runner == "dask":
        pytest.importorskip("distributed")
    out = tmp_path / "run"
    status, shown = _terminal([*LONG, f"runner={runner}", "runner.n_jobs=2", "runner.progress=false",
                               f"hydra.run.dir={out}"], 4, out)
    lines = [line for line in shown.replace("\r", "\n").splitlines() if line.strip()]
    assert status == 130, shown
    assert len(lines) == 1, shown
    assert lines[0].startswith("simstudy: error: interrupted.") and "run the same command again to resume" in lines[0]
    assert not (out / "run.lock").exists()


# ----------------------------------------------------------------------------- messages
def test_on_error_raise_names_the_replicate_and_the_condition(tmp_path):
    """Issue 12, item 8 (run from tests/, where the misbehaving learners live)."""
    proc = _simstudy(*SMALL, "study.replicates=80", "learner.estimator._target_=flaky_learners.FlakyTree",
                     "runner.on_error=raise", f"hydra.run.dir={tmp_path / 'run'}", cwd=ROOT / "tests")
    message = _one_paragraph(proc)
    assert "cv_variance: replicate 0 of condition (n=20, K=10) failed with RuntimeError: flaky fit" in message


def test_an_overridden_estimator_is_named_by_its_class(tmp_path):
    """Issue 12, item 8: learner.estimator._target_ replaces the preset: outputs name the class, not 'tree'."""
    out = tmp_path / "run"
    proc = _simstudy(*SMALL, "learner.estimator._target_=sklearn.tree.ExtraTreeClassifier", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    assert "cv_variance (logistic, ExtraTreeClassifier, 40 replicates)" in proc.stdout
    assert set(pd.read_parquet(out / "replicates.parquet").learner) == {"ExtraTreeClassifier"}
    assert set(pd.read_csv(out / "summary.csv").learner) == {"ExtraTreeClassifier"}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("finished") / "run"
    proc = _simstudy(*SMALL, f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("args,expected", [
    (["{missing}"], "is not a directory"),
    (["{run}", "study.alpha=2.0"], "study.alpha=2.0 is invalid"),
    (["{run}", "study.alpha=0.0"], "study.alpha=0.0 is invalid"),
    (["{run}", "study.rho_hats=[0.0,1.0]"], "study.rho_hats=[0.0, 1.0] is invalid"),
    (["{run}", "study.alpha=abc"], "study.alpha='abc' is invalid"),
    (["{run}", "study.alpha=[1"], "study.alpha='[1' is not a value"),
    (["{run}", "alpha=0.1"], "write study.KEY=VALUE"),
    (["{run}", "study.sizes=[20]"], "study.sizes cannot be changed without recomputing"),
])
def test_report_refuses_bad_settings_and_leaves_the_run_alone(finished_run, tmp_path, args, expected):
    """Issue 12, item 4 and 6."""
    before = _snapshot(finished_run)
    args = [a.format(missing=tmp_path / "nowhere", run=finished_run) for a in args]
    proc = _script("report_main", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("simstudy-report: error: ")
    assert expected in proc.stderr
    assert _snapshot(finished_run) == before


@pytest.mark.parametrize("damage,expected", [
    ("missing", "replicates.parquet is missing"),
    ("corrupt", "the run's files are damaged"),
    ("config", "the run's files are damaged"),
])
def test_report_on_a_damaged_run_says_what_to_do(finished_run, tmp_path, damage, expected):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    if damage == "missing":
        (run / "replicates.parquet").unlink()
    elif damage == "corrupt":
        (run / "replicates.parquet").write_bytes((run / "replicates.parquet").read_bytes()[:100])
    else:
        (run / "config.yaml").write_text("study: [unclosed\n")
    message = _one_paragraph(_script("report_main", str(run)), "simstudy-report")
    assert expected in message
    if damage != "missing":  # the advice works: the same command rebuilds the files from the shards
        assert "same hydra.run.dir" in message
        again = _simstudy(*SMALL, f"hydra.run.dir={run}")
        assert again.returncode == 0, again.stderr
        assert json.loads((run / "manifest.json").read_text())["computed_chunks"] == 0
        assert _script("report_main", str(run)).returncode == 0


def test_report_writes_reaggregations_beside_the_run(finished_run, tmp_path):
    """Issue 12, item 4: another alpha never overwrites the run's tables."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    before = _snapshot(run)
    proc = _script("report_main", str(run), "study.alpha=0.01")
    assert proc.returncode == 0, proc.stderr
    after = _snapshot(run)
    assert {k: v for k, v in after.items() if not k.startswith("reaggregated/")} == before
    tests = pd.read_csv(run / "reaggregated" / "alpha=0.01" / "tests.csv")
    assert (tests.alpha == 0.01).all() and (pd.read_csv(run / "tests.csv").alpha == 0.05).all()
    manifest = json.loads((run / "reaggregated" / "alpha=0.01" / "manifest.json").read_text())
    assert manifest["reaggregated_with"] == {"study.alpha": 0.01}


def test_collect_refuses_garbage_and_groups_runs_by_study(finished_run, tmp_path):
    """Issue 12, item 10."""
    for target in (tmp_path / "nowhere", tmp_path / "empty"):
        (tmp_path / "empty").mkdir(exist_ok=True)
        assert "no finished runs" in _one_paragraph(_script("collect_main", str(target)), "simstudy-collect") \
            or "is not a directory" in _script("collect_main", str(target)).stderr
    garbage = tmp_path / "garbage" / "0"
    garbage.mkdir(parents=True)
    (garbage / "summary.csv").write_text("")
    (garbage / "config.yaml").write_text("study: {name: cv_variance}\n")
    message = _one_paragraph(_script("collect_main", str(tmp_path / "garbage")), "simstudy-collect")
    assert "summary.csv is unreadable" in message
    (garbage / "config.yaml").write_text(": [\n")
    assert "config.yaml is unreadable" in _one_paragraph(_script("collect_main", str(tmp_path / "garbage")),
                                                          "simstudy-collect")
    sweep = tmp_path / "sweep"
    shutil.copytree(finished_run, sweep / "0")
    fisher = _simstudy("study=nedelko_fisher", "study.sample_size=[20]", "study.bayes_error=[0.2]", "study.replicates=50",
                       "study.rhat_calibration_replicates=50",
                       "runner.n_jobs=1", "runner.progress=false", f"hydra.run.dir={sweep / '1'}")
    assert fisher.returncode == 0, fisher.stderr
    proc = _script("collect_main", str(sweep))
    assert proc.returncode == 0, proc.stderr
    assert "runs of 2 studies" in proc.stdout
    assert set(pd.read_csv(sweep / "cv_variance_collected_summary.csv").run_dir) == {str(sweep / "0")}
    assert set(pd.read_csv(sweep / "nedelko_fisher_collected_summary.csv").run_dir) == {str(sweep / "1")}
    assert not (sweep / "collected_summary.csv").exists()  # never one table of two studies


# ----------------------------------------------------------------------------- quiet by default
@pytest.mark.slow
def test_dask_runs_show_only_simstudys_lines(tmp_path):
    """Issue 15, item 8: dask.distributed's INFO lines go to cli.log, not to the terminal."""
    pytest.importorskip("distributed")
    out = tmp_path / "run"
    proc = _simstudy(*SMALL, "runner=dask", "runner.n_jobs=2", "runner.progress=false", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout + proc.stderr
    assert sum("distributed" in line for line in shown.splitlines()) == 0, shown
    assert all("[simstudy" in line for line in shown.splitlines() if line.startswith("[")), shown
    log = (out / "cli.log").read_text()
    assert "[distributed.scheduler][INFO]" in log


def test_third_party_info_goes_to_the_log_file_only(capsys):
    import logging

    from simstudy.cli.console import setup_logging

    setup_logging()
    logging.getLogger("matplotlib.font_manager").info("generated new fontManager")
    logging.getLogger("numba.core").info("compiling")
    logging.getLogger("distributed.scheduler").warning("a real warning")
    logging.getLogger("simstudy").info("our line")
    shown = capsys.readouterr().out
    assert "fontManager" not in shown and "compiling" not in shown
    assert "a real warning" in shown and "our line" in shown
    assert logging.getLogger("matplotlib").getEffectiveLevel() <= logging.INFO  # so cli.log gets them


# ----------------------------------------------------------------------------- workers
def test_workers_start_only_after_every_check_that_needs_no_data(tmp_path):
    """Issue 12, item 5: a bad field, a busy or foreign directory: refused with no worker started."""
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x.txt").write_text("x")
    code = ("import sys, simstudy.engine.runner as r\n"
            "marker, start = sys.argv[1], r.open_stream\n"
            "def spy(*a, **k):\n"
            "    open(marker, 'w').write('started')\n"
            "    return start(*a, **k)\n"
            "r.open_stream = spy\n"
            "from simstudy.cli import main\n"
            "sys.argv = ['simstudy', *sys.argv[2:]]\n"
            "main()\n")
    marker = tmp_path / "started"
    for bad in ("study.seed=-1", "runner.only_replicate=40", f"hydra.run.dir={foreign}", "population.kind=nope"):
        proc = subprocess.run([sys.executable, "-c", code, str(marker), *SMALL, "runner.n_jobs=2",
                               f"hydra.run.dir={tmp_path / 'run'}" if "hydra" not in bad else bad, bad],
                              cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
        _one_paragraph(proc)
        assert not marker.exists(), bad
    ok = subprocess.run([sys.executable, "-c", code, str(marker), *SMALL, "runner.n_jobs=2",
                         f"hydra.run.dir={tmp_path / 'ok'}"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0 and marker.exists(), ok.stderr  # the spy does see a good run


@pytest.mark.parametrize("backend", ["fork", "loky"])
def test_a_worker_killed_by_the_system_ends_the_run_with_one_paragraph(tmp_path, backend):
    """A worker process dies (SIGKILL, as the out-of-memory killer would): one paragraph naming
    the signal, an unfinished chunk and how to resume; exit 2; no traceback; no worker left."""
    run_dir = tmp_path / "run"
    proc = _simstudy("study.sizes=[20]", "study.replicates=40", "runner.chunk_size=10", "runner.progress=false",
                     "runner.n_jobs=2", f"runner.backend={backend}", "learner.estimator._target_=flaky_learners.DyingTree",
                     f"hydra.run.dir={run_dir}", timeout=300)
    message = _one_paragraph(proc)
    assert "a worker process died" in message and "run the same command again to resume" in message
    if backend == "fork":
        assert "(killed by signal 9, SIGKILL: often the system out of memory) before replicates" in message
    out = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True)
    assert out.stdout.strip() == "", out.stdout


def test_worker_count_is_capped_by_chunks_and_warns_above_the_cores(caplog):
    import logging

    from simstudy.engine import runner
    from simstudy.engine.backends import worker_count
    from simstudy.engine.config import RunnerConfig

    caplog.set_level(logging.INFO)
    cores = os.cpu_count() or 1
    assert worker_count(-1, 1) == 1 and worker_count(4 * cores, 3) == min(4 * cores, 3)
    report = runner.run_chunks(lambda c: pd.DataFrame({"replicate": list(range(c.start, c.stop))}), [4],
                               RunnerConfig(chunk_size=2, n_jobs=2 * cores + 1, backend="threading", progress=False))
    assert len(report.records) == 4
    assert "2 chunk(s) to compute, so 2 worker(s)" in caplog.text
    if cores < 2:
        assert "share the cores" in caplog.text
    caplog.clear()
    runner.run_chunks(lambda c: pd.DataFrame({"replicate": list(range(c.start, c.stop))}), [4 * cores + 4],
                      RunnerConfig(chunk_size=1, n_jobs=cores + 1, backend="threading", progress=False))
    assert f"runner.n_jobs={cores + 1}: {cores + 1} workers on the {cores} cores" in caplog.text


def test_disk_message_names_errno_28():
    from simstudy.cli.console import disk_message

    message = disk_message(OSError(errno.ENOSPC, "No space left on device"), "runs/x")
    assert "no space left" in message and "errno 28" in message and "\n" not in message
