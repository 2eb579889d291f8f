"""Rebuilding a run directory's final records from its checksummed shards (:func:`rebuild_records`).

The manifest lists, for every phase, the shards the run used (file, SHA-256, rows, replicate
range, generation) and its conditions; each listed shard is checked against its entry, the
records are resolved as the run resolved them (:func:`simstudy.engine.shards.resolve_shards`)
and put in (condition, replicate, subject) order, the main phase with its label columns. The
result equals the records the run wrote, byte for byte once written.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.engine.records import order_records
from simstudy.engine.shards import ShardStore
from simstudy.errors import UserError
from simstudy.studies.base import Study

__all__ = ["rebuild_records"]

_AGAIN = ("Run the study's command again with the same directory instead: it checks every shard and computes only "
          "what is missing.")


def rebuild_records(directory: Path, manifest: dict[str, Any], study: Study) -> dict[str, pd.DataFrame]:
    """The records of every phase of the run in ``directory``, from the shards its manifest lists.

    Raises
    ------
    UserError
        The manifest lists no shards (an older format, or a one-replicate debugging run), or a
        listed shard is missing or differs from its checksum.
    """
    phases = {study.main_phase: manifest, **(manifest.get("phases") or {})}
    store = ShardStore(Path(directory) / "shards", manifest.get("identity_hash", ""))
    records: dict[str, pd.DataFrame] = {}
    for name, info in phases.items():
        conditions, listed = info.get("conditions"), info.get("shards")
        if not conditions or listed is None or "subjects_order" not in info:
            raise UserError(f"{str(directory)!r} cannot be rebuilt from its shards: its manifest does not list the "
                            f"shards of phase {name!r} with their conditions. " + _AGAIN)
        keys = [c["condition_key"] for c in conditions]
        try:
            outputs = store.read_listed(name, listed, keys, [int(c["replicates"]) for c in conditions])
        except ValueError as exc:
            raise UserError(f"{str(directory)!r} cannot be rebuilt from its shards: {exc}. " + _AGAIN) from None
        outputs.sort(key=lambda o: o.chunk)
        frames = [o.records for o in outputs]
        phase_records = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        records[name] = order_records(phase_records, keys, info.get("subjects_order") or ())
    main = records[study.main_phase]
    for i, (label, value) in enumerate((manifest.get("record_labels") or {}).items()):
        main.insert(i, label, value)
    return records
