"""Merge the run directories of a Hydra multirun into tidy tables and figures.

Each run directory (one per job of ``simstudy -m ...``) holds ``summary.csv`` (and
``tests.csv``), ``config.yaml`` (its full configuration) and ``overrides.yaml`` (the job's
command-line overrides). The overrides whose values differ between runs are the sweep's
parameters and become columns (named by their key, e.g. ``population.rho``, ``study.K``), so one
table holds the whole grid; overrides every run shares are listed once as fixed settings.

Runs are grouped by their full configuration (``config.yaml`` without ``runner``, which changes
how a run is computed, never its numbers): runs with the same swept settings must have the same
configuration, else they would be drawn as one series. Where they differ (two seeds, runs
made by hand without overrides), the fields that differ are named and become parameters too, so
those runs are kept apart, never merged. Runs are grouped by study: tables of different studies
are never mixed (with several studies, each gets its own files, prefixed by the study's name).
A run directory without ``summary.csv`` (unfinished, or caught mid-write) is named in the
headlines and the report, never dropped silently. The figures come from the study
(:meth:`simstudy.studies.base.Study.collect_figures`). Every file is written through
:mod:`simstudy.files` (a temporary name, then a rename): a collect interrupted while writing
leaves each file as it was before, or complete.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from simstudy.errors import UserError
from simstudy.files import write_csv_atomic, write_text_atomic
from simstudy.report.html import sweep_report_html
from simstudy.report.latex import write_latex_tables
from simstudy.report.tables import frame_to_markdown

__all__ = ["CollectResult", "SweepLayout", "collect", "find_runs", "find_unfinished", "run_overrides", "run_headline",
           "sweep_layout"]

_NOT_PARAMETERS = ("hydra.", "runner.", "+hydra", "sweep")


@dataclass
class CollectResult:
    """The merged tables (of the first study when there are several) and where they were written."""

    summary: pd.DataFrame
    tests: pd.DataFrame | None
    parameters: list[str]
    files: list[Path]
    studies: list[str] = field(default_factory=list)
    headlines: list[str] = field(default_factory=list)
    #: Per study: parameters, runs (dir, overrides, headline, manifest), tables, figure files
    #: (what the sweep's HTML report shows).
    parts: dict = field(default_factory=dict)
    #: Run directories left out (unfinished: no summary.csv), with why.
    left_out: list[str] = field(default_factory=list)


def find_runs(sweep_dir: Path) -> list[Path]:
    """Run directories under ``sweep_dir`` (those holding summary.csv and config.yaml)."""
    return sorted(p.parent for p in Path(sweep_dir).rglob("summary.csv")
                  if (p.parent / "config.yaml").is_file() and "shards" not in p.parts
                  and "reaggregated" not in p.parts)


def find_unfinished(sweep_dir: Path) -> list[Path]:
    """Run directories under ``sweep_dir`` that started (``run_state.json`` or ``config.yaml``) but
    hold no ``summary.csv``: unfinished, or caught while writing their report."""
    started = {p.parent for name in ("run_state.json", "config.yaml") for p in Path(sweep_dir).rglob(name)}
    return sorted(d for d in started if not (d / "summary.csv").is_file() and ".hydra" not in d.parts
                  and "shards" not in d.parts and "reaggregated" not in d.parts)


def run_overrides(run_dir: Path) -> dict[str, object]:
    """The command-line overrides of a run (``overrides.yaml``, or Hydra's ``.hydra/overrides.yaml``)."""
    path = run_dir / "overrides.yaml"
    if not path.is_file():
        path = run_dir / ".hydra" / "overrides.yaml"
    if not path.is_file():
        return {}
    out = {}
    for item in yaml.safe_load(path.read_text()) or []:
        key, _, value = str(item).partition("=")
        key = key.lstrip("+~")
        if key.startswith(_NOT_PARAMETERS):
            continue
        parsed = yaml.safe_load(value) if value else None
        out[key] = str(parsed) if isinstance(parsed, (list, dict)) else parsed
    return out


def _study_of(run: Path) -> str:
    try:
        config = yaml.safe_load((run / "config.yaml").read_text())
        return str(config["study"]["name"])
    except Exception as exc:
        raise UserError(f"{run}/config.yaml is unreadable ({type(exc).__name__}: {exc}); remove that run directory "
                        "from the sweep or re-run it.") from None


def _configuration(run: Path) -> dict[str, str]:
    """A run's configuration as dotted key -> value (JSON text), without ``runner`` and ``hydra``."""
    config = yaml.safe_load((run / "config.yaml").read_text()) or {}
    flat: dict[str, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, f"{prefix}{key}.")
        else:
            flat[prefix[:-1]] = json.dumps(node, sort_keys=True, default=str)

    walk({k: v for k, v in config.items() if k not in ("runner", "hydra")} if isinstance(config, dict) else {}, "")
    return flat


@dataclass
class SweepLayout:
    """How the runs of one study are told apart (:func:`sweep_layout`).

    Attributes
    ----------
    parameters : list of str
        The fields that vary between runs: swept overrides first, then the fields that keep
        apart runs with the same swept settings (``separated``).
    values : dict
        Run -> parameter -> value.
    fixed : dict
        Overrides every run shares (not parameters: they do not vary).
    separated : list of str
        Fields not swept by the overrides that differ between runs with the same swept settings.
    """

    parameters: list[str]
    values: dict[Path, dict[str, Any]]
    fixed: dict[str, Any]
    separated: list[str]


def sweep_layout(runs: list[Path]) -> SweepLayout:
    """The parameters of a sweep: the overrides that vary between runs, plus every configuration
    field that differs between runs whose varying overrides are equal (see the module docstring)."""
    overrides = {run: run_overrides(run) for run in runs}
    swept: list[str] = []
    for run in runs:
        swept += [k for k in overrides[run] if k not in swept]
    varying = [k for k in swept if len({repr(overrides[r].get(k)) for r in runs}) > 1]
    fixed = {k: overrides[runs[0]].get(k) for k in swept if k not in varying}
    configs = {run: _configuration(run) for run in runs}
    groups: dict[tuple, list[Path]] = {}
    for run in runs:
        groups.setdefault(tuple(repr(overrides[run].get(k)) for k in varying), []).append(run)
    separated: list[str] = []
    for members in groups.values():
        keys = sorted({k for m in members for k in configs[m]})
        separated += [k for k in keys if k not in separated and k not in varying
                      and len({configs[m].get(k) for m in members}) > 1]
    values = {}
    for run in runs:
        values[run] = {k: overrides[run].get(k) for k in varying}
        for k in separated:
            value = json.loads(configs[run][k]) if k in configs[run] else None
            values[run][k] = str(value) if isinstance(value, (list, dict)) else value
    return SweepLayout(varying + separated, values, fixed, separated)


def _merge(runs: list[Path], name: str, parameters: list[str],
           values_of: dict[Path, dict[str, Any]]) -> pd.DataFrame | None:
    frames = []
    for run in runs:
        path = run / name
        if not path.is_file():
            continue
        try:
            frame = pd.read_csv(path)
            values = values_of[run]
        except Exception as exc:  # an empty, truncated or foreign file
            raise UserError(f"{path} is unreadable ({type(exc).__name__}: {exc}); remove that run directory from the "
                            "sweep or re-run it.") from None
        for i, key in enumerate(k for k in parameters if k not in frame.columns):
            frame.insert(i, key, values.get(key))
        frame.insert(len(parameters), "run_dir", str(run))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else None


def run_headline(run: Path) -> str:
    """A run's headline: its ``headline.txt``, else recomputed from its records (a run directory
    without that file), else a line saying why there is none."""
    path = run / "headline.txt"
    if path.is_file():
        return path.read_text().rstrip()
    try:
        from simstudy.results import load_run

        return load_run(run).headline()
    except Exception as exc:  # a run without records: the sweep is still collected
        return f"(no headline: {type(exc).__name__}: {exc})"


def _manifest(run: Path) -> dict:
    import json

    try:
        return json.loads((run / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


def _layout_notes(layout: SweepLayout) -> list[str]:
    notes = []
    if layout.fixed:
        notes.append("Fixed in every run: " + ", ".join(f"{k}={v}" for k, v in layout.fixed.items()) + ".")
    if layout.separated:
        notes.append(f"Runs with the same swept settings differ in {', '.join(layout.separated)} (not swept by their "
                     "overrides): these fields are kept as parameters, so those runs are never merged.")
    return notes


def _collect_study(sweep_dir: Path, study_name: str, runs: list[Path], prefix: str) -> CollectResult:
    from simstudy.engine.backends.figures import save_figures
    from simstudy.studies.resolve import resolve_study

    try:
        layout = sweep_layout(runs)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise UserError(f"a config.yaml of the sweep is unreadable ({type(exc).__name__}: {exc}); remove that run "
                        "directory from the sweep or re-run it.") from None
    parameters = layout.parameters
    summary = _merge(runs, "summary.csv", parameters, layout.values)
    tests = _merge(runs, "tests.csv", parameters, layout.values)
    files = [sweep_dir / f"{prefix}collected_summary.csv"]
    write_csv_atomic(summary, files[-1])
    if tests is not None:
        files.append(sweep_dir / f"{prefix}collected_tests.csv")
        write_csv_atomic(tests, files[-1])
    notes = _layout_notes(layout)
    text = [f"# Sweep {sweep_dir}: {len(runs)} runs of study {study_name}\n",
            f"Parameters (what varies between the runs): {', '.join(parameters) or 'none'}.\n",
            *[note + "\n" for note in notes], frame_to_markdown(summary)]
    files.append(sweep_dir / f"{prefix}collected.md")
    write_text_atomic(files[-1], "\n".join(text))
    study = resolve_study(study_name)
    figures = save_figures(study.collect_figures(summary, tests, parameters), sweep_dir / f"{prefix}collected_figures")
    files += list(figures.values())
    files.append(write_latex_tables({f"Collected summary of study {study_name} ({len(runs)} runs)": summary},
                                    sweep_dir / f"{prefix}collected.tex", prefix=f"{study_name}-sweep"))
    runs_info = [(run, layout.values[run], run_headline(run), _manifest(run)) for run in runs]
    headlines = [f"{study_name}: {len(runs)} runs over {', '.join(parameters) or 'no varying parameter'}", *notes]
    for run, _, text, _ in runs_info:
        setting = ", ".join(f"{k}={v}" for k, v in layout.values[run].items()) or str(run)
        headlines += [f"-- {setting}", text]
    part = {"parameters": parameters, "runs": runs_info, "summary": summary, "tests": tests, "figures": figures,
            "notes": notes}
    return CollectResult(summary, tests, parameters, files, [study_name], headlines, {study_name: part})


def collect(sweep_dir: str | Path) -> CollectResult:
    """Merge every run under ``sweep_dir`` into ``collected_summary.csv``,
    ``collected_tests.csv``, ``collected.md``, ``collected.tex`` and ``collected_figures/`` (per
    study), and write ``collected_report.html`` (every study, every run's headline, figures
    embedded). The headlines (every run's, with its swept settings) are in the result.

    Raises
    ------
    UserError
        When no finished run directory is found under ``sweep_dir``.
    """
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise UserError(f"{str(sweep_dir)!r} is not a directory: give the sweep directory of a finished "
                        "'simstudy -m ...' run (hydra.sweep.dir).")
    runs = find_runs(sweep_dir)
    unfinished = find_unfinished(sweep_dir)
    left_out = [f"{d} (unfinished: no summary.csv; run its command again to finish it)" for d in unfinished]
    if not runs:
        raise UserError(f"no finished runs (summary.csv + config.yaml) under {str(sweep_dir)!r}"
                        f"{'; unfinished: ' + '; '.join(left_out) if left_out else ''}; give the sweep "
                        "directory of a finished 'simstudy -m ...' run (hydra.sweep.dir).")
    by_study: dict[str, list[Path]] = {}
    for run in runs:
        by_study.setdefault(_study_of(run), []).append(run)
    results = [_collect_study(sweep_dir, name, group, f"{name}_" if len(by_study) > 1 else "")
               for name, group in by_study.items()]
    first = results[0]
    parts = {name: part for r in results for name, part in r.parts.items()}
    report = sweep_dir / "collected_report.html"
    write_text_atomic(report, sweep_report_html(sweep_dir, parts, left_out))
    headlines = [line for r in results for line in r.headlines]
    if left_out:
        headlines.insert(0, f"left out {len(left_out)} run director{'y' if len(left_out) == 1 else 'ies'}: "
                            + "; ".join(left_out))
    if len(results) > 1:
        headlines.insert(0, f"the sweep holds runs of {len(results)} studies ({', '.join(by_study)}): each has its "
                            "own files, prefixed by its name")
    return CollectResult(first.summary, first.tests, first.parameters,
                         [f for r in results for f in r.files] + [report], list(by_study), headlines, parts, left_out)
