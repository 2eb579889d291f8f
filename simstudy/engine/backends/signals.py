"""Stopping a run on SIGTERM and SIGHUP as on Ctrl-C, and worker processes that die with their parent.

Ctrl-C raises :class:`KeyboardInterrupt` in the main thread, and the run's clean-up (workers
killed, figure processes stopped, the run directory's lock released, the finished chunks kept
for a resume) runs on the way out. ``kill PID`` (SIGTERM) and a closed terminal (SIGHUP) end a
Python process at once by default, skipping all of that: the workers would live on.
:func:`stop_on_signals` makes both raise :class:`RunStopped` (a :class:`KeyboardInterrupt`)
in the main thread for the length of a run, so every road out of a run is the Ctrl-C road. A
handler the program installed itself, or an ignored signal (``nohup`` ignores SIGHUP), is left
as it is.

SIGKILL cannot be caught: :func:`die_with_parent` asks the kernel (Linux ``PR_SET_PDEATHSIG``)
to kill a forked worker when its parent dies, and :func:`watch_parent` does the same for
workers started by other processes' threads (loky) with a thread that checks the parent's pid.
"""
from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
import time
from typing import Iterator

__all__ = ["RunStopped", "die_with_parent", "forking", "raise_if_stopped", "stop_on_signals", "stop_raised_for",
           "stop_status", "stopped_exit_code", "unblock_stop_signals", "watch_parent"]

log = logging.getLogger("simstudy")

#: The signals that stop a run as Ctrl-C does.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1


class RunStopped(KeyboardInterrupt):
    """The run was stopped by a signal (SIGTERM, SIGHUP); handled as Ctrl-C.

    Attributes
    ----------
    signum : int
    """

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


#: The stop signal received in the current :func:`stop_on_signals` block (None: none yet). Python
#: drops an exception raised inside an at-fork hook (it prints "Exception ignored in ..." and goes
#: on): a SIGTERM arriving while a worker is forked would otherwise be lost, and the run would go
#: on. The run's waiting loops call :func:`raise_if_stopped`, which raises it again.
_received: int | None = None
#: The pid of a process inside a :func:`forking` block (None: none).
_forking_pid: int | None = None
#: A Ctrl-C held by a :func:`forking` block (raised as KeyboardInterrupt when the block ends).
_interrupted = False


def _raise_stopped(signum: int, frame) -> None:
    global _received
    # a second signal while the run cleans up must not interrupt the clean-up: ignore it
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    _received = signum
    if _forking_pid == os.getpid():
        # maybe inside an at-fork hook: logging's releases the logging module's lock there, and an
        # exception raised in a hook is dropped with that lock still held, so that the next thread to
        # log waits for ever; forking() raises it once the fork is over
        return
    raise RunStopped(signum)


#: The signals :func:`forking` blocks in the thread that forks: Ctrl-C, the stop signals, and
#: SIGCHLD, whose handler (the figure processes') may raise too.
_BLOCKED_WHILE_FORKING = frozenset({signal.SIGINT, signal.SIGCHLD, *STOP_SIGNALS})
try:
    # the C function itself: the module's wrapper is a Python function, and a handler run as it is
    # entered or left (a signal taken by another thread) could raise between the mask's change and
    # the code that records or undoes it
    from _signal import pthread_sigmask as _set_sigmask
except ImportError:  # pragma: no cover - another interpreter or a platform without it
    _set_sigmask = getattr(signal, "pthread_sigmask", None)


def unblock_stop_signals() -> None:
    """Deliver the signals a :func:`forking` block held back from this process (a forked worker
    that never leaves the block calls it once its own handlers are set); a no-op elsewhere."""
    if _set_sigmask is not None:
        _set_sigmask(signal.SIG_UNBLOCK, _BLOCKED_WHILE_FORKING)


@contextlib.contextmanager
def forking() -> Iterator[None]:
    """Around a fork: a stop signal (SIGTERM, SIGHUP) or Ctrl-C arriving meanwhile is raised when
    the block ends, by the handler then in place (:class:`RunStopped`, :class:`KeyboardInterrupt`
    by default), in the process it was sent to, never inside the interpreter's at-fork hooks.

    The forking thread blocks these signals for the block's length, and the child is born with
    them blocked: the interpreter clears a signal that arrives in a new child before its at-fork
    hooks have run, and a handler run inside a hook has its exception dropped, so that a child
    signalled while being forked (Ctrl-C to the whole group) would otherwise live on. As the
    block ends, both processes restore the thread's mask from before the block, with the run's
    handlers back in place, and a pending signal is raised there. A child that leaves the block
    does not raise its parent's stop; a child that never leaves it (a pool's worker) calls
    :func:`unblock_stop_signals` once its own handlers are set. A thread started inside the block
    keeps the signals blocked (the main thread runs every Python handler anyway). Another thread
    of the parent may still take a signal meanwhile; the handler, run by the main thread, then
    holds it until the block ends."""
    global _forking_pid, _received, _interrupted
    entered = os.getpid()
    # Ctrl-C's KeyboardInterrupt is dropped in an at-fork hook the same way: held over the fork too
    held = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    previous = None
    try:
        _forking_pid, _interrupted = entered, False
        if held:
            signal.signal(signal.SIGINT, _hold_interrupt)
        if _set_sigmask is not None:
            previous = _set_sigmask(signal.SIG_BLOCK, _BLOCKED_WHILE_FORKING)
        yield
    finally:
        try:
            _forking_pid = None
            if held:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            if os.getpid() != entered:
                _received, _interrupted = None, False
        finally:
            # never left blocked, even when a handler run by another thread's signal raises above;
            # a signal sent meanwhile is raised here, by the handler just restored
            if previous is not None:
                _set_sigmask(signal.SIG_SETMASK, previous)
    if os.getpid() != entered:
        return
    if _interrupted:
        _interrupted = False
        raise KeyboardInterrupt
    raise_if_stopped()


