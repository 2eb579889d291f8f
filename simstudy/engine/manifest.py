"""The run manifest: what ran, with which software, seeds and timings."""
from __future__ import annotations

import hashlib
import json
import platform
import socket
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from simstudy.files import write_text_atomic

__all__ = ["GitState", "config_hash", "environment_info", "git_state", "write_json"]

_PACKAGES = ("simstudy", "numpy", "scipy", "scikit-learn", "joblib", "pandas", "pyarrow",
             "matplotlib", "hydra-core", "omegaconf", "tqdm")


def config_hash(config: dict) -> str:
    """SHA-256 of the resolved config as canonical JSON (first 16 hex digits)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: Tracked paths whose changes do not make a checkout dirty: committed results, which every run
#: into results/ rewrites (a run's own cli.log and tables would otherwise mark the next run dirty).
_OUTPUT_PATHS = ("results/",)


@dataclass(frozen=True)
class GitState:
    """The commit a run's code came from, and whether the checkout differed from it.

    Attributes
    ----------
    commit : str or None
        ``git rev-parse HEAD`` of the checkout holding the imported ``simstudy`` (None outside git).
    dirty : bool or None
        True when a tracked file outside ``results/`` and the run directory is modified (staged or
        not); untracked files are not counted. None outside git.
    modified : list of str
        Every modified tracked path (results included, at most 50), so that nothing is hidden.
    """

    commit: str | None
    dirty: bool | None
    modified: tuple[str, ...] = ()

    @property
    def label(self) -> str | None:
        """``<commit>`` or ``<commit>-dirty`` (the manifest's ``git_commit``)."""
        if self.commit is None:
            return None
        return self.commit + ("-dirty" if self.dirty else "")


def git_state(exclude: Path | None = None, where: Path | None = None) -> GitState:
    """The :class:`GitState` of the checkout holding this package (or ``where``); ``exclude``: a
    run directory whose files do not count as modifications (its config.yaml and cli.log are
    written first)."""
    here = Path(where) if where is not None else Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD", "--show-toplevel"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--no-renames"], cwd=here,
                                capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return GitState(None, None)
    if out.returncode != 0 or status.returncode != 0:
        return GitState(None, None)
    commit, top = out.stdout.split("\n")[:2]
    modified = [line[3:] for line in status.stdout.splitlines() if line.strip()]
    skip = list(_OUTPUT_PATHS)
    if exclude is not None:
        try:
            skip.append(Path(exclude).resolve().relative_to(Path(top).resolve()).as_posix().rstrip("/") + "/")
        except ValueError:
            pass                                            # the run directory is outside the checkout
    dirty = any(not any(path.startswith(prefix) for prefix in skip) for path in modified)
    return GitState(commit.strip(), dirty, tuple(modified[:50]))


def environment_info(run_directory: Path | None = None) -> dict[str, Any]:
    """Package versions, Python, platform, host and git state (``git_commit``: ``<commit>`` or
    ``<commit>-dirty``; ``git_dirty``; ``git_modified``; see :class:`GitState`). Call it before a
    run writes anything, with the run's directory, so that the run's own files do not count."""
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    git = git_state(run_directory)
    return {"python": platform.python_version(), "platform": platform.platform(),
            "host": socket.gethostname(), "packages": versions, "git_commit": git.label, "git_dirty": git.dirty,
            "git_modified": list(git.modified)}


def write_json(path: Path, payload: dict) -> Path:
    """Write ``payload`` as indented JSON (NaN becomes null)."""
    def clean(obj):
        if isinstance(obj, float) and obj != obj:
            return None
        if isinstance(obj, dict):
            return {k: clean(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [clean(v) for v in obj]
        return obj

    return write_text_atomic(path, json.dumps(clean(payload), indent=2, default=str) + "\n")
