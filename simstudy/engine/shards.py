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

import numpy as np
import pandas as pd

from simstudy.engine.chunks import ChunkOutput
from simstudy.engine.stored import part_of
from simstudy.files import atomic_path, remove_temporary_files, sha256_file, write_text_atomic
from simstudy.studies.base import Chunk

__all__ = ["ShardStore", "resolve_shards"]

log = logging.getLogger("simstudy")


_sha256 = sha256_file


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
        #: The generation this store writes: one above every shard it found (:meth:`load`).
        self.generation = 0
        #: The failed records :meth:`load` left out (superseded, or to be retried).
        self.failure_history: list[dict[str, Any]] = []

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
        if data.exists():  # a retry of replicates whose failed shard is kept as their history
            data, meta = (p.with_name(f"{p.stem}_g{self.generation}{p.suffix}") for p in (data, meta))
        with atomic_path(data) as tmp:
            out.records.to_parquet(tmp, index=False)
        entry = {"file": str(data.relative_to(self.directory)), "sha256": _sha256(data), "rows": int(len(out.records)),
                 "condition_key": key, "start": out.chunk.start, "stop": out.chunk.stop,
                 "subjects": list(out.chunk.subjects), "run_hash": self.run_hash, "generation": self.generation,
                 "wall_time": out.wall_time, "cpu_time": out.cpu_time, "warnings": out.warnings}
        write_text_atomic(meta, json.dumps(entry))  # the sidecar is written last: a shard without it is incomplete
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

    def _check(self, data: Path, lazy: bool = False) -> tuple[dict[str, Any] | None, pd.DataFrame | None, str]:
        """(entry, records, problem) of one shard file; problem is "" for a valid shard. ``lazy``: the
        records hold only the columns that resolve the shards (``replicate``, ``subject``, ``error``),
        and their ``attrs["columns"]`` lists the shard's columns."""
        try:
            entry = json.loads(data.with_suffix(".json").read_text())
            if entry.get("run_hash") != self.run_hash:
                return entry, None, (f"written by another run configuration (run hash {entry.get('run_hash')}, "
                                     f"this run {self.run_hash})")
            if _sha256(data) != entry["sha256"]:
                return entry, None, "checksum mismatch (truncated or corrupted)"
            records = _slim_records(data) if lazy else pd.read_parquet(data)
            if len(records) != entry["rows"]:
                return entry, None, f"{len(records)} rows, expected {entry['rows']}"
            return entry, records, ""
        except FileNotFoundError:
            return None, None, "no sidecar (interrupted while writing)"
        except Exception as exc:  # unreadable JSON or Parquet
            return None, None, f"unreadable ({type(exc).__name__}: {exc})"

    def load(self, phase: str, keys: Sequence[str], replicates: Sequence[int],
             retry: bool = True, lazy: bool = False) -> tuple[list[ChunkOutput], list[dict[str, Any]]]:
        """Valid shards of a phase for the conditions with these ``keys``.

        Shards of other conditions are left alone (a run can be narrowed and widened again);
        invalid ones are reported, deleted and left to recompute. Replicates at or beyond a
        condition's ``replicates`` are dropped from the loaded records (a run can be shortened).

        Failed replicates: with ``retry`` (a resume), the replicates whose records carry an
        error are left out of the loaded chunks, so the run computes them again from the same
        seeds; their failed records stay on disk and are listed in :attr:`failure_history`. A
        shard written later (a higher ``generation``) supersedes an earlier one's records of the
        same replicates (see :func:`resolve_shards`).

        ``lazy``: each output's ``records`` is the :class:`~simstudy.engine.stored.ShardPart` that
        holds them, and no shard's records are held (see :mod:`simstudy.engine.stored`).

        Returns
        -------
        outputs : list of ChunkOutput (``chunk.condition`` indexes ``keys``)
        entries : list of dict
            The index entries (file, sha256, rows, ...) of the shards used.
        """
        folder = self.directory / phase
        self.failure_history = []
        if not folder.is_dir():
            return [], []
        index = {key: i for i, key in enumerate(keys)}
        remove_temporary_files(folder)
        found = []
        for data in sorted(folder.glob("*.parquet")):
            entry, records, problem = self._check(data, lazy)
            if problem:
                log.warning("shard %s is invalid: %s; it will be recomputed", data, problem)
                data.unlink(missing_ok=True)
                data.with_suffix(".json").unlink(missing_ok=True)
                continue
            self.generation = max(self.generation, int(entry.get("generation", 0)) + 1)
            if entry.get("condition_key") in index:
                found.append((entry, records))
        outputs, entries, self.failure_history = resolve_shards(found, index, replicates, retry,
                                                                root=self.directory if lazy else None)
        return outputs, entries

    def read_listed(self, phase: str, listed: Sequence[dict[str, Any]], keys: Sequence[str],
                    replicates: Sequence[int]) -> list[ChunkOutput]:
        """The chunks of the shards a manifest lists (``listed``: their entries), each checked against
        its entry's SHA-256 and row count; the records the run used (:func:`resolve_shards`, no retry).

        Raises
        ------
        ValueError
            A listed shard is missing or differs from its entry (the message names it).
        """
        found = []
        for entry in listed:
            path = self.directory / entry["file"]
            if not path.is_file():
                raise ValueError(f"shard {path} is missing")
            if _sha256(path) != entry["sha256"]:
                raise ValueError(f"shard {path} differs from its checksum in the manifest")
            records = pd.read_parquet(path)
            if len(records) != entry["rows"]:
                raise ValueError(f"shard {path} has {len(records)} rows, the manifest lists {entry['rows']}")
            found.append((entry, records))
        return resolve_shards(found, {k: i for i, k in enumerate(keys)}, replicates, retry=False)[0]


