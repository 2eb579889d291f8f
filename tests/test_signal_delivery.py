"""A stop signal that arrives while a worker is forked stops the run, and leaves no lock held.

Python runs the at-fork hooks after a fork; logging's releases the logging module's lock there. A
SIGTERM whose RunStopped was raised inside that hook was dropped ("Exception ignored") with the lock
still held: the run went on, and the report's prewarm thread then waited for the lock for ever (a
command that never ended). Inside :func:`~simstudy.engine.backends.signals.forking` the stop is
raised when the fork is over; a stop dropped anywhere else is raised again by
:func:`~simstudy.engine.backends.signals.raise_if_stopped` from the run's waiting loops."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from simstudy.engine.backends.signals import (RunStopped, raise_if_stopped, stop_on_signals, stop_raised_for,
                                              stop_status, stopped_exit_code)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and POSIX signals")

_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from simstudy.engine.backends.signals import RunStopped, raise_if_stopped, stop_on_signals

    def send_and_spin():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100000):      # the handler runs at one of these bytecodes, inside the hook
            pass

    os.register_at_fork(after_in_parent=send_and_spin)
    with stop_on_signals():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("fork returned", flush=True)
        try:
            raise_if_stopped()
        except RunStopped as exc:
            print("raised", exc.name, flush=True)
            raise_if_stopped()           # once only
            print("not twice", flush=True)
    """)


def test_a_stop_signal_dropped_in_an_at_fork_hook_is_raised_again_without_a_traceback():
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["fork returned", "raised SIGTERM", "not twice"]
    assert "Exception ignored" not in proc.stderr and "RunStopped" not in proc.stderr, proc.stderr


def test_raise_if_stopped_is_silent_without_a_signal_and_the_block_restores_the_hook():
    hook = sys.unraisablehook
    with stop_on_signals():
        raise_if_stopped()
        assert sys.unraisablehook is not hook
    assert sys.unraisablehook is hook
    raise_if_stopped()
    assert issubclass(RunStopped, KeyboardInterrupt)


_FORKING_SCRIPT = textwrap.dedent("""
    import os, signal
    from simstudy.engine.backends.signals import RunStopped, forking, stop_on_signals

    with stop_on_signals():
        try:
            with forking():
                pid = os.fork()
                if pid == 0:
                    os._exit(7)
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(100000):      # the handler runs at one of these bytecodes: it must not raise
                    pass
                print("not raised inside the block", flush=True)
            print("not raised at all", flush=True)
        except RunStopped as exc:
            print("raised after the fork", exc.name, flush=True)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status), flush=True)
    """)


