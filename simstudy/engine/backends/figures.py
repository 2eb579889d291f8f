"""Saving a run's figures in forked children while this process writes the rest of the run.

Drawing and rendering a PNG is single-threaded work that holds the GIL. Where this process may
fork (:func:`~simstudy.engine.backends.fork_pool.safe_to_fork`: Linux, one thread; the command
line once its workers are released), :func:`start_saving_figures` forks children, one per core up
to one per figure, that take the figures one at a time from a shared queue (a pipe of indices),
draw and save them with :func:`simstudy.report.figures.save_figure`; :meth:`FigureSaving.wait`
then takes from the same queue what is left. The same bytes as saved in one process.

A child stopped by Ctrl-C or a stop signal (SIGTERM, SIGHUP) ends with status 128 + the signal's
number, and this process then stops as if the signal had reached it too: a Ctrl-C sent to the
whole group while a child is being forked may reach only the child (the forking thread blocks it,
:func:`~simstudy.engine.backends.signals.forking`), and this process would otherwise take over the
child's figures and finish the run with status 0. It learns of a stopped child from SIGCHLD
(where it may install a handler: the main thread, SIGCHLD not handled already) and, in any case,
before it draws a figure itself and once the children are reaped.
"""
from __future__ import annotations

import logging
import os
import signal
import struct
import sys
import threading
from pathlib import Path
from typing import Any, Mapping

from matplotlib.figure import Figure

from simstudy.engine.backends import fork_pool
from simstudy.engine.backends.signals import forking, stop_raised_for, stop_status, stopped_exit_code
from simstudy.report.figures import draw_figure, plt, save_figure

__all__ = ["FigureSaving", "save_figures", "start_saving_figures"]

log = logging.getLogger("simstudy")

#: A figure's position in the order the study gave the figures, as it travels through a pipe.
_INDEX = struct.Struct(">I")


#: At most this many figures are shared out through pipes: the queue is written whole before any
#: child reads it, and the children's reports are read only once they have exited, so both must
#: fit in a pipe's buffer (4096 bytes, the smallest Linux gives, holds 1024 indices). A study with
#: more figures saves them in this process.
_MAX_SHARED = 1024


def _claim(fd: int | None) -> int | None:
    """The next unclaimed figure index from the work pipe, or None when none is left."""
    data = os.read(fd, _INDEX.size) if fd is not None else b""
    return _INDEX.unpack(data)[0] if data else None


#: The figures whose children this process's SIGCHLD handler watches (None: none).
_watched: "FigureSaving | None" = None


def _on_child_exit(signum: int, frame) -> None:
    """SIGCHLD while figures are saved: stop this process if a child was stopped (see the module
    docstring). Nothing is raised while a Ctrl-C is already being handled here."""
    saving = _watched
    if saving is None or saving._parent != os.getpid() or isinstance(sys.exc_info()[1], KeyboardInterrupt):
        return
    saving._raise_if_a_child_stopped()


class FigureSaving:
    """Figures being saved (:func:`start_saving_figures`); :meth:`wait` gives their paths."""

    def __init__(self, figures: Mapping[str, Any], paths: dict[str, Path], children: list[int],
                 todo: int | None = None, done: int | None = None):
        self._figures, self.paths, self._children, self._todo, self._done = figures, paths, children, todo, done
        self._parent = os.getpid()
        self._stopped = False  # a child's stop was raised here (once)

    def wait(self) -> dict[str, Path]:
        """Save the figures no child has taken yet, in this process; wait for the children; save
        here whatever a failed child left unsaved. Returns the PNG paths by name, in the order the
        study gave the figures.

        Raises
        ------
        KeyboardInterrupt
            A child was stopped by Ctrl-C (:class:`~simstudy.engine.backends.signals.RunStopped`
            for SIGTERM or SIGHUP): the run is being stopped; nothing more is saved.
        """
        names = list(self._figures)
        saved = set()
        try:
            while True:
                self._raise_if_a_child_stopped()
                if (index := _claim(self._todo)) is None:
                    break
                self._save(names[index])
                saved.add(index)
            by_children, stopped = self._join()
            if stopped is not None and not self._stopped:
                self._stopped = True
                raise stop_raised_for(stopped)
        except BaseException:
            self.cancel()
            raise
        for index, name in enumerate(names):
            if index in by_children:
                if isinstance(self._figures[name], Figure):
                    plt.close(self._figures[name])
            elif index not in saved:  # no fork, or a child failed (a bug in a figure maker raises here)
                self._save(name)
        return self.paths

    def cancel(self) -> None:
        """Stop the children (SIGTERM), reap them and close the pipes; nothing more is saved (the
        run failed or was interrupted while its figures were being drawn). Safe to call twice."""
        self._unwatch()
        for pid in self._children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:  # pragma: no cover - already gone
                pass
        self._join()

    def _watch(self) -> None:
        """Learn of a stopped child from SIGCHLD, where this process may install the handler."""
        global _watched
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGCHLD) not in (signal.SIG_DFL, None, _on_child_exit):
            return  # the program handles SIGCHLD itself: the checks in wait() remain
        _watched = self
        signal.signal(signal.SIGCHLD, _on_child_exit)

    def _unwatch(self) -> None:
        global _watched
        if _watched is self:
            _watched = None
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)

    def _raise_if_a_child_stopped(self) -> None:
        """Raise the stop of a child that ended stopped (not reaped: :meth:`_join` reaps it)."""
        if self._stopped:
            return
        for pid in self._children:
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # pragma: no cover - reaped already
                continue
            if info is None:
                continue
            status = info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status << 8
            if (stopped := stop_status(status)) is not None:
                self._stopped = True
                raise stop_raised_for(stopped)

    def _join(self) -> tuple[set[int], int | None]:
        """Reap the children, close the pipes; the indices the children reported saved, and the
        stop signal that ended a child (None: none was stopped)."""
        self._unwatch()
        stopped = None
        while self._children:  # each child forgotten once reaped: a Ctrl-C here leaves cancel() the rest
            try:
                _, status = os.waitpid(self._children[0], 0)
            except ChildProcessError:  # reaped just before a Ctrl-C interrupted the last join
                status = 0
            del self._children[0]
            if status:
                stopped = stopped or stop_status(status)
                log.debug("a figure process ended with status %s; its unsaved figures are saved here", status)
        reported = set()
        if self._done is not None:
            while data := os.read(self._done, 4096):
                reported.update(i for (i,) in _INDEX.iter_unpack(data))
        for name in ("_todo", "_done"):
            if (fd := getattr(self, name)) is not None:
                setattr(self, name, None)
                os.close(fd)
        return reported, stopped

    def _save(self, name: str) -> None:
        save_figure(draw_figure(self._figures[name]), self.paths[name])


