"""Stopping runs by signal, the run lock's dead holders, fresh workers for the user's code, sweeps
kept apart by configuration and headlines that name degenerate replicates (issue 32, items 5 and 9)."""
from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy.engine.backends.signals import RunStopped, stop_on_signals
from simstudy.engine.backends.workers import user_modules
from simstudy.engine.lock_holder import dead_holder, holder_record
from simstudy.engine.rundir import LOCK_FILE, RunDirectory
from simstudy.errors import RunDirectoryError

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- signals
def test_sigterm_and_sighup_raise_run_stopped_and_handlers_come_back():
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with pytest.raises(RunStopped) as caught:
            with stop_on_signals():
                os.kill(os.getpid(), sig)
                time.sleep(1)
        assert caught.value.signum == sig and isinstance(caught.value, KeyboardInterrupt)
        assert signal.getsignal(sig) is signal.SIG_DFL


def test_an_ignored_sighup_stays_ignored():
    """``nohup`` ignores SIGHUP: a run started under it must not be stopped by one."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_on_signals():
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def _group(pgid: int) -> list[int]:
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            alive.append(int(stat.parent.name))
    return alive


SCRIPT = """
import simstudy
simstudy.run_study("cv_variance", population="logistic", learner={{"estimator": {{"_target_": "hostile_parts.GatedTree"}}}},
                   sizes=[20], replicates=40, chunk_size=5, n_jobs=2, backend={backend!r}, progress=False,
                   out={out!r})
"""


@pytest.mark.parametrize("backend", ["fork", pytest.param("loky", marks=pytest.mark.slow)])
def test_sigterm_to_a_script_inside_run_study_stops_its_workers(tmp_path, backend):
    """The Python road: SIGTERM to a script inside run_study ends it non-zero, says why, leaves no
    worker and a free lock; the same call then resumes."""
    out = tmp_path / "run"
    gate = tmp_path / "fit.gate"
    gate.write_text("0.02")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "HOSTILE_GATE": str(gate)}
    code = SCRIPT.format(backend=backend, out=str(out))
    with open(tmp_path / "err", "w") as err:
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list((out / "shards").rglob("*.json"))) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "err").read_text()[-1500:]
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (proc.poll() is None or _group(proc.pid)):
            time.sleep(0.1)
        assert proc.poll() not in (None, 0) and not _group(proc.pid)
        assert "SIGTERM" in (tmp_path / "err").read_text()
        assert not (out / LOCK_FILE).exists()
    finally:
        for pid in _group(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait(10)
    gate.unlink()
    resumed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-1500:]
    assert json.loads((out / "manifest.json").read_text())["resumed_chunks"] >= 2


# ----------------------------------------------------------------------------- the run lock
def _hold_lock(lock: Path) -> subprocess.Popen:
    """Another process that holds ``lock``'s flock (as an orphaned worker of a dead run would)."""
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_lock_held_for_a_dead_holder_is_taken_over(tmp_path, caplog):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lock = run_dir / LOCK_FILE
    lock.write_text(json.dumps({**holder_record(), "pid": _dead_pid()}))
    holder = _hold_lock(lock)
    try:
        directory = RunDirectory(run_dir)
        directory.lock()
        assert "is dead" in caplog.text and "taken over" in caplog.text
        assert json.loads(lock.read_text())["pid"] == os.getpid()
        with pytest.raises(RunDirectoryError, match="in use by another simstudy run"):  # now ours, and alive
            RunDirectory(run_dir).lock()
        directory.release()
    finally:
        holder.kill()
        holder.wait()


