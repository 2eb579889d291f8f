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
  does not lose them, in ``shards/data_fingerprints.json``): a data set recorded with other
  contents is refused the same way, so that a data file changed in place never mixes its records
  with the old ones, while the same rows at another path (a clone on another machine) extend the
  run. A directory recorded while its data paths were part of the hash keeps that hash
  (``RunDirectory._admission``): at the recorded paths, then, once its fingerprints are
  recorded, at any.
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
import hashlib
import json
import logging
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simstudy.engine.lock_holder import dead_holder, describe_holder, hold_lock, holder_record, release_lock
from simstudy.errors import RunDirectoryError
from simstudy.files import write_text_atomic

__all__ = ["COMMAND_LINE", "DirectoryNames", "PYTHON", "RunIdentity", "RunDirectory", "STATE_FILE", "LOCK_FILE"]

log = logging.getLogger("simstudy")

STATE_FILE = "run_state.json"
LOCK_FILE = "run.lock"
#: Version of the run-state format (1: the first version's ``study_config_hash`` only).
STATE_FORMAT = 2
#: The data fingerprints of a run that reads data sets (:attr:`RunIdentity.data`), written at every
#: claim beside the shards: what the records were computed on, kept apart from ``run_state.json``
#: so that losing one file does not lose them.
FINGERPRINTS_FILE = "shards/data_fingerprints.json"


def identity_digest(content: Any) -> str:
    """The identity hash of ``content`` (:attr:`RunIdentity.hash`): SHA-256 of its sorted JSON."""
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]


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


@dataclass(frozen=True)
class RunIdentity:
    """What a run directory's records depend on.

    Attributes
    ----------
    study : str
    hash : str
        Hash of ``content`` (see the module docstring).
    subjects : dict
        Subject name -> hash of its specification.
    content : dict
        What was hashed (kept in ``run_state.json`` so that a refusal can say what changed).
    data : dict
        Data set name -> fingerprint of its contents (:meth:`simstudy.Study.data_fingerprints`).
    locations : dict
        The study's ``location`` fields (name -> value, e.g. the benchmark's data paths): not in
        ``content``; the data's fingerprints (``data``) stand for them.
    legacy_hash : str or None
        The hash of ``content`` with the location fields in it, as identities were hashed before
        those fields had a role of their own; None for a study without location fields.
    """

    study: str
    hash: str
    subjects: dict[str, str] = field(default_factory=dict)
    content: dict[str, Any] = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)
    locations: dict[str, Any] = field(default_factory=dict)
    legacy_hash: str | None = None