def test_a_stop_signal_while_forking_is_raised_when_the_fork_is_over_and_only_in_the_parent():
    proc = subprocess.run([sys.executable, "-c", _FORKING_SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["not raised inside the block", "raised after the fork SIGTERM", "child 7"]
    assert "Exception ignored" not in proc.stderr, proc.stderr


_INTERRUPT_SCRIPT = textwrap.dedent("""
    import os, signal
    from simstudy.engine.backends.signals import forking

    try:
        with forking():
            pid = os.fork()
            if pid == 0:
                os._exit(7)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100000):
                pass
            print("not raised inside the block", flush=True)
    except KeyboardInterrupt:
        print("interrupted after the fork", flush=True)
    print("handler restored", signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
    os.waitpid(pid, 0)
    """)


def test_ctrl_c_while_forking_is_raised_when_the_fork_is_over():
    proc = subprocess.run([sys.executable, "-c", _INTERRUPT_SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["not raised inside the block", "interrupted after the fork",
                                           "handler restored True"]


_CHILD_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from simstudy.engine.backends.signals import _BLOCKED_WHILE_FORKING, RunStopped, forking, stop_on_signals

    SIGNAL = getattr(signal, sys.argv[1])
    # the signal reaches the child while it is being forked (a Ctrl-C or SIGTERM to the whole group)
    os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), SIGNAL))
    parent = os.getpid()
    with stop_on_signals():
        try:
            with forking():
                pid = os.fork()
        except KeyboardInterrupt as exc:  # RunStopped is one
            if os.getpid() != parent:
                os._exit(3 if isinstance(exc, RunStopped) else 4)
            raise
        if pid == 0:
            os._exit(0)  # the child lived on: the signal was lost
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status), flush=True)
        print("blocked after the block", sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []) & _BLOCKED_WHILE_FORKING))
    """)


@pytest.mark.parametrize("name, status", [("SIGTERM", 3), ("SIGHUP", 3), ("SIGINT", 4)])
def test_a_signal_that_reaches_a_child_while_it_is_forked_stops_that_child(name, status):
    """The child raises the signal once it leaves the block (the interpreter would otherwise clear it
    or drop its exception in the at-fork hook, and the child would live on), the parent does not,
    and neither thread keeps the signals blocked."""
    proc = subprocess.run([sys.executable, "-c", _CHILD_SCRIPT, name], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == [f"child {status}", "blocked after the block []"], proc.stdout


_STORM_SCRIPT = textwrap.dedent("""
    import os, signal, subprocess, sys, threading, time
    from simstudy.engine.backends import signals

    # a thread whose mask is open (as OpenBLAS's in a run) takes the signals the main thread blocks;
    # the main thread then runs the handler at any of its next bytecodes, also in forking()'s clean-up
    threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
    sender = subprocess.Popen([sys.executable, "-c", "import os, signal, time\\n"
                               f"while True:\\n    os.kill({os.getpid()}, signal.SIGTERM)\\n    time.sleep(0.00003)"])
    stopped = left_blocked = 0
    end = time.monotonic() + float(sys.argv[1])
    while True:
        try:
            if time.monotonic() > end:
                break
            try:
                signal.signal(signal.SIGTERM, signals._raise_stopped)
                signals._received = None
                try:
                    with signals.forking():
                        pass
                except KeyboardInterrupt:
                    stopped += 1
                    if signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, []):
                        left_blocked += 1
                        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
            finally:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)  # _raise_stopped does it too, before raising
        except (KeyboardInterrupt, OSError):
            pass
    sender.kill()
    print(stopped, left_blocked, flush=True)
    """)


def test_a_storm_of_stop_signals_never_leaves_the_forking_thread_blocked():
    """SIGTERM every ~30 us for 3 s while forking() blocks are entered and left: wherever the handler
    raises (entering the block, restoring Ctrl-C's handler, restoring the mask), the thread's mask is
    the one it had before the block (a version that unblocked after the other clean-up left it
    blocked about 3 times a second)."""
    proc = subprocess.run([sys.executable, "-c", _STORM_SCRIPT, "3"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    stopped, left_blocked = map(int, proc.stdout.split())
    assert stopped > 100, proc.stdout  # the storm reached the blocks
    assert left_blocked == 0, f"{left_blocked} of {stopped} stops left the signals blocked"


_POOL_SCRIPT = textwrap.dedent("""
    import os, signal, time
    from simstudy.engine.backends.fork_pool import ForkPool
    from simstudy.engine.backends.signals import stop_on_signals

    sent = []

    def ctrl_c_once():
        if not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)

    os.register_at_fork(before=ctrl_c_once)   # Ctrl-C while the pool forks its workers
    with stop_on_signals():
        try:
            pool = ForkPool(2)
            print("went on", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    time.sleep(0.5)
    print("children", len([p for p in os.listdir("/proc") if p.isdigit()
                            and open(f"/proc/{p}/stat").read().split(") ")[1].split()[1] == str(os.getpid())
                            and open(f"/proc/{p}/stat").read().split(") ")[1].split()[0] not in "ZX"]), flush=True)
    """)


def test_ctrl_c_while_the_pool_forks_its_workers_stops_and_kills_them():
    proc = subprocess.run([sys.executable, "-c", _POOL_SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["interrupted", "children 0"], proc.stdout


_FIGURES_SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from matplotlib.figure import Figure
    from simstudy.engine.backends import figures
    from simstudy.engine.backends.signals import stop_on_signals

    SIGNAL, folder, own_handler = getattr(signal, sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    parent_seconds = float(sys.argv[4])
    parent = os.getpid()

    def maker():
        if os.getpid() != parent:  # a child: the signal reaches it alone (sent to the group while the parent forked)
            os.kill(os.getpid(), SIGNAL)
            time.sleep(5)
        else:
            time.sleep(parent_seconds)  # the parent's own figure
        return Figure()

    if own_handler == "own":
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    forked = []
    os.register_at_fork(after_in_parent=lambda: forked.append(1))
    start = time.monotonic()
    with stop_on_signals():
        try:
            figures.start_saving_figures({f"f{i}": maker for i in range(6)}, folder).wait()
            print("finished", flush=True)
        except KeyboardInterrupt as exc:
            print("stopped", type(exc).__name__, getattr(exc, "name", "SIGINT"), flush=True)
    handler = signal.getsignal(signal.SIGCHLD)
    print("children", len(forked), "handler", "default" if handler is signal.SIG_DFL else "own" if callable(handler) else handler)
    print("seconds", time.monotonic() - start)
    print("saved", len(list(folder.glob("*.png"))))
    """)


