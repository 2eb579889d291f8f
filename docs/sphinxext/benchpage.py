"""The benchmarks page, generated from the records in ``results/benchmarks/*.jsonl``.

Each benchmark script appends one JSON line per measurement (with the machine, the commit and
the load average); this page shows the latest record of each workload and how many records
there are. The history is the records themselves, not prose.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["benchmarks_rst", "load_records"]

#: The targets the speed work was held to (simstudy's time for each workload).
TARGETS = {"table2-full": "30x the plain loop", "quick-letter": "15x the plain script",
           "suite": "600 s for the runs other than rho_hat", "cv_clt-full": "300 s"}


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


def _when(record: dict[str, Any]) -> str:
    """Date, commit, CPU and load average of a record, in one cell."""
    parts = [record.get("date", "")[:10]]
    if record.get("commit"):
        parts.append(f"commit ``{record['commit']}``")
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
    ("cart_tie_rule.jsonl", "The two CART tie rules", "python benchmarks/cart_tie_rule.py",
     "Paired comparison of the tie rules ``draw`` and ``shuffle`` on the same Letter samples and folds: the "
     "same tree distribution (the p-values), and the CPU per cross-validation.", _tie_rule),
)


def benchmarks_rst(directory: Path) -> str:
    """The page body (included by ``docs/benchmarks.rst``)."""
    lines: list[str] = []
    for file_name, title, command, how, render in _SECTIONS:
        path = directory / file_name
        if not path.is_file():
            continue
        records = load_records(path)
        lines += [title, "-" * len(title), "", how, "", f"Command: ``{command}``; records: "
                  f"``results/benchmarks/{file_name}`` ({len(records)} lines).", ""]
        lines += render(records)
    return "\n".join(lines) + "\n"
