"""``simstudy-report RUN_DIR``: re-aggregate a finished run from its records."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from simstudy.cli.console import disk_message, fail, setup_logging
from simstudy.errors import ConfigError, UserError

__all__ = ["report_main"]


def report_main(argv: list[str] | None = None) -> None:
    """``simstudy-report RUN_DIR``: re-aggregate a finished run from its records.

    Changes only aggregation settings (the study's ``report`` fields, e.g. its test level); the
    new tables and figures are written beside the run's, in RUN_DIR/reaggregated/<settings>/.
    The records are verified against the run's manifest first; ``--rebuild`` rebuilds them (and
    every final file) from the run's checksummed shards.
    """
    import argparse

    from simstudy.results import load_run

    parser = argparse.ArgumentParser(
        prog="simstudy-report", description=report_main.__doc__,
        epilog="example: simstudy-report runs/letter study.alpha=0.01")
    parser.add_argument("run_dir", help="run directory holding config.yaml and replicates.parquet")
    parser.add_argument("settings", nargs="*", metavar="study.KEY=VALUE",
                        help="aggregation settings of the study (its 'report' fields, e.g. study.alpha); "
                             "values are YAML (0.01, [0,0.5])")
    parser.add_argument("--rebuild", action="store_true",
                        help="rebuild the records, tables, figures and report from the run's checksummed shards "
                             "(after an edit, a truncated file or a run stopped while writing); nothing is recomputed")
    args = parser.parse_args(argv)
    try:
        settings = _report_settings(args.settings)
    except UserError as exc:
        fail("simstudy-report", " ".join(str(exc).split()))
    setup_logging()
    try:
        result = load_run(args.run_dir, rebuild=args.rebuild, **settings)
        out = Path(args.run_dir)  # the run's own settings: the same tables, rewritten from the records
        if args.rebuild and not settings:  # load_run wrote every file
            files = sorted(p for p in out.rglob("*") if p.is_file() and "shards" not in p.parts)
        elif settings:  # other settings: beside the run's tables, never over them
            tag = "_".join(f"{k}={'-'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in settings.items())
            out = out / "reaggregated" / tag
            files = result.write(out, records=False)
        else:
            files = result.write(out, records=False)
    except UserError as exc:
        fail("simstudy-report", " ".join(str(exc).split()))
    except OSError as exc:
        fail("simstudy-report", disk_message(exc, args.run_dir))
    except KeyboardInterrupt:
        fail("simstudy-report", "interrupted; run the same command again (the records are never changed by it).", 130)
    print(result.headline())
    print(f"simstudy-report: wrote {len(files)} files in {out} ({len(result.summary)} summary rows)")


def _report_settings(items: list[str]) -> dict[str, Any]:
    """``["study.alpha=0.01", ...]`` -> ``{"alpha": 0.01}``; values parsed as YAML, like Hydra's."""
    import yaml

    settings: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("study.") or len(key) <= len("study."):
            raise ConfigError(f"{item!r} is not a setting: write study.KEY=VALUE (e.g. study.alpha=0.01).")
        try:
            settings[key[len("study."):]] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ConfigError(f"{key}={value!r} is not a value (YAML: a number, a string or a list like [0,0.5]).") from None
    return settings
