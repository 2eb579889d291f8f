"""Finished chunks on disk: one Parquet file and one JSON sidecar per chunk (:class:`ShardStore`).

Each finished chunk is written at once as ``<phase>/<condition key>_r<start>-<stop>.parquet`` (to
a temporary name, then renamed) with a sidecar ``.json`` holding its SHA-256, row count, timings
and warning counts. A later run into the same directory loads the shards whose checksum matches,
reports and deletes the others (truncated or corrupted), and computes only the replicates not
covered, whatever its chunk size.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from simstudy.engine.chunks import ChunkOutput
from simstudy.studies.base import Chunk

__all__ = ["ShardStore"]

log = logging.getLogger("simstudy")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ShardStore:
    """Finished chunks on disk, one Parquet file and one JSON sidecar per chunk.

    A shard is named by its condition's key (not its position in the design, so a run
    extended by more conditions keeps its shards), its replicate range and its subjects. The
    sidecar holds the SHA-256 of the Parquet file, the row count, the timings, the warnings and
    the identity hash of the run that wrote it: a shard of another run is never loaded.

    Parameters
    ----------
    directory : path-like
        Usually ``<run_dir>/shards``; one sub-directory per phase.
    run_hash : str
        Identity of the run writing and reading the shards (see :mod:`simstudy.engine.rundir`).
    """

    def __init__(self, directory: str | os.PathLike, run_hash: str = ""):
        self.directory = Path(directory)
        self.run_hash = run_hash

    def _paths(self, phase: str, key: str, chunk: Chunk) -> tuple[Path, Path]:
        stem = f"{key[:16]}_r{chunk.start:07d}-{chunk.stop:07d}"
        if chunk.subjects:
            stem += "_s" + hashlib.sha256("\n".join(chunk.subjects).encode()).hexdigest()[:8]
        base = self.directory / phase / stem
        return base.with_suffix(".parquet"), base.with_suffix(".json")

    def save(self, phase: str, key: str, out: ChunkOutput) -> dict[str, Any]:
        """Write one chunk atomically (temporary name, then rename); returns its index entry."""
        data, meta = self._paths(phase, key, out.chunk)
        data.parent.mkdir(parents=True, exist_ok=True)
        tmp = data.with_name(data.name + f".tmp{os.getpid()}")
        out.records.to_parquet(tmp, index=False)
        os.replace(tmp, data)
        entry = {"file": str(data.relative_to(self.directory)), "sha256": _sha256(data), "rows": int(len(out.records)),
                 "condition_key": key, "start": out.chunk.start, "stop": out.chunk.stop,
                 "subjects": list(out.chunk.subjects), "run_hash": self.run_hash,
                 "wall_time": out.wall_time, "cpu_time": out.cpu_time, "warnings": out.warnings}
        tmp_meta = meta.with_name(meta.name + f".tmp{os.getpid()}")
        tmp_meta.write_text(json.dumps(entry))
        os.replace(tmp_meta, meta)  # the sidecar is written last: a shard without it is incomplete
        return entry

    def sidecar(self, phase: str, key: str, chunk: Chunk) -> Path:
        """The sidecar of a chunk's shard: written last, so the shard is complete once it exists."""
        return self._paths(phase, key, chunk)[1]

    def read(self, phase: str, key: str, chunk: Chunk) -> tuple[ChunkOutput | None, str]:
        """One chunk's shard, checked: (output with its index entry as ``shard``, "") or (None, problem)."""
        data = self._paths(phase, key, chunk)[0]
        entry, records, problem = self._check(data)
        if problem:
            return None, problem
        return ChunkOutput(chunk, records, entry["wall_time"], entry["cpu_time"], "", entry.get("warnings", {}),
                           shard=entry), ""

    def _check(self, data: Path) -> tuple[dict[str, Any] | None, pd.DataFrame | None, str]:
        """(entry, records, problem) of one shard file; problem is "" for a valid shard."""
        try:
            entry = json.loads(data.with_suffix(".json").read_text())
            if entry.get("run_hash") != self.run_hash:
                return entry, None, (f"written by another run configuration (run hash {entry.get('run_hash')}, "
                                     f"this run {self.run_hash})")
            if _sha256(data) != entry["sha256"]:
                return entry, None, "checksum mismatch (truncated or corrupted)"
            records = pd.read_parquet(data)
            if len(records) != entry["rows"]:
                return entry, None, f"{len(records)} rows, expected {entry['rows']}"
            return entry, records, ""
        except FileNotFoundError:
            return None, None, "no sidecar (interrupted while writing)"
        except Exception as exc:  # unreadable JSON or Parquet
            return None, None, f"unreadable ({type(exc).__name__}: {exc})"

    def load(self, phase: str, keys: Sequence[str], replicates: Sequence[int]) -> tuple[list[ChunkOutput],
                                                                                      list[dict[str, Any]]]:
        """Valid shards of a phase for the conditions with these ``keys``.

        Shards of other conditions are left alone (a run can be narrowed and widened again);
        invalid ones are reported, deleted and left to recompute. Replicates at or beyond a
        condition's ``replicates`` are dropped from the loaded records (a run can be shortened).

        Returns
        -------
        outputs : list of ChunkOutput (``chunk.condition`` indexes ``keys``)
        entries : list of dict
            The index entries (file, sha256, rows, ...) of the shards used.
        """
        folder = self.directory / phase
        outputs, entries = [], []
        if not folder.is_dir():
            return outputs, entries
        index = {key: i for i, key in enumerate(keys)}
        for tmp in folder.glob("*.tmp*"):
            tmp.unlink()
        for data in sorted(folder.glob("*.parquet")):
            entry, records, problem = self._check(data)
            if entry is not None and entry.get("condition_key") not in index and not problem:
                continue
            if problem:
                log.warning("shard %s is invalid: %s; it will be recomputed", data, problem)
                data.unlink(missing_ok=True)
                data.with_suffix(".json").unlink(missing_ok=True)
                continue
            c = index[entry["condition_key"]]
            start, stop = entry["start"], min(entry["stop"], replicates[c])
            if start >= stop:
                continue
            if stop < entry["stop"]:
                if "replicate" not in records:
                    continue  # cannot be cut: recompute the part still wanted
                records = records[records["replicate"] < stop].reset_index(drop=True)
            chunk = Chunk(c, start, stop, tuple(entry.get("subjects", ())))
            outputs.append(ChunkOutput(chunk, records, entry["wall_time"], entry["cpu_time"], "",
                                       entry.get("warnings", {})))
            entries.append(entry)
        return outputs, entries
