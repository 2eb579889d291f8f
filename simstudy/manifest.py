"""The run manifest: what ran, with which software, seeds and timings."""
from __future__ import annotations

import hashlib
import json
import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["config_hash", "environment_info", "write_json"]

_PACKAGES = ("simstudy", "numpy", "scipy", "scikit-learn", "joblib", "pandas", "pyarrow",
             "matplotlib", "hydra-core", "omegaconf", "tqdm")


def config_hash(config: dict) -> str:
    """SHA-256 of the resolved config as canonical JSON (first 16 hex digits)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _git_commit() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def environment_info() -> dict[str, Any]:
    """Package versions, Python, platform, host and git commit."""
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"python": platform.python_version(), "platform": platform.platform(),
            "host": socket.gethostname(), "packages": versions, "git_commit": _git_commit()}


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

    path.write_text(json.dumps(clean(payload), indent=2, default=str) + "\n")
    return path
