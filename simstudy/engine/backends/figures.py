"""Saving a run's figures in forked children while this process writes the rest of the run.

Drawing and rendering a PNG is single-threaded work that holds the GIL. Where this process may
fork (:func:`~simstudy.engine.backends.fork_pool.safe_to_fork`: Linux, one thread; the command
line once its workers are released), :func:`start_saving_figures` forks children, one per core up
to one per figure, that take the figures one at a time from a shared queue (a pipe of indices),
draw and save them with :func:`simstudy.report.figures.save_figure`; :meth:`FigureSaving.wait`
then takes from the same queue what is left. The same bytes as saved in one process.
"""
from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import Any, Mapping

from matplotlib.figure import Figure

from simstudy.engine.backends import fork_pool
from simstudy.engine.backends.signals import forking
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


class FigureSaving:
    """Figures being saved (:func:`start_saving_figures`); :meth:`wait` gives their paths."""

    def __init__(self, figures: Mapping[str, Any], paths: dict[str, Path], children: list[int],
                 todo: int | None = None, done: int | None = None):
        self._figures, self.paths, self._children, self._todo, self._done = figures, paths, children, todo, done

    def wait(self) -> dict[str, Path]:
        """Save the figures no child has taken yet, in this process; wait for the children; save
        here whatever a failed child left unsaved. Returns the PNG paths by name, in the order the
        study gave the figures."""
        names = list(self._figures)
        saved = set()
        try:
            while (index := _claim(self._todo)) is not None:
                self._save(names[index])
                saved.add(index)
        except BaseException:
            self.cancel()
            raise
        by_children = self._join()
        for index, name in enumerate(names):
            if index in by_children:
                if isinstance(self._figures[name], Figure):
                    plt.close(self._figures[name])
            elif index not in saved:  # no fork, or a child failed (a bug in a figure maker raises here)
                self._save(name)
        return self.paths

    def cancel(self) -> None:
        """Stop the children (SIGTERM), reap them and close the pipes; nothing more is saved (the
        run failed or was interrupted while its figures were being drawn)."""
        import signal

        for pid in self._children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:  # pragma: no cover - already gone
                pass
        self._join()

    def _join(self) -> set[int]:
        """Reap the children, close the pipes; the indices the children reported saved."""
        for pid in self._children:
            _, status = os.waitpid(pid, 0)
            if status:
                log.debug("a figure process ended with status %s; its unsaved figures are saved here", status)
        reported = set()
        if self._done is not None:
            while data := os.read(self._done, 4096):
                reported.update(i for (i,) in _INDEX.iter_unpack(data))
        for fd in (self._todo, self._done):
            if fd is not None:
                os.close(fd)
        self._children, self._todo, self._done = [], None, None
        return reported

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
                finally:
                    os._exit(code)
    except BaseException:
        # stopped while forking (Ctrl-C, SIGTERM): the caller never gets `saving`, so the children forked
        # so far are stopped here; a child born after a Ctrl-C to the group would otherwise draw on alone
        if os.getpid() != parent:
            os._exit(1)
        os.close(report)
        saving.cancel()
        raise
    os.close(report)
    return saving


def save_figures(figures: Mapping[str, Any], folder: Path) -> dict[str, Path]:
    """Save every figure (or figure maker's figure) as ``folder/<name>.png``; returns the paths by
    name (:func:`start_saving_figures`, then wait)."""
    return start_saving_figures(figures, folder).wait()
