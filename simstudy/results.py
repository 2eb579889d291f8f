"""Reading a finished run directory back: :func:`load_run` gives the :class:`StudyResult` a run
returned (records read, tables recomputed), optionally aggregated with other ``report`` settings."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from simstudy.engine.rebuild import rebuild_records
from simstudy.engine.records import read_records
from simstudy.engine.verify import MANIFEST_FILE, read_manifest, rebuild_advice, verify_config, verify_records
from simstudy.engine.result import RECORDS_FILE, StudyResult
from simstudy.errors import UserError
from simstudy.studies.resolve import make_config, resolve_study
from simstudy.studies.targets import aggregate_tables

__all__ = ["RECORDS_FILE", "StudyResult", "load_run"]


def load_run(directory: str | Path, rebuild: bool = False, **settings: Any) -> StudyResult:
    """The :class:`StudyResult` of a finished run directory, re-aggregated from its records.

    The records read back are verified against the manifest (each file's SHA-256 and row
    count, the replicate count) and ``config.yaml`` against the configuration the run recorded;
    a directory caught while its files were written is refused as incomplete.

    Parameters
    ----------
    directory : path-like
        A run directory (``config.yaml``, ``replicates.parquet``, ``manifest.json``).
    rebuild : bool
        Rebuild the final records, tables, figures, report and ``config.yaml`` from the shards
        the manifest lists (each checked against its SHA-256) and write them into ``directory``,
        instead of reading them: the repair for records that were edited, truncated or deleted,
        or a directory caught mid-write. Nothing is recomputed.
    **settings
        ``report`` settings to aggregate with instead of the run's (e.g. ``alpha=0.01``).

    Raises
    ------
    UserError
        The directory is missing, is not a finished run, its files are unreadable or differ from
        what the run wrote (the message says what differs and how to rebuild).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{str(directory)!r} is not a directory: give the directory of a finished run "
                        "(it holds config.yaml and replicates.parquet).")
    result = _rebuild(directory) if rebuild else _read(directory)
    return result.reaggregate(**settings) if settings else result


def _study(config: dict[str, Any]):
    cls = resolve_study(config["study"].get("_target_") or config["study"]["name"])
    return cls(make_config(cls, {k: v for k, v in config["study"].items() if k != "_target_"}))


def _damaged(directory: Path, exc: Exception) -> UserError:
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    return UserError(f"{str(directory)!r} could not be read ({detail}); the run's files are damaged. "
                     + rebuild_advice(directory))


def _missing_file(directory: Path, manifest: dict[str, Any], name: str) -> str:
    """Why a finished run's ``name`` is missing, and how to get it back."""
    written = (manifest.get("files") or {}).get(name)
    if not isinstance(written, dict):
        return (f"{str(directory)!r} is not a finished run: {name} is missing (a run writes it when all replicates "
                "are done). " + rebuild_advice(directory))
    what = ", ".join(([f"{written['rows']:,} rows"] if isinstance(written.get("rows"), int) else [])
                     + ([f"{written['bytes'] / 1e6:,.1f} MB"] if isinstance(written.get("bytes"), int) else []))
    message = (f"{str(directory)!r}: {name} is missing, though the manifest says the run finished and wrote it"
               + (f" ({what})" if what else "") + ": it was deleted, or the folder was copied or committed "
               "without it. ")
    if (directory / "shards").is_dir():
        return message + rebuild_advice(directory)
    message += ("The folder holds no shards to rebuild it from: run the study's command again into a new directory "
                "(the same config and seed give the same records).")
    if manifest.get("study") == "benchmark" and (directory / "cells.parquet").is_file():
        message += (" A benchmark's cell tables need no replicates: simstudy.benchmark.load_benchmark("
                    f"{str(directory)!r}) reads them.")
    return message


def _read(directory: Path) -> StudyResult:
    import yaml

    config_file, records_file = directory / "config.yaml", directory / RECORDS_FILE
    manifest = read_manifest(directory)
    for path in (config_file, records_file):
        if not path.is_file():
            raise UserError(_missing_file(directory, manifest, path.name))
    try:
        config = yaml.safe_load(config_file.read_text())
        study = _study(config)
    except UserError:
        raise
    except Exception as exc:  # unreadable YAML, a config without a study
        raise _damaged(directory, exc) from None
    verify_config(directory, manifest, config)
    phase_records = {}
    for path in [records_file] + sorted(p for p in directory.glob("*.parquet") if p.name != RECORDS_FILE):
        try:
            frame = read_records(path)
        except Exception as exc:  # a truncated or unreadable Parquet file
            raise _damaged(directory, exc) from None
        verify_records(directory, manifest, path.name, frame)
        phase_records[study.main_phase if path == records_file else path.stem] = frame
    return StudyResult(study, config, phase_records, aggregate_tables(study, phase_records), manifest, directory)


def _rebuild(directory: Path) -> StudyResult:
    """Rebuild the final files of ``directory`` from its shards (see :func:`load_run`), under the run's lock."""
    import yaml

    from simstudy.engine.rundir import DirectoryNames, RunDirectory

    path = directory / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text())
        config = manifest.get("config") or yaml.safe_load((directory / "config.yaml").read_text())
        study = _study(config)
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"{str(directory)!r} cannot be rebuilt: {MANIFEST_FILE} or config.yaml is unreadable "
                        f"({type(exc).__name__}). Run the study's command again with the same directory: it checks "
                        "every shard and computes only what is missing.") from None
    run_dir = RunDirectory(directory, DirectoryNames("directory", "rebuild it later")).lock()
    try:
        records = rebuild_records(directory, manifest, study)
        manifest = {**manifest, "rebuilt_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        result = StudyResult(study, config, records, aggregate_tables(study, records), manifest, directory)
        result.write(directory)
    finally:
        run_dir.release()
    return result