def test_a_live_holder_is_never_taken_over_and_a_reused_pid_is_seen(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lock = run_dir / LOCK_FILE
    holder = _hold_lock(lock) if lock.write_text("") is not None else None
    try:
        record = {**holder_record(), "pid": holder.pid}
        record["process_start"] = Path(f"/proc/{holder.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        lock.write_text(json.dumps(record))
        assert dead_holder(lock.read_text()) == ""
        with pytest.raises(RunDirectoryError, match=f"pid {holder.pid}"):
            RunDirectory(run_dir).lock()
        assert "another process" in dead_holder(json.dumps({**record, "process_start": "1"}))
        assert dead_holder(json.dumps({**record, "host": "elsewhere"})) == ""  # never judged from here
    finally:
        holder.kill()
        holder.wait()


def test_a_forked_child_does_not_keep_the_run_lock(tmp_path):
    directory = RunDirectory(tmp_path / "run").lock()
    ready, told = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: outlive the parent's hold on the lock
        os.write(told, b"x")
        time.sleep(3)
        os._exit(0)
    os.read(ready, 1)  # the child runs (its at-fork hooks are done)
    os.close(ready)
    os.close(told)
    try:
        os.close(directory._fd)  # the parent dies (its descriptor closes; the file stays)
        directory._fd = None
        fd = os.open(tmp_path / "run" / LOCK_FILE, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if the child kept it
        finally:
            os.close(fd)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


# ----------------------------------------------------------------------------- fresh workers for user code
def test_user_modules_are_found_in_the_parts(tmp_path, monkeypatch):
    (tmp_path / "my_cost.py").write_text("def cost(y, y_hat):\n    return 1.0 * (y != y_hat)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_cost
    from simstudy.engine.plan import build, make_runner, prepare

    def parts(loss):
        plan = prepare("cv_variance", "logistic", "tree", make_runner(None, n_jobs=2), sizes=[20], replicates=10,
                       loss=loss)
        return [phase.worker for phase in build(plan).phases("record")]

    assert user_modules(*parts("zero_one")) == set()
    assert user_modules(*parts(my_cost.cost)) == {"my_cost"}


# ----------------------------------------------------------------------------- headlines
def test_headline_warns_when_rejections_come_from_equal_fold_means():
    res = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[10], K=2, replicates=100,
                             n_jobs=1, progress=False)
    zero = int(res.summary["theta3_zero"].iloc[0])
    assert zero > 0
    assert f"{zero} of 100 replicates have all fold means equal" in res.headline()
    quiet = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[80], K=10,
                               replicates=40, n_jobs=1, progress=False)
    assert int(quiet.summary["theta3_zero"].iloc[0]) == 0 and "warning" not in quiet.headline()


def test_cv_clt_headline_warns_when_coverage_comes_from_zero_variance_replicates():
    """A tree at n=10 with K=2 and the 0-1 loss: many replicates have equal fold means (a point
    CV t interval, which misses R_n); the headline names them and the coverage without them."""
    res = simstudy.run_study("cv_clt", population="logistic", sizes=[10], K=2, replicates=40, n_jobs=1,
                             progress=False, learners={"tree": {"_target_": "sklearn.tree.DecisionTreeClassifier"}},
                             comparisons=[["tree", "tree"]], nested_cv_replicates=0)
    row = res.summary.set_index(["subject", "procedure"]).loc[("tree", "cv_t")]
    zero, misses = int(row["zero_variance"]), 40 - int(row["coverage_count"])
    assert 0 < zero - int(row["zero_variance_covered"]) <= misses
    assert f"n=10, tree, cv_t: {zero} of 40 replicates have a zero variance estimate" in res.headline()
    warned = [line for line in res.headline().splitlines() if "warning" in line]
    quiet = res.summary[(res.summary["subject"] == "tree") & (res.summary["zero_variance"] == 0)]["procedure"]
    assert not [p for p in quiet if any(f"tree, {p}:" in line for line in warned)]


def test_cv_clt_size_warning_counts_rejections_from_zero_variance_replicates():
    """The size rule by hand: 3 of 8 rejections from replicates with a zero standard error warn
    (size without them 5 / 97); 0 of 8 do not."""
    from simstudy.studies.cv_clt.study import degenerate_warnings

    tests = pd.DataFrame({"n": [50, 50], "comparison": ["a vs b", "a vs c"], "test": ["cv_t", "cv_t"],
                          "h0_replicates": [100, 100], "size_count": [8, 8], "zero_variance_h0": [3, 0],
                          "zero_variance_size": [3, 0]})
    summary = pd.DataFrame(columns=["zero_variance"])
    lines = degenerate_warnings(summary, tests)
    assert len(lines) == 1 and "a vs b, cv_t: 3 of 100 H0 replicates" in lines[0]
    assert "3 of the 8 rejections (size without them: 5.2%)" in lines[0]


# ----------------------------------------------------------------------------- sweeps
def _collect(sweep: Path):
    from simstudy.sweeps import collect

    return collect(sweep)


def _fake_overrides(run_dir: Path, overrides: list[str]) -> None:
    import yaml

    (run_dir / "overrides.yaml").write_text(yaml.safe_dump(overrides))


SMALL = dict(population="logistic", learner="tree", replicates=20, n_jobs=1, progress=False)


@pytest.fixture(scope="module")
def sweep_runs(tmp_path_factory):
    """Runs of a K x sizes sweep (sizes swept one per run), and one more with another seed."""
    base = tmp_path_factory.mktemp("sweep")
    for i, (K, n) in enumerate([(2, 40), (2, 20), (5, 20), (5, 40)]):
        simstudy.run_study("cv_variance", out=base / str(i), sizes=[n], K=K, **SMALL)
        _fake_overrides(base / str(i), [f"study.K={K}", f"study.sizes=[{n}]", "study.replicates=20"])
    return base


def test_collect_pools_n_across_runs_one_series_per_swept_value(sweep_runs):
    result = _collect(sweep_runs)
    assert result.parameters == ["study.K", "study.sizes"]  # study.replicates is the same in every run
    assert any("Fixed in every run: study.replicates=20" in line for line in result.headlines)
    from simstudy.studies.cv_variance.figures import sweep_figures

    figure = sweep_figures(result.summary, result.tests, result.parameters)["rho_vs_n"]
    lines = [line for line in figure.axes[0].get_lines() if line.get_linestyle() not in ("None", "")
             and len(line.get_xdata()) > 1]
    assert len(lines) == 2  # K=2 and K=5, each over n = 20, 40 in order
    for line in lines:
        assert list(np.asarray(line.get_xdata(), dtype=float)) == [20.0, 40.0]


def test_collect_keeps_runs_of_another_configuration_apart_and_names_unfinished(sweep_runs, tmp_path):
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(sweep_runs, sweep)
    simstudy.run_study("cv_variance", out=sweep / "4", sizes=[40], K=5, seed=9, **SMALL)
    _fake_overrides(sweep / "4", ["study.K=5", "study.sizes=[40]", "study.replicates=20"])
    shutil.copytree(sweep / "0", sweep / "5")
    (sweep / "5" / "summary.csv").unlink()
    result = _collect(sweep)
    assert result.parameters == ["study.K", "study.sizes", "study.seed"]
    assert any("differ in study.seed" in line for line in result.headlines)
    assert len(result.summary["study.seed"].unique()) == 2 and 9 in set(result.summary["study.seed"])
    assert any(str(sweep / "5") in line and "unfinished" in line for line in result.left_out)
    assert str(sweep / "5") in (sweep / "collected_report.html").read_text()


def _fail_on_call(original, failing_call: int, calls: list):
    """``DataFrame.to_csv`` that, on its ``failing_call``-th call, writes half of the CSV and raises."""
    def writer(frame, target, *args, **kwargs):
        calls.append(target)
        if len(calls) != failing_call:
            return original(frame, target, *args, **kwargs)
        text = original(frame, None, index=False)
        Path(target).write_text(text[: len(text) // 2])
        raise OSError(28, "No space left on device (simulated)")
    return writer


@pytest.mark.parametrize("writer, failing_call", [("to_csv", 2), ("write_text", 1), ("write_text", 3)])
def test_collect_interrupted_while_writing_leaves_every_file_as_it_was(sweep_runs, tmp_path, monkeypatch,
                                                                       writer, failing_call):
    """A collect that fails mid-way through writing a file (disk full) leaves each collected file
    as it was or complete, never half-written, and no temporary file behind: every file goes
    through simstudy.files."""
    import shutil

    import pandas as pd

    sweep = tmp_path / "sweep"
    shutil.copytree(sweep_runs, sweep)
    _collect(sweep)
    collected = sorted(p for p in sweep.glob("collected*") if p.is_file())
    complete = {p: p.read_bytes() for p in collected}
    for p in collected:  # a second collect writes the same bytes: mark the old ones
        p.write_bytes(complete[p] + b"\n")
    before = {p: p.read_bytes() for p in collected}
    calls: list = []
    if writer == "to_csv":
        monkeypatch.setattr(pd.DataFrame, "to_csv", _fail_on_call(pd.DataFrame.to_csv, failing_call, calls))
    else:
        def write_text(self, data, *args, original=Path.write_text, **kwargs):
            calls.append(self)
            if len(calls) != failing_call:
                return original(self, data, *args, **kwargs)
            self.write_bytes(data[: len(data) // 2].encode())
            raise OSError(28, "No space left on device (simulated)")
        monkeypatch.setattr(Path, "write_text", write_text)
    with pytest.raises(OSError, match="simulated"):
        _collect(sweep)
    assert len(calls) == failing_call
    monkeypatch.undo()
    half_written = [p.name for p in collected if p.read_bytes() not in (before[p], complete[p])]
    assert not half_written, f"half-written when the write of {calls[-1]} failed"
    assert any(p.read_bytes() == before[p] for p in collected)
    assert not [p for p in sweep.glob("collected*") if ".tmp" in p.name]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _assert_all_end(pids: list[int], seconds: float, what: str) -> None:
    """Every process of ``pids`` ends within ``seconds`` (those left are killed, and named)."""
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{what}: alive {seconds} s after their parent was killed: {left}"


def test_loky_workers_die_with_a_parent_killed_before_their_first_task(tmp_path):
    """SIGKILL of the main process while its loky workers are still reading their first task (a
    task that takes a minute to unpickle): no task has run, and every worker ends within 10 s."""
    code = textwrap.dedent("""
        import os, signal, threading, time
        from simstudy.engine.backends.joblib_pool import joblib_outputs
        from simstudy.engine.backends.workers import _reusable_executor

        def slow_to_read():
            open(os.path.join(READING, str(os.getpid())), "w").close()  # this worker reads its task now
            time.sleep(60)  # in the worker, while it reads the task
            return lambda chunk: chunk

        class SlowToRead:
            def __reduce__(self):
                return slow_to_read, ()

        outputs = joblib_outputs(SlowToRead(), [1, 2], 2, "loky", "raise")
        threading.Thread(target=lambda: next(outputs), daemon=True).start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            executor = _reusable_executor()
            if executor is not None and len(executor._processes) == 2:
                break
            time.sleep(0.05)
        while len(os.listdir(READING)) < 2 and time.monotonic() < deadline:  # both workers read their task
            time.sleep(0.05)
        print(" ".join(map(str, sorted(_reusable_executor()._processes))), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    out, err, reading = tmp_path / "stdout", tmp_path / "stderr", tmp_path / "reading"
    reading.mkdir()
    code = f"READING = {str(reading)!r}\n" + code
    with open(out, "w") as stdout, open(err, "w") as stderr:  # files, not pipes: a live worker would hold a pipe open
        subprocess.run([sys.executable, "-c", code], stdout=stdout, stderr=stderr, timeout=120)
    pids = [int(p) for p in out.read_text().split()]
    assert len(pids) == 2, err.read_text()[-1500:]
    assert sorted(int(p.name) for p in reading.iterdir()) == sorted(pids), "a worker was not reading its task"
    _assert_all_end(pids, 10, "loky workers whose parent was killed before their first task")


@pytest.mark.parametrize("backend", ["fork", "loky"])
def test_workers_die_with_a_killed_parent(backend):
    """SIGKILL of the main process (nothing of it runs): its workers end within seconds."""
    code = textwrap.dedent(f"""
        import os, signal
        from simstudy.engine.backends.fork_pool import get_pool
        from simstudy.engine.backends.tasks import run_task
        from joblib import Parallel, delayed
        if {backend!r} == "fork":
            pool = get_pool(1)
            pool.submit(run_task, lambda _: os.getpid(), None).result()
            pids = pool.pids()
        else:
            pids = Parallel(n_jobs=2, backend="loky")(delayed(run_task)(lambda _: os.getpid(), None) for _ in range(4))
            pids = sorted({{out.records for out in pids}})
        print(" ".join(map(str, pids)), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    pids = [int(p) for p in proc.stdout.split()]
    assert pids, proc.stderr[-1500:]
    _assert_all_end(pids, 5, "workers whose parent was killed")


def test_a_run_started_by_a_process_that_imported_simstudy_keeps_its_ctrl_c():
    """A command started from a notebook or script that imported simstudy inherits its
    SIMSTUDY_MAIN_PID; the run's own process must still count as the main process: its in-process
    tasks leave Ctrl-C and SIGHUP to it and start no parent watch."""
    code = textwrap.dedent("""
        import signal, threading, simstudy
        simstudy.run_study("cv_variance", population="gaussian_folds", sizes=[20], replicates=4, progress=False)
        print(signal.getsignal(signal.SIGINT) is signal.default_int_handler,
              signal.getsignal(signal.SIGHUP) is signal.SIG_DFL,
              sum(t.name.startswith("simstudy") for t in threading.enumerate()))
    """)
    env = {**os.environ, "SIMSTUDY_MAIN_PID": str(os.getpid())}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "0"], out.stdout
