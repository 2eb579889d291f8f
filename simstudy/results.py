"""Reading a finished run directory back: :func:`load_run` gives the :class:`StudyResult` a run
returned (records read, tables recomputed), optionally aggregated with other ``report`` settings."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simstudy.engine.records import read_records
from simstudy.engine.result import RECORDS_FILE, StudyResult
from simstudy.errors import UserError
from simstudy.studies.resolve import make_config, resolve_study
from simstudy.studies.targets import aggregate_tables

__all__ = ["RECORDS_FILE", "StudyResult", "load_run"]


def load_run(directory: str | Path, **settings: Any) -> StudyResult:
    """The :class:`StudyResult` of a finished run directory, re-aggregated from its records.

    Parameters
    ----------
    directory : path-like
        A run directory (``config.yaml``, ``replicates.parquet``, ``manifest.json``).
    **settings
        ``report`` settings to aggregate with instead of the run's (e.g. ``alpha=0.01``).

    Raises
    ------
    UserError
        The directory is missing, is not a finished run, or its files are unreadable.
    """
    import yaml

    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{str(directory)!r} is not a directory: give the directory of a finished run "
                        "(it holds config.yaml and replicates.parquet).")
    config_file, records_file = directory / "config.yaml", directory / RECORDS_FILE
    for path in (config_file, records_file):
        if not path.is_file():
            raise UserError(f"{str(directory)!r} is not a finished run: {path.name} is missing (a run writes it when "
                            "all replicates are done; an interrupted run resumes with the same command).")
    try:
        config = yaml.safe_load(config_file.read_text())
        cls = resolve_study(config["study"].get("_target_") or config["study"]["name"])
        study_config = make_config(cls, {k: v for k, v in config["study"].items() if k != "_target_"})
        study = cls(study_config)
        phase_records = {study.main_phase: read_records(records_file)}
        for path in sorted(directory.glob("*.parquet")):
            if path.name != RECORDS_FILE:
                phase_records[path.stem] = read_records(path)
        manifest_path = directory / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    except UserError:
        raise
    except Exception as exc:  # unreadable YAML / Parquet / JSON
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        fix = ("Run the study's command again with the same hydra.run.dir: it rebuilds these files from the run's "
               "shards without recomputing them." if (directory / "shards").is_dir()
               else "Run the study again into a new directory.")
        raise UserError(f"{str(directory)!r} could not be read ({detail}); the run's files are damaged. {fix}") from None
    result = StudyResult(study, config, phase_records, aggregate_tables(study, phase_records), manifest, directory)
    return result.reaggregate(**settings) if settings else result
