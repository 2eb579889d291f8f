"""Merge the run directories of a Hydra multirun into tidy tables and figures.

Each run directory (one per job of ``simstudy -m ...``) holds ``summary.csv`` (and
``tests.csv``), ``config.yaml`` and ``overrides.yaml`` (the job's command-line overrides). The
swept overrides become columns (named by their key, e.g. ``population.rho``, ``study.K``), so one
table holds the whole grid. Runs are grouped by study: tables of different studies are never
mixed (with several studies, each gets its own files, prefixed by the study's name). The
figures come from the study (:meth:`simstudy.studies.base.Study.collect_figures`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from simstudy.errors import UserError
from simstudy.report.html import sweep_report_html
from simstudy.report.latex import write_latex_tables
from simstudy.report.tables import frame_to_markdown

__all__ = ["CollectResult", "collect", "find_runs", "run_overrides", "run_headline"]

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


def find_runs(sweep_dir: Path) -> list[Path]:
    """Run directories under ``sweep_dir`` (those holding summary.csv and config.yaml)."""
    return sorted(p.parent for p in Path(sweep_dir).rglob("summary.csv")
                  if (p.parent / "config.yaml").is_file() and "shards" not in p.parts
                  and "reaggregated" not in p.parts)


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


def _merge(runs: list[Path], name: str, parameters: list[str]) -> pd.DataFrame | None:
    frames = []
    for run in runs:
        path = run / name
        if not path.is_file():
            continue
        try:
            frame = pd.read_csv(path)
            values = run_overrides(run)
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


def _collect_study(sweep_dir: Path, study_name: str, runs: list[Path], prefix: str) -> CollectResult:
    from simstudy.engine.backends.figures import save_figures
    from simstudy.studies.resolve import resolve_study

    parameters: list[str] = []
    for run in runs:
        parameters += [k for k in run_overrides(run) if k not in parameters]
    summary = _merge(runs, "summary.csv", parameters)
    tests = _merge(runs, "tests.csv", parameters)
    files = [sweep_dir / f"{prefix}collected_summary.csv"]
    summary.to_csv(files[-1], index=False)
    if tests is not None:
        files.append(sweep_dir / f"{prefix}collected_tests.csv")
        tests.to_csv(files[-1], index=False)
    text = [f"# Sweep {sweep_dir}: {len(runs)} runs of study {study_name}, parameters {parameters}\n",
            frame_to_markdown(summary)]
    files.append(sweep_dir / f"{prefix}collected.md")
    files[-1].write_text("\n".join(text))
    study = resolve_study(study_name)
    figures = save_figures(study.collect_figures(summary, tests, parameters), sweep_dir / f"{prefix}collected_figures")
    files += list(figures.values())
    files.append(write_latex_tables({f"Collected summary of study {study_name} ({len(runs)} runs)": summary},
                                    sweep_dir / f"{prefix}collected.tex", prefix=f"{study_name}-sweep"))
    runs_info = [(run, run_overrides(run), run_headline(run), _manifest(run)) for run in runs]
    headlines = [f"{study_name}: {len(runs)} runs over {', '.join(parameters) or 'no swept parameter'}"]
    for run, overrides, text, _ in runs_info:
        setting = ", ".join(f"{k}={v}" for k, v in overrides.items() if k in parameters) or str(run)
        headlines += [f"-- {setting}", text]
    part = {"parameters": parameters, "runs": runs_info, "summary": summary, "tests": tests, "figures": figures}
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
    if not runs:
        raise UserError(f"no finished runs (summary.csv + config.yaml) under {str(sweep_dir)!r}; give the sweep "
                        "directory of a finished 'simstudy -m ...' run (hydra.sweep.dir).")
    by_study: dict[str, list[Path]] = {}
    for run in runs:
        by_study.setdefault(_study_of(run), []).append(run)
    results = [_collect_study(sweep_dir, name, group, f"{name}_" if len(by_study) > 1 else "")
               for name, group in by_study.items()]
    first = results[0]
    parts = {name: part for r in results for name, part in r.parts.items()}
    report = sweep_dir / "collected_report.html"
    report.write_text(sweep_report_html(sweep_dir, parts), encoding="utf-8")
    headlines = [line for r in results for line in r.headlines]
    if len(results) > 1:
        headlines.insert(0, f"the sweep holds runs of {len(results)} studies ({', '.join(by_study)}): each has its "
                            "own files, prefixed by its name")
    return CollectResult(first.summary, first.tests, first.parameters,
                         [f for r in results for f in r.files] + [report], list(by_study), headlines, parts)
