"""``simstudy benchmark`` and ``simstudy certify``: the CV inference benchmark from the command line.

Bad input (an unknown procedure, mechanism, learner, loss or scale; a procedure that cannot be
imported) prints one line naming the option, the value and the nearest valid name, and exits
with code 2, before any simulation.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["benchmark_main", "certify_main"]


def _grid_options(p: argparse.ArgumentParser, default_scale: str) -> None:
    p.add_argument("--scale", default=default_scale, help=f"ci, quick or full (default {default_scale})")
    p.add_argument("--mechanisms", default=None, help="comma-separated population names (default: the scale's)")
    p.add_argument("--learners", default=None,
                   help="comma-separated learners and comparisons A-vs-B (default: the scale's)")
    p.add_argument("--losses", default=None, help="comma-separated losses (default: the scale's)")
    p.add_argument("--sizes", default=None, help="comma-separated sample sizes (default: the scale's)")
    p.add_argument("--replicates", type=int, default=None, help="replicates per cell (default: the scale's)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level (default 0.05)")
    p.add_argument("--n-jobs", type=int, default=1, help="worker processes (default 1)")


def _sizes(text: str | None, prog: str):
    from simstudy.cli.console import fail

    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        fail(prog, f"--sizes={text!r} is invalid: give whole numbers separated by commas, e.g. --sizes 50,100.")


def _data(items: list[str], prog: str) -> dict[str, str]:
    from simstudy.cli.console import fail

    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            fail(prog, f"--data={item!r} is invalid: give MECHANISM=PATH, e.g. --data letter=letter-recognition.data.")
        if not Path(path).is_file():
            fail(prog, f"--data={item!r} is invalid: {path!r} is not a file; give the path of the mechanism's data.")
        out[name] = path
    return out


def benchmark_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="simstudy benchmark",
                                description="Run the CV inference benchmark: coverage, width, size and power of every "
                                            "interval and test procedure per mechanism, learner, loss and n; writes "
                                            "cells.parquet, cells.csv, config.json and manifest.json. Resumable: "
                                            "the same --out with a larger grid computes only the new cells.")
    _grid_options(p, "quick")
    p.add_argument("--procedures", default=None,
                   help="comma-separated procedure names or package.module:function paths (default: the scale's)")
    p.add_argument("--data", action="append", default=[], metavar="MECHANISM=PATH",
                   help="a local file of a data-backed mechanism, read instead of its download "
                        "(e.g. --data letter=letter-recognition.data); repeatable")
    p.add_argument("-o", "--out", default=None, help="run directory (default: runs/benchmark_<scale>)")
    p.add_argument("--no-site", action="store_true",
                   help="do not write the results site (<out>/site/index.html: leaderboard, heat maps, drill-down)")
    return p


def certify_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="simstudy certify",
                                description="Certify a procedure's calibration on the benchmark's mechanisms: its "
                                            "coverage (or size) per cell with Monte Carlo errors and a verdict "
                                            "(calibrated / liberal / conservative / undecided) with a family-wise "
                                            "error rate; writes certificate.md and certificate.csv.")
    p.add_argument("procedure", help="package.module:function (or :Procedure) or a registered procedure name; the "
                                     "function has the signature f(procedure, losses, alpha, mu0, alternative)")
    p.add_argument("--kind", default="interval", help="interval (coverage) or test (size); default interval")
    p.add_argument("--family-error", type=float, default=0.05, help="family-wise error of the verdicts (0.05)")
    _grid_options(p, "ci")
    p.add_argument("-o", "--out", default="certificate", help="folder of the certificate (default: certificate)")
    return p


def _run(prog: str, work) -> None:
    from simstudy.cli.console import fail, setup_logging
    from simstudy.errors import UserError

    if os.getcwd() not in sys.path:   # the user's own modules (package.module:function)
        sys.path.insert(0, os.getcwd())
    setup_logging()
    try:
        work()
    except UserError as exc:
        fail(prog, " ".join(str(exc).split()))
    except KeyboardInterrupt:
        fail(prog, "interrupted; rerun the same command to resume.", 130)


def benchmark_main(argv: list[str] | None = None) -> None:
    """``simstudy benchmark [--scale quick|full|ci] [--out DIR] [--procedures a,b] ...``."""
    args = benchmark_parser().parse_args(argv)
    sizes = _sizes(args.sizes, "simstudy benchmark")
    data = _data(args.data, "simstudy benchmark")

    def work():
        from simstudy.benchmark import run_benchmark
        from simstudy.engine.rundir import DirectoryNames, RunDirectory

        out = Path(args.out or f"runs/benchmark_{args.scale}")
        # refusals name this command's flag; it has no overwrite switch
        run_dir = RunDirectory(out, DirectoryNames("--out", "delete that directory"))
        result = run_benchmark(args.scale, procedures=args.procedures, mechanisms=args.mechanisms,
                               learners=args.learners, losses=args.losses, sizes=sizes, replicates=args.replicates,
                               seed=args.seed, alpha=args.alpha, out=run_dir, n_jobs=args.n_jobs, progress=True,
                               data=data)
        print(result.run.headline())
        print(f"cells: {out / 'cells.parquet'} ({len(result.cells)} rows), {out / 'cells.csv'}")
        if not args.no_site:
            from simstudy.report.benchmark import write_benchmark_site

            print(f"site: {write_benchmark_site(out, out / 'site')}")

    _run("simstudy benchmark", work)


def certify_main(argv: list[str] | None = None) -> None:
    """``simstudy certify package.module:function [--kind interval|test] [--scale ...]``."""
    args = certify_parser().parse_args(argv)
    sizes = _sizes(args.sizes, "simstudy certify")

    def work():
        from simstudy.benchmark import certify

        certificate = certify(args.procedure, kind=args.kind, scale=args.scale, mechanisms=args.mechanisms,
                              learners=args.learners, losses=args.losses, sizes=sizes, replicates=args.replicates,
                              seed=args.seed, alpha=args.alpha, family_error=args.family_error, out=args.out,
                              n_jobs=args.n_jobs)
        print(f"{certificate.procedure}: {certificate.verdict} ({len(certificate.table)} cells); "
              f"{Path(args.out) / 'certificate.md'}")

    _run("simstudy certify", work)