@pytest.mark.parametrize("name, own_handler, parent_seconds", [
    ("SIGINT", "none", 60), ("SIGTERM", "none", 60), ("SIGINT", "own", 1)])
def test_a_figure_child_stopped_alone_stops_the_parent(tmp_path, name, own_handler, parent_seconds):
    """Ctrl-C (or SIGTERM) sent to the whole group while the parent forks a figure process may reach
    only the child (the forking thread blocks it); the parent then stops as if it had been
    signalled, at once (SIGCHLD interrupts a figure it draws itself), or, where the program handles
    SIGCHLD itself, before it draws its next figure. It never draws the children's figures and ends
    with the status of a stopped run."""
    proc = subprocess.run([sys.executable, "-c", _FIGURES_SCRIPT, name, str(tmp_path), own_handler,
                           str(parent_seconds)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split("\n")
    stopped = {"SIGINT": "stopped KeyboardInterrupt SIGINT", "SIGTERM": "stopped RunStopped SIGTERM"}[name]
    children = min(6, len(os.sched_getaffinity(0)))  # one per core, up to one per figure
    assert lines[:2] == [stopped, f"children {children} handler {'own' if own_handler == 'own' else 'default'}"], \
        proc.stdout
    assert float(lines[2].split()[1]) < 10, proc.stdout  # not the parent's 60 s figure, nor the children's
    assert int(lines[3].split()[1]) <= 1, proc.stdout    # at most the parent's own (1 s) figure


@pytest.mark.parametrize("status, stopped", [
    (130 << 8, signal.SIGINT), (143 << 8, signal.SIGTERM), (129 << 8, signal.SIGHUP),  # exited 128 + signal
    (signal.SIGINT, signal.SIGINT), (signal.SIGTERM, signal.SIGTERM),                   # killed by the signal
    (0, None), (1 << 8, None), (137 << 8, None), (signal.SIGKILL, None), (signal.SIGSEGV, None)])
def test_the_stop_of_a_child_is_read_from_its_status(status, stopped):
    """Exit 0, a failure (1), SIGKILL (killed, or exit 137 from a shell) and a crash are not stops."""
    assert stop_status(status) == stopped


def test_a_stopped_child_exits_as_a_shell_reports_the_signal_and_the_parent_raises_the_same_stop():
    assert stopped_exit_code(KeyboardInterrupt()) == 130
    assert stopped_exit_code(RunStopped(signal.SIGTERM)) == 143 and stopped_exit_code(RunStopped(signal.SIGHUP)) == 129
    assert type(stop_raised_for(signal.SIGINT)) is KeyboardInterrupt
    assert stop_raised_for(signal.SIGTERM).signum == signal.SIGTERM
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # the round trip the figure processes make
        exc = stop_raised_for(signum)
        assert stop_status(stopped_exit_code(exc) << 8) == signum