def _hold_interrupt(signum: int, frame) -> None:
    global _interrupted
    _interrupted = True


def stop_status(status: int) -> int | None:
    """The stop signal (SIGINT, SIGTERM, SIGHUP) that ended a child of exit ``status`` (as
    :func:`os.waitpid` gives it), or None. A child stops with status 128 + the signal's number
    (:func:`stopped_exit_code`), or is killed by the signal itself."""
    if os.WIFSIGNALED(status):
        code = os.WTERMSIG(status)
    elif os.WIFEXITED(status):
        code = os.WEXITSTATUS(status) - 128
    else:
        return None
    return code if code in (signal.SIGINT, *STOP_SIGNALS) else None


def stopped_exit_code(exc: BaseException) -> int:
    """The exit status of a child stopped by ``exc`` (:class:`KeyboardInterrupt` or
    :class:`RunStopped`): 128 + the signal's number, as a shell reports a process the signal
    killed (130 for Ctrl-C)."""
    return 128 + (exc.signum if isinstance(exc, RunStopped) else signal.SIGINT)


def stop_raised_for(signum: int) -> KeyboardInterrupt:
    """The exception this process raises for the stop signal ``signum``: :class:`KeyboardInterrupt`
    for Ctrl-C, :class:`RunStopped` for SIGTERM and SIGHUP."""
    return KeyboardInterrupt() if signum == signal.SIGINT else RunStopped(signum)


def raise_if_stopped() -> None:
    """Raise :class:`RunStopped` if a stop signal arrived in this block and its exception was dropped.

    Called by the loops that wait for a run's chunks; once the exception propagates they are not
    reached again, so a signal is never raised twice on the way out."""
    global _received
    if _received is not None:
        signum, _received = _received, None
        raise RunStopped(signum)


def _quiet_dropped_stop(hook):
    """An ``sys.unraisablehook`` that says nothing of a dropped :class:`RunStopped` (it is raised
    again by :func:`raise_if_stopped`) and passes everything else to ``hook``."""
    def unraisable(info) -> None:
        if not isinstance(info.exc_value, RunStopped):
            hook(info)
    return unraisable


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`RunStopped` in the main thread (only
    where their handler is the default one); the previous handlers are restored on the way out.
    Off the main thread (where no handler can be installed) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _received
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    hook, _received = sys.unraisablehook, None
    sys.unraisablehook = _quiet_dropped_stop(hook)
    for sig, handler in previous.items():
        if handler is signal.SIG_DFL:
            signal.signal(sig, _raise_stopped)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is signal.SIG_DFL:
                signal.signal(sig, signal.SIG_DFL)
        sys.unraisablehook, _received = hook, None


_watched: int | None = None


def die_with_parent(parent: int) -> None:
    """In a freshly forked worker: let the kernel kill this process (SIGKILL) when the thread
    that forked it ends (``PR_SET_PDEATHSIG``, Linux). Call it only for workers forked from the
    parent's main thread, which lives as long as the parent. ``parent``: the parent's pid, to
    catch a parent that died before the request was made."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError) as exc:  # pragma: no cover - no prctl: the parent's clean-up stops us
        log.debug("could not ask to die with the parent: %s", exc)
    if os.getppid() != parent:
        os._exit(1)
    global _watched
    _watched = os.getpid()  # the kernel watches the parent: no thread needed (watch_parent)


def watch_parent(interval: float = 0.5, parent: int | None = None) -> None:
    """In a worker process: end this process (exit status 1) once its parent has died, checked
    every ``interval`` seconds by a daemon thread (started once per process). ``parent``: the
    parent's pid when known, to catch a parent that died before the watch began (the process
    then has another parent already); by default, the current parent."""
    global _watched
    if _watched == os.getpid():
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)
    _watched = os.getpid()
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="simstudy-parent-watch", daemon=True).start()