def _coverage(found, index, replicates) -> dict[tuple[int, Any], np.ndarray]:
    """(condition, subject) -> the highest generation of the shards covering each replicate (-1: none)."""
    size = {c: int(r) for c, r in enumerate(replicates)}
    for entry, _ in found:
        c = index[entry["condition_key"]]
        size[c] = max(size[c], int(entry["stop"]))
    top: dict[tuple[int, Any], np.ndarray] = {}
    for entry, _ in found:
        c, g = index[entry["condition_key"]], int(entry.get("generation", 0))
        for s in entry.get("subjects") or [None]:
            arr = top.setdefault((c, s), np.full(size[c], -1))
            np.maximum(arr[entry["start"]:entry["stop"]], g, out=arr[entry["start"]:entry["stop"]])
    return top


def resolve_shards(found, index: dict[str, int], replicates: Sequence[int], retry: bool, root: Path | None = None):
    """The chunks a phase's valid shards give: (outputs, entries used, failure history).

    A replicate's records come from the latest shard that covers it (highest ``generation``:
    every run into a directory writes one generation above the shards it found, and a new shard
    covers only replicates not covered, or left out to be retried). With ``retry``, replicates
    whose records carry an error are left out too, to be computed again. Replicates at or beyond
    a condition's count are dropped. The history lists the failed records left out.

    ``root``: the store's directory when ``found`` holds slim records (``ShardStore.load(lazy=True)``):
    each output's records are then the :class:`~simstudy.engine.stored.ShardPart` of its rows.
    """
    top = _coverage(found, index, replicates)
    outputs, entries, history = [], [], []
    for entry, records in found:
        c, g = index[entry["condition_key"]], int(entry.get("generation", 0))
        start, stop, subjects = int(entry["start"]), int(entry["stop"]), tuple(entry.get("subjects", ()))
        later = np.max([top[(c, s)][start:stop] for s in subjects or [None]], axis=0) > g
        excluded = later | (np.arange(start, stop) >= replicates[c])
        if "replicate" not in records:  # cannot be cut: used whole, or recomputed
            excluded[:] = excluded.any()
        else:
            rel = records["replicate"].to_numpy() - start
            failed = (records["error"].fillna("") != "").to_numpy() if "error" in records else np.zeros(len(rel), bool)
            if retry:
                excluded[rel[failed]] = True
            dropped = records[failed & excluded[rel] & (rel + start < replicates[c])]
            history += [{"condition_key": entry["condition_key"], "generation": g, "file": entry["file"],
                         **{k: v for k, v in row.items() if k in ("replicate", "subject", "error")}}
                        for row in dropped.to_dict("records")]
        parts = _kept_ranges(excluded, start)
        if parts:
            entries.append(entry)
        for a, b in parts:
            if root is not None:
                part = part_of(root / entry["file"], a, b, records, (a, b) == (start, stop), records.attrs["columns"])
            else:
                part = records if (a, b) == (start, stop) else \
                    records[(records["replicate"] >= a) & (records["replicate"] < b)].reset_index(drop=True)
            first = a == parts[0][0]  # the shard's timings and warnings are counted once
            outputs.append(ChunkOutput(Chunk(c, a, b, subjects), part, entry["wall_time"] if first else 0.0,
                                       entry["cpu_time"] if first else 0.0, "",
                                       entry.get("warnings", {}) if first else {}))
    return outputs, entries, history


def _slim_records(data: Path) -> pd.DataFrame:
    """The columns of a shard that resolve it (``replicate``, ``subject``, ``error``), with the names of
    all its columns in ``attrs["columns"]``."""
    import pyarrow.parquet as pq

    shard = pq.ParquetFile(data)
    names = list(shard.schema_arrow.names)
    slim = [c for c in ("replicate", "subject", "error") if c in names]
    records = shard.read(columns=slim).to_pandas() if slim else pd.DataFrame(index=range(shard.metadata.num_rows))
    records.attrs["columns"] = names
    return records


def _kept_ranges(excluded: np.ndarray, start: int) -> list[tuple[int, int]]:
    """Maximal ranges [a, b) of replicates not ``excluded`` (``excluded[i]`` is replicate ``start + i``)."""
    kept = np.flatnonzero(~excluded)
    if not len(kept):
        return []
    breaks = np.flatnonzero(np.diff(kept) > 1)
    firsts, lasts = np.r_[kept[0], kept[breaks + 1]], np.r_[kept[breaks], kept[-1]]
    return [(start + int(a), start + int(b) + 1) for a, b in zip(firsts, lasts)]
