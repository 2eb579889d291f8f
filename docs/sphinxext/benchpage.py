"""The benchmarks page, generated from the records in ``results/benchmarks/*.jsonl``.

Each benchmark script appends one JSON line per measurement (with the machine, the commit and
the load average); this page shows the latest record of each workload and how many records
there are. The history is the records themselves, not prose.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

__all__ = ["GOALS", "Target", "benchmarks_rst", "load_records"]

#: The targets the speed work was held to (simstudy's time for each workload).
TARGETS = {"table2-full": "30x the plain loop", "quick-letter": "15x the plain script",
           "suite": "600 s for the runs other than rho_hat", "cv_clt-full": "300 s"}


@dataclass(frozen=True)
class Target:
    """A goal checked against the latest record: ``field`` of the record of ``workload`` in ``file``
    compared with ``bound`` (``at_most``: the value must not exceed it; else it must reach it)."""

    file: str
    workload: str
    field: str | Callable[[dict[str, Any]], Any]
    bound: float
    at_most: bool
    text: str
    unit: str = ""

    def value(self, record: dict[str, Any]) -> Any:
        """The goal's figure in ``record`` (None where the record lacks it)."""
        return self.field(record) if callable(self.field) else record.get(self.field)


def suite_without_rho_hat(record: dict[str, Any]) -> float | None:
    """The suite's total less its ``rho_hat`` run, read from the timing lines ``all.sh`` prints last
    (``NAME  SECONDS s``); None if the record's log lacks either line."""
    times = {}
    for line in ((record.get("details") or {}).get("simstudy") or {}).get("log") or []:
        parts = line.split()
        if len(parts) == 3 and parts[2] == "s":
            try:
                times[parts[0]] = float(parts[1])
            except ValueError:
                continue
    if "total" not in times or "rho_hat" not in times:
        return None
    return times["total"] - times["rho_hat"]


#: Every goal the benchmarks measure, with where its figure comes from.
GOALS = (
    Target("benchmarks.jsonl", "table2-full", "ratio_plain_over_simstudy", 30, False,
           "a full Letter row of Table 2 at least 30x faster than the plain loop", "x"),
    Target("benchmarks.jsonl", "quick-letter", "ratio_plain_over_simstudy", 15, False,
           "the quick study at least 15x faster than the plain script", "x"),
    Target("benchmarks.jsonl", "cv_clt-full", "median_simstudy_s", 300, True,
           "Bayle et al.'s study at full scale in at most 300 s", " s"),
    Target("benchmarks.jsonl", "suite", suite_without_rho_hat, 600, True,
           "the committed runs other than rho_hat in at most 600 s (``experiments/all.sh`` less its rho_hat run)",
           " s"),
    Target("audit_time.jsonl", "audit-letter5000-tree", "median_wall_s_sequential", 15, True,
           "``simstudy audit`` of a 5,000-row Letter file with a tree in at most 15 s (warm, 2 cores)", " s"),
    Target("scaling.jsonl", "10000000", "peak_rss_mib", 2048, True,
           "10^7 cheap replicates end to end in under 2 GiB (the main process)", " MiB"),
    Target("scaling.jsonl", "10000000", "peak_rss_children_mib", 2048, True,
           "10^7 cheap replicates end to end in under 2 GiB (every child process)", " MiB"),
)