def _changed_keys(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            keys += _changed_keys(a, b, f"{prefix}{k}.")
        elif a != b:
            keys.append(f"{prefix}{k}")
    return keys


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
            if isinstance(state, dict) and state.get("identity_hash"):
                return state
            problem = "unreadable (no identity)"
        except FileNotFoundError:
            problem = "missing"
        except (OSError, ValueError) as exc:
            problem = f"unreadable ({type(exc).__name__})"
        return self._recovered_state(problem)

    def _recovered_state(self, problem: str) -> dict[str, Any] | None:
        """The identity of a run whose ``run_state.json`` is missing or unreadable, read from what
        its files record (the manifest, the shards' sidecars); None for a directory with neither.

        The state is recovered only when those files agree on one identity; otherwise the run
        is refused (:meth:`_refusal` names ``run_state.json``), never taken for another's.
        """
        hashes, study, data = set(), None, None
        try:
            manifest = json.loads((self.path / "manifest.json").read_text())
            hashes.add(manifest.get("identity_hash"))
            study = manifest.get("study")
        except (OSError, ValueError, AttributeError):
            pass
        try:
            # written at every claim, so never behind the shards (the manifest is, after an interrupted run)
            data = json.loads((self.path / FINGERPRINTS_FILE).read_text())
        except (OSError, ValueError):
            pass
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
        if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
            state["data"] = data
        return state

    @staticmethod
    def _admission(state: dict[str, Any], identity: RunIdentity) -> tuple[str, dict[str, Any]] | None:
        """(hash, identity content to record) under which the directory's records are ``identity``'s,
        or None when they are not. Hashes decide, never a comparison of values (1 == 1.0):

        - the directory's hash is the identity's;
        - it is the identity's :attr:`~RunIdentity.legacy_hash`: recorded while the location fields
          were hashed, with the same values (paths) as now; the run goes on under that hash and
          keeps recording the content in that form;
        - it was recorded so, the content it recorded hashes to it, that content without the
          location fields hashes to the identity's hash, and the directory has recorded its data's
          fingerprints since (``data``): the same configuration with its data read elsewhere (the
          fingerprints are compared by :meth:`_refusal`).
        """
        recorded = state.get("identity_hash")
        if not recorded or ("recovered" not in state and state.get("study") != identity.study):
            return None
        if recorded == identity.hash:
            return recorded, identity.content
        with_locations = {**identity.content, "study": {**identity.content.get("study", {}), **identity.locations}}
        if identity.legacy_hash is not None and recorded == identity.legacy_hash:
            return recorded, with_locations
        content = state.get("identity")
        study = content.get("study") if isinstance(content, dict) else None
        if ("recovered" in state or "data" not in state or not identity.locations or not isinstance(study, dict)
                or not any(name in study for name in identity.locations) or identity_digest(content) != recorded):
            return None
        moved = {**content, "study": {k: v for k, v in study.items() if k not in identity.locations}}
        return (recorded, content) if identity_digest(moved) == identity.hash else None

    def _refusal(self, state: dict[str, Any], identity: RunIdentity) -> str:
        """Why ``state`` (the directory's) does not admit ``identity``; "" when it does."""
        admitted = self._admission(state, identity)
        if "recovered" in state and admitted is None:
            return (f"{self.where}: its {state['recovered']}, and its manifest and shards were "
                    f"written by identity {state['identity_hash']}, not this run's {identity.hash}")
        if "recovered" in state and admitted[0] == identity.hash and identity.locations and "data" not in state:
            # the hash does not name the data (location fields): without their fingerprints other rows could join
            return (f"{self.where}: its {state['recovered']}, and so is {FINGERPRINTS_FILE}, which named the data "
                    "its records were computed on: other data could be mixed in")
        if admitted is None:
            recorded = state.get("identity")
            recorded = recorded if isinstance(recorded, dict) else {}
            content = identity.content
            if isinstance(recorded.get("study"), dict) and any(name in recorded["study"] for name in identity.locations):
                if "data" in state:  # recorded with its paths, which its fingerprints have replaced since
                    recorded = {**recorded, "study": {k: v for k, v in recorded["study"].items()
                                                      if k not in identity.locations}}
                else:  # recorded with its paths, which still say what its data are
                    content = {**content, "study": {**content.get("study", {}), **identity.locations}}
            changed = _changed_keys(recorded, content) if "identity" in state else []
            what = f" (changed: {', '.join(changed[:8])})" if changed else ""
            why = (f"{self.where} holds a run of a different configuration{what}: identity "
                   f"{state.get('identity_hash', state.get('study_config_hash'))} there, {identity.hash} now")
            if changed and "data" not in state and all(
                    key.split(".")[:2] in (["study", name] for name in identity.locations) for key in changed):
                paths = {f"study.{name}": recorded["study"].get(name) for name in identity.locations}
                why += (f". It was written before its data's fingerprints were recorded, so its data are the files "
                        f"at the recorded paths ({paths}): run it once with those, and then the same rows "
                        "may come from any path")
            return why
        for name, digest in identity.subjects.items():
            old = state.get("subjects", {}).get(name)
            if old is not None and old != digest:
                return (f"{self.where} holds subject {name!r} with other settings "
                        f"({old} there, {digest} now)")
        for name, digest in identity.data.items():
            old = state.get("data", {}).get(name)
            if old is not None and old != digest:
                return (f"{self.where} holds records of {name!r} computed on other data "
                        f"(fingerprint {old[:12]} there, {digest[:12]} now): give it the same data")
        return ""

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
            why = self._refusal(state, identity) if state is not None else ""
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
        in_force, content = (self._admission(state, identity) if state is not None else None) or (
            identity.hash, identity.content)
        self.identity = replace(identity, hash=in_force, data=data)
        payload = {"format": STATE_FORMAT, "study": identity.study, "identity_hash": in_force,
                   "subjects": subjects, "identity": content}
        if data or identity.locations:
            payload["data"] = data
            (self.path / FINGERPRINTS_FILE).parent.mkdir(parents=True, exist_ok=True)
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
