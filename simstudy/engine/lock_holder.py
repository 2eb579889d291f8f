"""Who holds a run directory's lock: the record a holder writes into ``run.lock`` (pid, host,
boot id, process start time) and the judgement whether that holder still runs
(:class:`simstudy.engine.rundir.RunDirectory` takes over the lock of a dead holder). A forked child
closes its copies of the locks this process holds at once, so that it never keeps the lock of a
dead parent."""
from __future__ import annotations

import json
import os
import socket
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["describe_holder", "dead_holder", "hold_lock", "holder_record", "release_lock"]

#: File descriptors of the run locks this process holds; a forked child closes its copies.
_held_locks: set[int] = set()


def _close_held_locks() -> None:
    for fd in _held_locks:
        try:
            os.close(fd)
        except OSError:  # pragma: no cover - already closed
            pass
    _held_locks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_held_locks)


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _process_start(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (``/proc/PID/stat``, field 22); ""
    when unknown or not running."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text[text.rindex(")") + 2:].split()[19]


def holder_record() -> dict[str, Any]:
    """What the lock file says about this process (see the module docstring)."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "boot_id": _boot_id(),
            "process_start": _process_start(os.getpid()),
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _parse_holder(text: str) -> dict[str, Any] | None:
    try:
        holder = json.loads(text)
    except ValueError:
        return None
    return holder if isinstance(holder, dict) and isinstance(holder.get("pid"), int) else None


def describe_holder(text: str) -> str:
    """A lock file's content as a phrase ("pid 12 on host, started ...")."""
    holder = _parse_holder(text)
    if holder is None:
        return text.strip() or "unknown process"
    return f"pid {holder['pid']} on {holder.get('host', '?')}, started {holder.get('started', '?')}"


def dead_holder(text: str) -> str:
    """Why the lock's recorded holder is known not to run any more ("" when it may still run, or
    runs on another host, or the record is not readable)."""
    holder = _parse_holder(text)
    if holder is None or holder.get("host") != socket.gethostname():
        return ""
    pid, boot = holder["pid"], _boot_id()
    if holder.get("boot_id") and boot and holder["boot_id"] != boot:
        return "the machine has restarted since"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return f"process {pid} is not running"
    except PermissionError:
        pass
    start = _process_start(pid)
    if holder.get("process_start") and start and start != holder["process_start"]:
        return f"pid {pid} now belongs to another process"
    return ""


def hold_lock(fd: int) -> None:
    """Note a run lock's file descriptor as held by this process (closed in forked children)."""
    _held_locks.add(fd)


def release_lock(fd: int) -> None:
    """Forget a run lock's file descriptor (it is being closed by its holder)."""
    _held_locks.discard(fd)