def load_records(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of one record file (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _machine(record: dict[str, Any]) -> str:
    cpu = record.get("cpu")
    return f"{cpu} ({record.get('cpu_target', '?')})" if cpu else "not recorded"


def _load(record: dict[str, Any]) -> str:
    before = record.get("load_average_before") or record.get("load_average")
    if isinstance(before, list):
        return f"{before[0]:.1f}"
    return f"{before:.1f}" if isinstance(before, (int, float)) else ""


def _literal(text: str) -> str:
    """Single backticks of a record's description as inline literals."""
    import re

    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", text)


def _when(record: dict[str, Any], cpu: bool = True) -> str:
    """Date, commit, CPU (unless ``cpu`` is false: a column of its own gives it) and load average of a
    record, in one cell."""
    parts = [record.get("date", "")[:10]]
    if record.get("commit"):
        parts.append(f"commit ``{record['commit']}``")
    if cpu:
        parts.append(f"CPU {_machine(record)}")
    if _load(record):
        parts.append(f"load {_load(record)}")
    return ", ".join(p for p in parts if p)


def _seconds(value: Any) -> str:
    return f"{value:,.2f}" if isinstance(value, (int, float)) else ""


def _list_table(header: list[str], rows: list[list[str]], widths: str | None = None) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1"] + ([f"   :widths: {widths}"] if widths else []) + [""]
    for i, row in enumerate([header] + rows):
        for j, cell in enumerate(row):
            text = str(cell).replace("\n", " ").strip() or " "
            lines.append(f"   {'* -' if j == 0 else '  -'} {text}")
    return lines + [""]


def _latest(records: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        out[str(record.get(key))] = record      # later lines are later measurements
    return out


def _workloads(records: list[dict[str, Any]]) -> list[str]:
    latest = _latest(records, "workload")
    latest = dict(sorted(latest.items(), key=lambda item: (item[0] not in TARGETS, list(TARGETS).index(item[0])
                                                           if item[0] in TARGETS else 0, item[0])))
    counts = {w: sum(r.get("workload") == w for r in records) for w in latest}
    rows = []
    for workload, r in latest.items():
        peak = ((r.get("details") or {}).get("simstudy") or {}).get("peak_mib")
        ratio = r.get("ratio_plain_over_simstudy")
        rows.append([f"``{workload}``", _literal(r.get("description", "")), _seconds(r.get("median_simstudy_s")),
                     _seconds(r.get("median_plain_s_full_equivalent")), f"{ratio:.1f}x" if ratio else "",
                     f"{peak:,.0f}" if peak else "", TARGETS.get(workload, ""), _when(r) + f"; {counts[workload]} records"])
    return _list_table(["workload", "what runs", "simstudy (s)", "plain loop (s)", "ratio", "peak MiB", "target",
                        "latest record"], rows, "10 30 8 8 6 6 10 22")


def _startup(records: list[dict[str, Any]]) -> list[str]:
    latest = _latest(records, "command")
    rows = [[_literal(c), _seconds(r.get("median_first_result_s")), _seconds(r.get("median_total_s")),
             str(r.get("repeats", "")), _when(r)] for c, r in latest.items()]
    return _list_table(["command", "first result (s)", "total (s)", "repeats", "latest record"], rows)


def _per_size(records: list[dict[str, Any]], title: str) -> list[str]:
    r = records[-1]
    per = r["ms_cpu_per_replicate"]
    rows = []
    for label, values in per.items():
        if isinstance(next(iter(values.values())), dict):      # learner -> design -> n
            for design, by_n in values.items():
                rows.append([f"{label}, {design}"] + [f"{v:.2f}" for v in by_n.values()])
                sizes = list(by_n)
        else:
            rows.append([label] + [f"{v:.2f}" for v in values.values()])
            sizes = list(values)
    lines = [f"Latest of {len(records)} records ({r.get('date', '')[:10]}, load {_load(r)}, "
             f"{r.get('replicates')} replicates, CPU {_machine(r)}); {title}:", ""]
    return lines + _list_table(["ms of CPU per replicate"] + [f"n = {n}" for n in sizes], rows)


def _tie_rule(records: list[dict[str, Any]]) -> list[str]:
    latest = _latest(records, "n")
    rows = [[n, str(r["replicates"]), f"{r['mu_hat']['mean_diff']:+.2e}", f"{r['mu_hat']['paired_t_p']:.2f}",
             f"{r['true_error']['paired_t_p']:.2f}", f"{1e3 * r['cpu_s_per_cv_shuffle']:.3f}",
             f"{1e3 * r['cpu_s_per_cv_draw']:.3f}"] for n, r in latest.items()]
    return _list_table(["n", "replicates", "mu_hat draw - shuffle", "paired t p (mu_hat)", "paired t p (true error)",
                        "ms per CV, shuffle", "ms per CV, draw"], rows)


def _scaling(records: list[dict[str, Any]]) -> list[str]:
    """The latest record of each replicate count: the run, then the collect-only pass."""
    latest = dict(sorted(_latest(records, "replicates").items(), key=lambda item: int(item[0])))
    rows = []
    for replicates, r in latest.items():
        for p in r.get("passes", []):
            rows.append([f"{int(replicates):,}", p["pass"], _seconds(p.get("wall_s")),
                         f"{p.get('engine_us_per_rep', 0):.1f}",
                         " / ".join(f"{p.get(f'{part}_us_per_rep', 0):.1f}" for part in _SCALING_PARTS),
                         f"{r['peak_rss_mib']:,.0f}" if p["pass"] == "run" else "",
                         _largest_child(r) if p["pass"] == "run" else "",
                         _when({**r, "load_average_before": r.get("load_before")})])
    return _list_table(["replicates", "pass", "wall (s)", "engine us per replicate",
                        "of which " + " / ".join(_SCALING_PARTS), "peak MiB, main", "peak MiB, largest child",
                        "record"], rows, "9 7 7 8 22 8 8 31")


_SCALING_PARTS = ("shard_save", "shard_load", "collect", "aggregate", "write")


def _largest_child(record: dict[str, Any]) -> str:
    """The largest child's peak resident set (records before ``peak_rss_children_mib`` have none: their
    ``peak_rss_workers_mib`` repeated the main process's high-water mark, see benchmarks/scaling.py)."""
    peak = record.get("peak_rss_children_mib")
    return f"{peak:,.0f}" if peak is not None else "not measured"


def _audit_time(records: list[dict[str, Any]]) -> list[str]:
    """The runs of the latest record, then its medians."""
    r = records[-1]
    rows = [[run["rule"], str(run["seed"]), _seconds(run["wall_s"]), _seconds(run["cpu_s"]),
             f"{run['load_before']:.1f}", ", ".join(f"{k}: {v}" for k, v in run["replicates_run"].items()),
             f"``{run['recommended']}``"] for run in r["runs"]]
    medians = "; ".join(f"{rule}: median wall {r[f'median_wall_s_{rule}']:.1f} s, CPU {r[f'median_cpu_s_{rule}']:.1f} s"
                        for rule in ("sequential", "fixed") if f"median_wall_s_{rule}" in r)
    lines = [f"Latest of {len(records)} records ({_when(r)}): {medians}.", ""]
    return lines + _list_table(["rule", "seed", "wall (s)", "CPU (s)", "load before", "replicates per setting",
                                "recommended"], rows)


def _checkouts(records: list[dict[str, Any]]) -> list[str]:
    """Each record: the two checkouts' median times on one machine, their ratio and whether they agree."""
    rows = [[f"``{r['commit_this']}`` against ``{r['commit_against']}``",
             f"{r['replicates']:,} ({r['nested_cv_replicates']:,} nested)", str(r["repeats"]),
             _seconds(r["median_s_this"]), _seconds(r["median_s_against"]), f"{r['ratio_this_over_against']:.3f}",
             "yes" if r["same_numbers"] else "**no**", _when({**r, "commit": None})] for r in records]
    return _list_table(["checkouts", "replicates per size", "repeats", "this (s)", "against (s)", "ratio",
                        "same numbers", "record"], rows, "18 12 6 8 8 6 8 34")


def _goal_records(directory: Path, goal: Target) -> list[dict[str, Any]]:
    """The latest record of the goal's workload on each machine that has one, oldest first; records that
    do not name their CPU only where no record does."""
    path = directory / goal.file
    if not path.is_file():
        return []
    key = "replicates" if goal.file == "scaling.jsonl" else "workload"
    records = [r for r in load_records(path) if str(r.get(key)) == goal.workload]
    named = [r for r in records if r.get("cpu")]
    by_machine: dict[str, dict[str, Any]] = {}
    for record in named or records[-1:]:
        by_machine[_machine(record)] = record          # later lines are later measurements
    return sorted(by_machine.values(), key=lambda r: r.get("date", ""))


def goals_rst(directory: Path) -> list[str]:
    """Each goal on each machine: its latest measured figure there and whether it meets the goal.

    Absolute times depend on the hardware (the records name the CPU and the target numba compiles
    for), so a goal's verdict is given per machine, not once."""
    rows = []
    for goal in GOALS:
        records = _goal_records(directory, goal)
        if not records:
            rows.append([goal.text, "", "not measured", "", f"``{goal.file}``"])
            continue
        for i, record in enumerate(records):
            value = goal.value(record)
            if not isinstance(value, (int, float)):
                verdict, figure = "not in this record", ""
            else:
                met = value <= goal.bound if goal.at_most else value >= goal.bound
                verdict, figure = ("met" if met else "**not met**"), f"{value:,.1f}{goal.unit}"
            when = _when({**record, "load_average_before": record.get("load_average_before") or
                          record.get("load_before")}, cpu=False)
            rows.append([goal.text if i == 0 else "", _machine(record), figure, verdict, f"``{goal.file}``, {when}"])
    title = "Goals"
    return [title, "-" * len(title), "", "The latest record of each goal's workload on each machine it was "
            "measured on (the sections below give the records themselves). Times depend on the hardware: "
            "compare a machine's rows with each other, and the ratios to the plain loop, which both sides of "
            "one run share.", ""] + _list_table(["goal", "machine", "latest", "verdict", "record"], rows,
                                                 "34 14 10 8 34")


_SECTIONS = (
    ("benchmarks.jsonl", "End to end and against a plain loop", "python benchmarks/run.py --workload NAME",
     "The same work through simstudy and through a plain scikit-learn + joblib loop, run alternately; medians "
     "of the repeats. End-to-end workloads time whole commands as fresh processes (start-up, workers, reports "
     "and figures included) and record the peak memory of the largest process (``ru_maxrss``). ``plain loop`` "
     "is the full-run equivalent when the plain side ran on a fraction of the replicates (its time scaled).",
     _workloads),
    ("startup.jsonl", "Fixed cost of a run", "python benchmarks/startup.py --repeats 5",
     "Whole tiny runs, timed from the shell: the time to the first result and to the end (reports and figures "
     "written, process exited); numba's cache and the accepted-estimator cache warm. The floor is the import "
     "of Hydra and scikit-learn's tree alone.", _startup),
    ("table2_sizes.jsonl", "CPU per Table 2 replicate", "python benchmarks/table2_sizes.py",
     "CPU time of one worker per Letter replicate of Table 2 (10-fold CV of the default tree), with and "
     "without the exact truth, by training-set size.", lambda rs: _per_size(rs, "by n")),
    ("cv_clt_learners.jsonl", "CPU per cv_clt replicate", "python benchmarks/cv_clt_learners.py",
     "CPU time per replicate of Bayle et al.'s study by learner (the plain designs, and nested CV), by n.",
     lambda rs: _per_size(rs, "by learner and n")),
    ("cv_clt_checkouts.jsonl", "The same study in two checkouts", "python benchmarks/cv_clt_checkouts.py "
     "--against DIR",
     "Bayle et al.'s study end to end (all six sizes, fewer replicates) in this checkout and in another one, "
     "alternately, on one machine: tells a change of the code's speed from a change of hardware. ``ratio``: "
     "this checkout's median time over the other's.", _checkouts),
    ("cart_tie_rule.jsonl", "The two CART tie rules", "python benchmarks/cart_tie_rule.py",
     "Paired comparison of the tie rules ``draw`` and ``shuffle`` on the same Letter samples and folds: the "
     "same tree distribution (the p-values), and the CPU per cross-validation.", _tie_rule),
    ("scaling.jsonl", "Engine cost per replicate as the work grows", "python benchmarks/scaling.py --sizes N",
     "``cv_variance`` on ``gaussian_folds`` (a replicate costs microseconds), one condition, chunks of 2,500 "
     "replicates, two workers, written to a run directory; each size in a fresh process, run and then "
     "collected again from its shards. The engine's parts are timed in the main process, per replicate: a part "
     "whose cost per replicate grows with the size grows faster than the work. Peak memory: ``ru_maxrss``.",
     _scaling),
    ("audit_time.jsonl", "Time of an audit", "python benchmarks/audit_time.py",
     "``simstudy audit`` of the first 5,000 rows of Letter (A-M against N-Z) with a tree, as a user types it, "
     "each run a fresh process with the numba cache warm: the sequential rule (by seed) and the fixed rule. "
     "CPU: the process and its workers; the load average before each run tells how shared the machine was.",
     _audit_time),
)


def benchmarks_rst(directory: Path) -> str:
    """The page body (included by ``docs/benchmarks.rst``)."""
    lines: list[str] = goals_rst(directory)
    for file_name, title, command, how, render in _SECTIONS:
        path = directory / file_name
        if not path.is_file():
            continue
        records = load_records(path)
        lines += [title, "-" * len(title), "", how, "", f"Command: ``{command}``; records: "
                  f"``results/benchmarks/{file_name}`` ({len(records)} line{'' if len(records) == 1 else 's'}).", ""]
        lines += render(records)
    return "\n".join(lines) + "\n"
