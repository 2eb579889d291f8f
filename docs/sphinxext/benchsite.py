"""The benchmark results page: the static site of the committed benchmark run, or a placeholder.

When ``results/benchmark/`` holds a run (``cells.parquet`` and ``config.json``), the build writes
its site (:func:`simstudy.report.benchmark.write_benchmark_site`) into the folder that
``html_extra_path`` copies beside the pages, as ``benchmark/index.html``, and the page links it
with the leaderboard's head and the run's provenance (its manifest); the site is rewritten only when the run's files change (a stamp of
their hashes). Without a committed run the page says so.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

__all__ = ["benchmark_results_rst", "SITE_FOLDER"]

#: The site's folder below the extra path (and so below the built documentation).
SITE_FOLDER = "benchmark"
_INPUTS = ("cells.parquet", "config.json")

PLACEHOLDER = """\
.. note::

   **Not yet run.** No benchmark run is committed under ``results/benchmark/`` (its ``cells.parquet``
   and ``config.json``), so there are no results to show yet. A run and its site (``<out>/site``) are
   made with (``--data letter=PATH`` reads a local copy of Letter instead of its download)::

      simstudy benchmark --scale full --n-jobs 2 -o results/benchmark

   or from Python::

      from simstudy.benchmark import run_benchmark
      from simstudy.report.benchmark import write_benchmark_site

      result = run_benchmark("full", out="results/benchmark", n_jobs=2)
      write_benchmark_site(result, "site/")       # open site/index.html

   Once ``results/benchmark/`` is committed, this page links the site built from it.
"""


def _stamp(run: Path) -> str:
    digest = hashlib.sha256()
    for name in _INPUTS:
        digest.update((run / name).read_bytes())
    return digest.hexdigest()


def benchmark_results_rst(run: Path, extra: Path) -> str:
    """The page's generated part; writes the site below ``extra`` when ``run`` holds a benchmark run."""
    site = extra / SITE_FOLDER
    if not all((run / name).is_file() for name in _INPUTS):
        shutil.rmtree(site, ignore_errors=True)
        return PLACEHOLDER
    from simstudy.report.benchmark import leaderboard, read_benchmark, write_benchmark_site

    stamp = _stamp(run)
    if not (site / ".stamp").is_file() or (site / ".stamp").read_text() != stamp:
        shutil.rmtree(site, ignore_errors=True)
        write_benchmark_site(run, site)
        (site / ".stamp").write_text(stamp)
    tables = read_benchmark(run)
    return _linked(tables, leaderboard(tables.cells)) + _provenance(run)


def _provenance(run: Path) -> str:
    """Where the committed numbers come from: the commit and the CPU time its manifest records."""
    if not (run / "manifest.json").is_file():
        return ""
    manifest = json.loads((run / "manifest.json").read_text())
    shards = manifest.get("shards", []) + [s for phase in manifest.get("phases", {}).values()
                                           for s in phase.get("shards", [])]
    commit = str(manifest.get("environment", {}).get("git_commit") or "unknown")[:12]
    cpu_hours = sum(float(s.get("cpu_time", 0.0)) for s in shards) / 3600
    finished = str(manifest.get("finished_utc") or "?")[:10]
    recorded = ", the data's fingerprints" if manifest.get("data_fingerprints") else ""
    return (f"\nProvenance: ``experiments/benchmark.sh`` (``simstudy benchmark --scale full``) at commit "
            f"``{commit}``, status ``{manifest.get('status', '?')}``, finished {finished}; its {len(shards):,} chunks "
            f"took {cpu_hours:.1f} CPU hours in the workers ({manifest.get('replicates_failed', 0):,} of "
            f"{manifest.get('replicates_total', 0):,} replicates failed and are recorded as such). The run's "
            f"``manifest.json`` (checksums of every file, package versions{recorded}) is committed beside "
            "``cells.parquet``.\n")


def _linked(tables, board) -> str:
    cells, config = tables.cells, tables.config
    lines = [f"The committed run (scale ``{config.get('scale', '?')}``): {cells['procedure'].nunique()} procedures, "
             f"{cells['mechanism'].nunique()} mechanisms, {len(cells):,} cells (a cell: one procedure on one data "
             f"cell, scored against one estimand), {config.get('replicates', '?')} "
             "replicates per cell.", "",
             f"**Open the results site:** `benchmark/index.html <{SITE_FOLDER}/index.html>`_ (leaderboard, heat "
             "maps, filters, one page per data cell, the comparison with Schulz-Kümpel et al., ADEMP, downloads).",
             ""]
    intervals = board[board["kind"] == "interval"]
    for estimand, part in intervals.groupby("estimand", sort=False):
        lines += [f".. list-table:: Interval procedures on {estimand}: share of cells within nominal ± 2 MCSE₀ "
                  "(best first)", "   :header-rows: 1", "", "   * - procedure", "     - within", "     - worst "
                  "coverage − nominal", "     - mean under-coverage"]
        for row in part.itertuples(index=False):
            lines += [f"   * - ``{row.procedure}``", f"     - {_shown(row.within_share, '.1%')}",
                      f"     - {_shown(row.worst_gap, '+.3f')}", f"     - {_shown(row.mean_undercoverage, '.3f')}"]
        lines.append("")
    return "\n".join(lines) + "\n"


def _shown(value: float, spec: str) -> str:
    """``value`` in ``spec``, or a dash for a measure without cells (NaN)."""
    return "–" if value != value else format(value, spec)
