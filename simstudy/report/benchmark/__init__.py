"""The CV inference benchmark's results as a static site (report layer: reads the cell table only).

- :mod:`.table`: the cell table and config of a run, checked against the contract;
- :mod:`.scores`: a cell's rate against the nominal, within +- 2 Monte Carlo errors or not;
- :mod:`.leaderboard`: one row per procedure (and kind, and estimand);
- :mod:`.heatmap`: procedure x mechanism, coverage minus nominal (figure and table);
- :mod:`.drilldown`: one page and figure per data cell;
- :mod:`.ademp`: the study in the ADEMP form, from the config;
- :mod:`.schulz_kuempel` and :mod:`.comparison`: their verifiable statements, tested on our table;
- :mod:`.markup`, :mod:`.assets`, :mod:`.page`: HTML, stylesheet and script;
- :mod:`.site`: :func:`write_benchmark_site`, the command entry.

Example::

    from simstudy.report.benchmark import write_benchmark_site
    write_benchmark_site("runs/benchmark-quick", "site/")   # or the BenchmarkResult itself
"""
from simstudy.report.benchmark.leaderboard import leaderboard
from simstudy.report.benchmark.site import write_benchmark_site
from simstudy.report.benchmark.table import read_benchmark

__all__ = ["leaderboard", "read_benchmark", "write_benchmark_site"]
