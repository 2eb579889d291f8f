"""A run directory's final files and their check: what the manifest records of them
(:func:`file_entries`), the folder a result may be written into (:func:`check_output_folder`),
and the records read back against the manifest (:func:`verify_records`, :func:`verify_config`).

The manifest is written last, through a temporary name and a rename, after every other file:
before the first final file is replaced it is rewritten with ``status: "writing"``, and at the
end with ``status: "complete"`` and, for each final file, its SHA-256 and size (and row count for
records). A directory caught mid-write therefore says so, and a file changed after the run no
longer matches its checksum.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from simstudy.engine.admission import FINGERPRINTS_FILE
from simstudy.errors import RunDirectoryError, UserError
from simstudy.files import sha256_file

__all__ = ["COMPLETE", "MANIFEST_FILE", "WRITING", "check_output_folder", "file_entries", "read_manifest",
           "rebuild_advice", "verify_config", "verify_records"]

MANIFEST_FILE = "manifest.json"
COMPLETE, WRITING = "complete", "writing"
#: Files of a run directory that are not final outputs (the run's own state, lock and log).
_RUN_STATE = ("run_state.json", "run.lock", "cli.log", "overrides.yaml", ".hydra", "shards")


def file_entries(directory: Path, files: Iterable[Path], rows: dict[Path, int]) -> dict[str, dict[str, Any]]:
    """``{relative path: {"sha256", "bytes"[, "rows"]}}`` of ``files`` (``rows``: the records' row counts)."""
    entries = {}
    for path in files:
        path = Path(path)
        entry: dict[str, Any] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
        if path in rows:
            entry["rows"] = int(rows[path])
        entries[path.relative_to(directory).as_posix()] = entry
    return entries


def _identity_of(directory: Path) -> str | None:
    for name, key in (("run_state.json", "identity_hash"), (MANIFEST_FILE, "identity_hash")):
        try:
            value = json.loads((directory / name).read_text()).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if value:
            return str(value)
    return None


def _fingerprints_of(directory: Path) -> list[dict[str, str]]:
    """Every record of data fingerprints a run directory holds (run_state.json, the fingerprint
    file, the manifest), each a mapping data set -> fingerprint."""
    found = []
    for name, key in (("run_state.json", "data"), (FINGERPRINTS_FILE, None), (MANIFEST_FILE, "data_fingerprints")):
        try:
            value = json.loads((directory / name).read_text())
            value = value.get(key) if key is not None else value
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def check_output_folder(directory: Path, identity: str | None, run_dir: Path | None,
                        data: dict[str, str] | None = None) -> None:
    """Refuse to write a result into a folder that holds files of another run or foreign files.

    Allowed: a new or empty folder, the result's own run directory (``run_dir``), or a folder
    holding a run with the same identity hash (its files are replaced by equal ones) whose data
    fingerprints agree with the result's ``data`` (the hash does not name data read from a path).
    """
    if not directory.exists():
        return
    if not directory.is_dir():
        raise RunDirectoryError(f"{str(directory)!r} is a file, not a folder: choose a new folder for the run's files.")
    names = sorted(p.name for p in directory.iterdir())
    if not names or (run_dir is not None and Path(run_dir).resolve() == directory.resolve()):
        return
    there = _identity_of(directory)
    if there is not None and identity is not None and there == identity:
        records = _fingerprints_of(directory)
        other = sorted(name for name, digest in (data or {}).items()
                       if any(record.get(name, digest) != digest for record in records))
        if not other:
            return
        raise RunDirectoryError(f"{str(directory)!r} holds a run of this configuration computed on other data "
                                f"({', '.join(other)}); a result is never written over other files. Choose a new or "
                                "empty folder.")
    what = (f"a run of another configuration (identity {there}, this result {identity})" if there is not None
            else f"files that are not this run's ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})")
    raise RunDirectoryError(f"{str(directory)!r} holds {what}; a result is never written over other files. Choose a "
                            "new or empty folder.")


def rebuild_advice(directory: Path) -> str:
    """How to rebuild a run directory's final files (from its shards, else by running it again)."""
    if (directory / "shards").is_dir():
        return (f"Rebuild them from the run's checksummed shards with: simstudy-report --rebuild {directory} (or "
                "load_run(..., rebuild=True)); running the study's command again with the same hydra.run.dir also "
                "repairs it, computing only what is missing.")
    return "Run the study again into this directory (or a new one)."


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a finished run; a missing, unreadable or unfinished one is a :class:`UserError`."""
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise UserError(f"{str(directory)!r} is not a finished run: {MANIFEST_FILE} is missing (a run writes it last, "
                        "once all its files are written; a run stopped before that is incomplete). "
                        + rebuild_advice(directory).replace("Rebuild them", "Finish it"))
    try:
        manifest = json.loads(path.read_text())
        if not isinstance(manifest, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        raise UserError(f"{str(directory)!r}: {MANIFEST_FILE} is unreadable ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())}). Run the study's command again with the same directory: it "
                        "rewrites the manifest, computing only what its shards do not hold.") from None
    status = manifest.get("status", COMPLETE)
    if status != COMPLETE:
        raise UserError(f"{str(directory)!r} is incomplete: its files were being written when the run stopped "
                        f"({MANIFEST_FILE} status {status!r}). " + rebuild_advice(directory))
    return manifest


def verify_records(directory: Path, manifest: dict[str, Any], name: str, records) -> None:
    """The records read from ``directory/name`` are those the run wrote (checksum, rows, count)."""
    entry = manifest.get("files", {}).get(name)
    path = directory / name
    problem = ""
    if entry is not None:
        digest = sha256_file(path)
        if len(records) != entry.get("rows", len(records)):
            problem = f"{len(records)} rows, the manifest lists {entry['rows']}"
        elif digest != entry["sha256"]:
            problem = f"its SHA-256 is {digest[:12]}..., the manifest lists {entry['sha256'][:12]}... (values changed)"
    total = manifest.get("replicates_total")
    if not problem and name == "replicates.parquet" and total is not None and len(records) != total:
        problem = f"{len(records)} rows, the manifest's replicates_total is {total}"
    if problem:
        raise UserError(f"{str(path)!r} is not what the run wrote: {problem}. " + rebuild_advice(directory))


def verify_config(directory: Path, manifest: dict[str, Any], config: dict[str, Any]) -> None:
    """``config.yaml`` is the configuration the run recorded (names the fields that differ)."""
    entry = manifest.get("files", {}).get("config.yaml")
    if entry is None or sha256_file(directory / "config.yaml") == entry["sha256"]:
        return
    recorded = manifest.get("config")
    changed = _changed(recorded, config) if isinstance(recorded, dict) else []
    what = f" (changed: {', '.join(changed[:8])})" if changed else ""
    raise UserError(f"{str(directory / 'config.yaml')!r} is not the configuration the run recorded in "
                    f"{MANIFEST_FILE}{what}; the records belong to the recorded one. " + rebuild_advice(directory))


def _changed(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        return [k for key in sorted(set(old) | set(new)) for k in _changed(old.get(key), new.get(key),
                                                                          f"{prefix}{key}.")]
    return [] if old == new else [prefix.rstrip(".") or "(all)"]