def start_saving_figures(figures: Mapping[str, Any], folder: Path) -> FigureSaving:
    """Start saving every figure as ``folder/<name>.png`` (:func:`save_figure`); this process may
    do other work until :meth:`FigureSaving.wait`, which saves what is left.

    ``figures`` maps names to Figures or to figure makers (functions of no argument returning a
    Figure; :meth:`simstudy.studies.base.Study.figures`), which are called in the process that
    saves the figure: a forked child where this process may fork (see the module docstring),
    else this process in :meth:`FigureSaving.wait`. A child that fails
    leaves its figures to :meth:`FigureSaving.wait`, which saves them in this process; so does a
    fork that fails.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"{name}.png" for name in figures}
    names = list(figures)
    if not names or len(names) > _MAX_SHARED or not fork_pool.safe_to_fork():
        return FigureSaving(figures, paths, [])
    pipes: list[int] = []
    try:
        for _ in range(2):
            pipes += os.pipe()
    except OSError as exc:  # no file descriptor left: everything is saved here
        log.debug("no pipe for the figure processes: %s", exc)
        for fd in pipes:
            os.close(fd)
        return FigureSaving(figures, paths, [])
    todo, queue, done, report = pipes
    os.write(queue, b"".join(_INDEX.pack(i) for i in range(len(names))))
    os.close(queue)  # read to its end, the queue is empty
    saving = FigureSaving(figures, paths, [], todo, done)
    parent = os.getpid()
    try:
        saving._watch()
        for _ in range(min(len(names), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)):
            try:
                with forking():  # a stop signal meanwhile is raised once the child is known (killed on the way out)
                    pid = os.fork()
                    if pid:
                        saving._children.append(pid)
            except OSError as exc:  # no memory or process slot for another child: the others and wait() do its share
                log.debug("could not fork a figure process: %s", exc)
                break
            if pid == 0:  # a child: figures from the queue, then out without flushing or tearing anything down
                code = 1
                try:
                    while (index := _claim(todo)) is not None:
                        saving._save(names[index])
                        os.write(report, _INDEX.pack(index))
                    code = 0
                except KeyboardInterrupt as exc:  # Ctrl-C or a stop signal: the parent stops too
                    code = stopped_exit_code(exc)
                finally:
                    os._exit(code)
    except BaseException as exc:
        # stopped while forking (Ctrl-C, SIGTERM): the caller never gets `saving`, so the children forked
        # so far are stopped here; a child born after a Ctrl-C to the group would otherwise draw on alone
        if os.getpid() != parent:
            os._exit(stopped_exit_code(exc) if isinstance(exc, KeyboardInterrupt) else 1)
        os.close(report)
        saving.cancel()
        raise
    os.close(report)
    return saving


def save_figures(figures: Mapping[str, Any], folder: Path) -> dict[str, Path]:
    """Save every figure (or figure maker's figure) as ``folder/<name>.png``; returns the paths by
    name (:func:`start_saving_figures`, then wait)."""
    return start_saving_figures(figures, folder).wait()
