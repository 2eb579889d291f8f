"""Results first, files second: the object every run returns.

:class:`StudyResult` holds the records (one DataFrame per phase), the aggregated tables and the
manifest; its methods draw the figures, print the headline and write the files. A run with
``out=None`` never touches the disk; :meth:`StudyResult.write` writes the same files the CLI
does, and :func:`simstudy.results.load_run` gives the same object back from a run directory
(records are read, tables recomputed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.engine.records import write_records
from simstudy.engine.stored import StoredRecords
from simstudy.engine.verify import COMPLETE, MANIFEST_FILE, WRITING, check_output_folder, file_entries
from simstudy.errors import ConfigError
from simstudy.files import remove_temporary_files, write_csv_atomic, write_text_atomic
from simstudy.studies.base import Study, StudyTables
from simstudy.studies.targets import aggregate_tables

__all__ = ["RECORDS_FILE", "StudyResult"]

RECORDS_FILE = "replicates.parquet"


@dataclass
class StudyResult:
    """Everything a run produced.

    Attributes
    ----------
    study : Study
        The study instance (its config is ``study.config``).
    config : dict
        The configuration as recorded in ``config.yaml``.
    phase_records : dict of DataFrame or StoredRecords
        Records of every phase (``records`` is the main one). A study that streams its records
        (``Study.streams_records``) run into a directory keeps the main phase's on disk
        (:class:`~simstudy.engine.stored.StoredRecords`): :attr:`records` reads them when first asked.
    tables : StudyTables
        ``summary``, ``tests`` and the study's other tables.
    manifest : dict
        Provenance: versions, seeds, shards, timings, failures, warnings.
    run_dir : Path or None
        Where the run was written (None for an in-memory run).
    """

    study: Study
    config: dict[str, Any]
    phase_records: dict[str, pd.DataFrame | StoredRecords]
    tables: StudyTables
    manifest: dict[str, Any] = field(default_factory=dict)
    run_dir: Path | None = None

    @property
    def records(self) -> pd.DataFrame:
        """One row per replicate (and subject) of the main phase (read from the shards when they are on disk)."""
        records = self.phase_records[self.study.main_phase]
        if isinstance(records, StoredRecords):
            records = self.phase_records[self.study.main_phase] = records.frame()
        return records

    @property
    def summary(self) -> pd.DataFrame:
        return self.tables.summary

    @property
    def tests(self) -> pd.DataFrame | None:
        return self.tables.tests

    @property
    def wall_time(self) -> float:
        return float(self.manifest.get("wall_time_s", float("nan")))

    def figures(self) -> dict[str, Any]:
        """The study's figures as matplotlib Figures, by name.

        They are pyplot figures, as ``plt.subplots`` gives: a notebook shows them, and a script that
        draws many should close them when done (``plt.close(fig)`` or ``plt.close("all")``).
        """
        from simstudy.report.figures import draw_figure

        return {name: draw_figure(figure) for name, figure in self._figure_makers().items()}

    def _figure_makers(self) -> dict[str, Any]:
        """What :meth:`Study.figures` gives: Figures or figure makers, by name."""
        from simstudy.engine.backends.prewarm import wait_for_prewarm

        wait_for_prewarm()  # matplotlib is never used from two threads at once
        return self.study.figures(self.tables)

    def headline(self) -> str:
        """The key result in a few lines (what the terminal shows at the end of a run)."""
        from simstudy.studies.targets import target_headline

        line = target_headline(self.tables.extra.get("targets"))
        text = self.study.headline(self.tables)
        return f"{text}\n{line}" if text and line else text or line

    def report_tables(self) -> dict[str, pd.DataFrame]:
        """The tables a reader sees, title -> frame, every number with its Monte Carlo error."""
        from simstudy.studies.targets import target_report

        tables = self.study.report_tables(self.tables)
        targets = self.tables.extra.get("targets")
        if targets is not None and len(targets):
            tables["Monte Carlo error targets per condition: 95% half-width achieved, replicates run, cap"] = \
                target_report(targets)
        return tables

    def html(self) -> str:
        """The self-contained HTML report (what ``report.html`` holds), figures drawn anew."""
        from simstudy.report.html import run_report_html

        return run_report_html(self)

    def _repr_html_(self) -> str:
        """What Jupyter shows: headline, tables with Monte Carlo errors, figures inline."""
        from simstudy.report.notebook import study_result_html

        return study_result_html(self)

    def latex(self) -> str:
        """:meth:`report_tables` as LaTeX booktabs tables (what ``tables.tex`` holds)."""
        from simstudy.report.latex import frame_to_latex

        return "\n".join(frame_to_latex(frame, title, f"{self.study.name}:{i}")
                          for i, (title, frame) in enumerate(self.report_tables().items(), 1))

    def write(self, directory: str | Path, records: bool = True) -> list[Path]:
        """Write records (``replicates.parquet`` and ``<phase>.parquet``), ``summary.csv``,
        ``tests.csv``, the study's other tables, Markdown tables, ``figures/*.png``,
        ``headline.txt``, ``tables.tex`` (booktabs), ``report.html`` (self-contained),
        ``config.yaml`` and ``manifest.json`` into ``directory``; returns the files written.

        Every file is written to a temporary name and renamed (:func:`simstudy.files.atomic_path`).
        The manifest goes first with ``status: "writing"`` and last with ``status: "complete"``
        and each file's SHA-256 (:mod:`simstudy.engine.verify`), so a directory caught mid-write
        is detectably incomplete.

        Raises
        ------
        RunDirectoryError
            ``directory`` holds foreign files or another run (this run's own directory, or one
            holding a run of the same identity, is rewritten).
        """
        from simstudy.engine.manifest import write_json

        directory = Path(directory)
        check_output_folder(directory, self.manifest.get("identity_hash"), self.run_dir,
                            self.manifest.get("data_fingerprints"))
        directory.mkdir(parents=True, exist_ok=True)
        for folder in (directory, directory / "figures"):
            remove_temporary_files(folder)
        if self.manifest:
            write_json(directory / MANIFEST_FILE, {**self.manifest, "status": WRITING})
        rows: dict[Path, int] = {}
        if records:
            for phase, frame in self.phase_records.items():
                name = RECORDS_FILE if phase == self.study.main_phase else f"{phase}.parquet"
                path = directory / name
                rows[frame.write(path) if isinstance(frame, StoredRecords) else write_records(frame, path)] = len(frame)
        files = list(rows) + self._write_report(directory)
        if self.config:
            import yaml

            files.append(write_text_atomic(directory / "config.yaml", yaml.safe_dump(self.config, sort_keys=False)))
        if self.manifest:
            kept = {} if records else {k: v for k, v in self.manifest.get("files", {}).items()
                                       if k.endswith(".parquet") and (directory / k).is_file()}
            self.manifest = {**self.manifest, "status": COMPLETE,
                             "files": {**kept, **file_entries(directory, files, rows)}}
            files.append(write_json(directory / MANIFEST_FILE, self.manifest))
        return files

    def _write_report(self, directory: Path) -> list[Path]:
        """The tables, figures, headline, LaTeX tables and HTML report (see :meth:`write`)."""
        from simstudy.engine.backends.figures import start_saving_figures
        from simstudy.report.html import REPORT_FILE, run_report_html
        from simstudy.report.latex import write_latex_tables

        files = [write_csv_atomic(self.tables.summary, directory / "summary.csv")]
        if self.tables.tests is not None:
            files.append(write_csv_atomic(self.tables.tests, directory / "tests.csv"))
        for name, frame in self.tables.extra.items():
            files.append(write_csv_atomic(frame, directory / f"{name}.csv"))
        saving = start_saving_figures(self._figure_makers(), directory / "figures")  # forked children draw them
        try:
            files += self.study.write_tables(self.tables, directory)
            figures_at = len(files)
            headline, report_tables = self.headline(), self.report_tables()
            files.append(write_text_atomic(directory / "headline.txt", headline + "\n"))
            files.append(write_latex_tables(report_tables, directory / "tables.tex", prefix=self.study.name))
        except BaseException:  # a full disk, Ctrl-C...: the children are stopped, nothing more is drawn
            saving.cancel()
            raise
        figures = saving.wait()
        files[figures_at:figures_at] = figures.values()
        html = run_report_html(self, figures, report_tables=report_tables, headline=headline)
        files.append(write_text_atomic(directory / REPORT_FILE, html))
        return list(dict.fromkeys(files))  # a study may write a table the engine writes too (once in the list)

    def reaggregate(self, **settings: Any) -> "StudyResult":
        """The same records aggregated with other ``report`` settings (e.g. ``alpha=0.01``).

        Raises
        ------
        ConfigError
            A setting that would change the records (use a new run for those) or an invalid value.
        """
        from simstudy.schema import typed_settings, unknown_key

        allowed = set(self.study.Config.field_names("report"))
        fields = set(self.study.Config.field_names()) - {"name"}
        for key in settings:
            if key not in fields:
                raise unknown_key("study", str(key), fields, f"study {self.study.name!r}")
            if key not in allowed and not allowed:
                raise ConfigError(f"study.{key} cannot be re-aggregated: study {self.study.name!r} has no setting that "
                                  "changes only its tables; its numbers come from the records themselves.")
            if key not in allowed:
                raise ConfigError(f"study.{key} cannot be changed without recomputing the records (re-aggregation can "
                                  f"change only {', '.join(f'study.{k}' for k in sorted(allowed))}); run the study "
                                  "again with the new value into a new run directory.")
        settings = typed_settings(self.study.Config, settings, "study", f"study {self.study.name!r}")
        config = type(self.study.config)(**{**self.study.config.as_dict(), **settings})
        config.validate()
        study = type(self.study)(config, self.study.population, self.study.learner, self.study.loss)
        tables = aggregate_tables(study, self.phase_records)
        resolved = {**self.config, "study": config.as_dict()}
        manifest = {**self.manifest, "reaggregated_with": {f"study.{k}": v for k, v in settings.items()}}
        return StudyResult(study, resolved, self.phase_records, tables, manifest, self.run_dir)


