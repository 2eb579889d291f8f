"""A run directory belongs to one study configuration and to one process at a time.

- **Identity.** ``run_state.json`` records the run's identity hash: a hash of everything that
  determines the numbers of a replicate (the study's ``record`` fields, the population's
  parameters and data fingerprint, the learner and the loss; not ``extent`` fields such as
  sizes and replicates, not ``report`` fields such as alpha, not ``location`` fields such as the
  benchmark's data paths, not the runner) and, for studies
  with subjects (cv_clt's learners), a hash per subject. The same identity resumes or extends
  the run (more replicates, sizes or subjects: only the new work is computed); another identity,
  or a known subject with another specification, is refused unless ``runner.overwrite=true``.
  A study that reads data sets beyond its one population (the benchmark's mechanisms) records
  their fingerprints too, outside the hash (in ``run_state.json`` and, so that losing that file
  does not lose them, in ``data_fingerprints.json``): a data set recorded with other
  contents is refused the same way, so that a data file changed in place never mixes its records
  with the old ones, while the same rows at another path (a clone on another machine) extend the
  run. A directory recorded while its data paths were part of the hash keeps that hash
  (:func:`simstudy.engine.admission.admission`): at the recorded paths, then, once its
  fingerprints are recorded, at any.
  Every shard carries the identity hash and is checked on load (:class:`simstudy.engine.shards.ShardStore`).
- **Lock.** A process holds an exclusive ``flock`` on ``run.lock`` for the whole run; a second
  process on the same directory is refused with the holder's pid, host and start time. The
  kernel releases the lock when its holder dies (even by SIGKILL), so a lock file left by a
  killed run is detected as stale and taken over. A forked child (a worker, a figure process)
  closes its copy of the lock at once (:func:`os.register_at_fork`), so that it never keeps the
  lock of a dead parent. The lock file records the holder's pid, host, boot id and process start
  time: a lock still held while its recorded holder is not running (the pid gone, reused by
  another program, or the machine restarted) is taken over too, with a warning; a lock recorded
  by another host is never judged from here.
- **Foreign directories.** A non-empty directory that is not a simstudy run is refused (never
  written into); a refused run leaves the directory as it found it.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from simstudy.engine.admission import FINGERPRINTS_FILE, RunIdentity, admission, refusal
from simstudy.engine.lock_holder import dead_holder, describe_holder, hold_lock, holder_record, release_lock
from simstudy.errors import RunDirectoryError
from simstudy.files import write_text_atomic

__all__ = ["COMMAND_LINE", "DirectoryNames", "PYTHON", "RunDirectory", "STATE_FILE", "LOCK_FILE"]

log = logging.getLogger("simstudy")

STATE_FILE = "run_state.json"
LOCK_FILE = "run.lock"
#: Version of the run-state format (1: the first version's ``study_config_hash`` only).
STATE_FORMAT = 2


@dataclass(frozen=True)
class DirectoryNames:
    """How the road a run came by names its directory and the switch that discards an old run, so
    that a refusal names what the user typed.

    Attributes
    ----------
    directory : str
        ``hydra.run.dir`` (the command line), ``out`` (Python), ``--out`` (``simstudy benchmark``).
    discard : str
        What discards the old run, as an instruction.
    """

    directory: str = "hydra.run.dir"
    discard: str = "add runner.overwrite=true"


#: The ``simstudy`` command (Hydra overrides).
COMMAND_LINE = DirectoryNames()
#: :func:`simstudy.run_study` and the functions built on it (``out=``, ``overwrite=True``).
PYTHON = DirectoryNames("out", "pass overwrite=True")


class RunDirectory:
    """Claim, lock and release one run directory.

    Use as a context manager around the run::

        with RunDirectory(path).claim(identity, overwrite=False) as run_dir:
            ...
    """

    def __init__(self, path: str | os.PathLike, names: DirectoryNames = COMMAND_LINE):
        self.path = Path(path)
        self.names = names
        self._fd: int | None = None
        self._created_dir = False
        self.resumed = False
        #: The identity the run goes on under (set by :meth:`claim`): the one given, with the
        #: directory's recorded hash where that was computed with the location fields.
        self.identity: RunIdentity | None = None

    @property
    def where(self) -> str:
        """The directory as the user named it, e.g. ``hydra.run.dir='runs/x'``."""
        return f"{self.names.directory}={str(self.path)!r}"

    # -- checks that write nothing
    def _check_usable(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise RunDirectoryError(f"{self.where} is a file, not a directory: choose a new "
                                    "directory for the run's outputs.")
        parent = self.path
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise RunDirectoryError(f"{self.where} cannot be created: {str(parent)!r} is not a "
                                    "writable directory. Choose a directory you can write to.")
        marks = (STATE_FILE, LOCK_FILE, "manifest.json", "shards")  # a run's state, lock, final manifest or shards
        if self.path.is_dir() and not any((self.path / name).exists() for name in marks):
            foreign = sorted(p.name for p in self.path.iterdir() if p.name not in (".hydra",))
            if foreign:
                raise RunDirectoryError(
                    f"{self.where} holds files that are not a simstudy run ({', '.join(foreign[:5])}"
                    f"{', ...' if len(foreign) > 5 else ''}); simstudy never writes into such a directory. "
                    "Choose a new or empty directory.")

    # -- the lock
    def lock(self) -> "RunDirectory":
        """Check that the directory is usable and take its lock (no data needed, nothing else written).

        The command line calls this before it loads any data or starts any worker; :meth:`claim`
        then checks the identity under the same lock. Raises :class:`RunDirectoryError` (foreign
        directory, another process holds the lock), leaving the directory as it was.
        """
        if self._fd is None:
            self._check_usable()
            self._lock()
        return self

    def _lock(self) -> None:
        self._created_dir = not self.path.exists()
        self.path.mkdir(parents=True, exist_ok=True)
        fd = self._locked_fd(self.path / LOCK_FILE)
        previous = os.read(fd, 4096).decode(errors="replace").strip()
        if previous:
            log.warning("run directory %s: a lock left by a run that did not finish (%s) was found stale and "
                        "taken over", self.path, describe_holder(previous))
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(holder_record()).encode())
        os.fsync(fd)
        self._fd = fd
        hold_lock(fd)

    def _locked_fd(self, lock: Path) -> int:
        """Open ``lock`` and hold an exclusive flock on it; refuse if another process holds it.

        The holder removes the lock file when it finishes; a file locked after it was removed is
        not the directory's lock any more, so the flock is taken again on the current file.
        """
        while True:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 4096).decode(errors="replace").strip()
                os.close(fd)
                why = dead_holder(holder)
                taken = self._take_over(lock, holder) if why else None
                if taken is not None:
                    log.warning("run directory %s: its lock was still held although its holder (%s) is dead (%s); "
                                "the lock was taken over", self.path, describe_holder(holder), why)
                    return taken
                self._created_dir = False
                raise RunDirectoryError(
                    f"{self.where} is in use by another simstudy run ({describe_holder(holder)})."
                    f" Wait for it to finish, or choose another {self.names.directory}; two processes never write one run "
                    "directory.") from None
            try:
                if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            os.close(fd)  # removed by its holder between our open and our flock: try the current file

    def _take_over(self, lock: Path, holder: str) -> int | None:
        """Replace the lock file still held for ``holder`` (a dead process; an orphan of it keeps the
        flock) with a new one locked by this process; None if it changed meanwhile.

        Two processes taking over at once are serialised by a flock on the directory itself, and
        each checks under it that the lock file still names the dead holder; the new file is
        locked before it is renamed into place, so nobody sees it unlocked.
        """
        guard = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(guard, fcntl.LOCK_EX)
            try:
                with open(lock, "rb") as fh:
                    if fh.read(4096).decode(errors="replace").strip() != holder:
                        return None
            except FileNotFoundError:
                return None
            fresh = lock.with_name(f"{LOCK_FILE}.{os.getpid()}.tmp")
            fd = os.open(fresh, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.replace(fresh, lock)
            return fd
        finally:
            fcntl.flock(guard, fcntl.LOCK_UN)
            os.close(guard)

    def release(self) -> None:
        """Release the lock and remove the lock file."""
        if self._fd is None:
            return
        try:
            (self.path / LOCK_FILE).unlink(missing_ok=True)
        finally:
            release_lock(self._fd)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def abandon(self) -> None:
        """Release after a refusal: remove the lock file (and the directory, if this claim created
        it and it is empty), leave the rest."""
        created = self._created_dir
        self.release()
        if created and self.path.is_dir() and not any(self.path.iterdir()):
            self.path.rmdir()

    # -- identity
    def _state(self) -> dict[str, Any] | None:
        path = self.path / STATE_FILE
        try:
            state = json.loads(path.read_text())
            if (isinstance(state, dict) and state.get("identity_hash")
                    and all(isinstance(state.get(key, {}), dict) for key in ("data", "subjects", "identity"))):
                return self._with_recorded_fingerprints(state)
            problem = "unreadable (no identity)"
        except FileNotFoundError:
            problem = "missing"
        except (OSError, ValueError) as exc:
            problem = f"unreadable ({type(exc).__name__})"
        return self._recovered_state(problem)

    def _with_recorded_fingerprints(self, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` with the fingerprints of :data:`FINGERPRINTS_FILE` merged in: a run_state.json
        older than the last claim (one brought back by git) must not forget data its shards read.
        Data sets the two files give other contents are listed under ``fingerprint_clash``
        (:func:`~simstudy.engine.admission.refusal` refuses the run)."""
        recorded = self._recorded_fingerprints() or {}
        data = state.get("data", {})
        clash = sorted(name for name in set(data) & set(recorded) if data[name] != recorded[name])
        if clash:
            return {**state, "fingerprint_clash": clash}
        return {**state, "data": {**recorded, **data}} if recorded else state

    def _recorded_fingerprints(self) -> dict[str, str] | None:
        """The fingerprints in :data:`FINGERPRINTS_FILE` (None: no such file, or not one of ours)."""
        try:
            data = json.loads((self.path / FINGERPRINTS_FILE).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()) else None

    def _recovered_state(self, problem: str) -> dict[str, Any] | None:
        """The identity of a run whose ``run_state.json`` is missing or unreadable, read from what
        its files record (the manifest, the shards' sidecars); None for a directory with neither.

        The state is recovered only when those files agree on one identity; otherwise the run is
        refused (:func:`~simstudy.engine.admission.refusal` names ``run_state.json``), never taken
        for another's.
        """
        hashes, study = set(), None
        try:
            manifest = json.loads((self.path / "manifest.json").read_text())
            hashes.add(manifest.get("identity_hash"))
            study = manifest.get("study")
        except (OSError, ValueError, AttributeError):
            pass
        # written at every claim, so never behind the shards (the manifest is, after an interrupted run)
        data = self._recorded_fingerprints()
        for sidecar in sorted((self.path / "shards").glob("*/*.json"))[:50]:
            try:
                hashes.add(json.loads(sidecar.read_text()).get("run_hash"))
            except (OSError, ValueError, AttributeError):
                continue
        hashes.discard(None)
        if not hashes and not (self.path / STATE_FILE).exists():
            return None
        found = hashes.pop() if len(hashes) == 1 else "unknown"
        log.warning("run directory %s: %s is %s; identity %s recovered from the run's manifest and shards",
                    self.path, STATE_FILE, problem, found)
        state = {"identity_hash": found, "study": study, "recovered": f"{STATE_FILE} {problem}"}
        if data is not None:
            state["data"] = data
        return state

    def _clear(self) -> None:
        """Delete everything of an earlier run except the lock (``runner.overwrite=true``)."""
        for child in self.path.iterdir():
            if child.name == LOCK_FILE:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()

    def claim(self, identity: RunIdentity, overwrite: bool = False) -> "RunDirectory":
        """Lock the directory and make sure it belongs to ``identity`` (see the module docstring).

        Raises
        ------
        RunDirectoryError
            Another process holds it, it is foreign, or it holds another configuration (without
            ``overwrite``). Nothing in the directory is changed then.
        """
        self.lock()
        try:
            state = self._state()
            why = refusal(state, identity, self.where) if state is not None else ""
            if why and not overwrite:
                raise RunDirectoryError(f"{why}. Choose another {self.names.directory}, or {self.names.discard} to "
                                        "discard the old results.")
            if why:
                log.warning("overwrite: discarding the earlier results in %s (%s)", self.path, why)
                self._clear()
                state = None
        except BaseException:
            self.abandon()
            raise
        self.resumed = state is not None
        subjects = {**(state or {}).get("subjects", {}), **identity.subjects}
        data = {**(state or {}).get("data", {}), **identity.data}
        # a directory recorded while its data paths were hashed goes on under that hash (its shards carry it)
        in_force, content = (admission(state, identity) if state is not None else None) or (
            identity.hash, identity.content)
        self.identity = replace(identity, hash=in_force, data=data)
        payload = {"format": STATE_FORMAT, "study": identity.study, "identity_hash": in_force,
                   "subjects": subjects, "identity": content}
        if data or identity.locations:
            payload["data"] = data
            write_text_atomic(self.path / FINGERPRINTS_FILE, json.dumps(data, indent=1, sort_keys=True) + "\n")
        write_text_atomic(self.path / STATE_FILE, json.dumps(payload, indent=1, sort_keys=True, default=str) + "\n")
        return self

    def __enter__(self) -> "RunDirectory":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def write_config(path: Path, config: dict[str, Any], overrides: list[str]) -> None:
    import yaml

    write_text_atomic(path / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    if overrides:
        write_text_atomic(path / "overrides.yaml", yaml.safe_dump(list(overrides)))
