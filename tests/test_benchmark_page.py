"""docs/sphinxext/benchpage.py: the goals table of the benchmarks page, per machine."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "sphinxext"))

import benchpage  # noqa: E402


def _suite(seconds: dict[str, float], cpu: str, target: str, date: str) -> dict:
    log = [f"{name:<24s} {value:8.1f} s" for name, value in seconds.items()]
    log += [f"{'total':<24s} {sum(seconds.values()):8.1f} s"]
    return {"workload": "suite", "median_simstudy_s": sum(seconds.values()), "cpu": cpu, "cpu_target": target,
            "date": date, "details": {"simstudy": {"log": ["", *log]}}}


def test_the_suite_goal_leaves_out_rho_hat_as_it_says():
    record = _suite({"cv_clt": 204.8, "rho_hat": 112.2, "table2_letter": 35.0}, "AMD EPYC", "znver5", "2026-11-24")
    assert abs(benchpage.suite_without_rho_hat(record) - 239.8) < 1e-9
    assert benchpage.suite_without_rho_hat({"details": {"simstudy": {"log": ["total 10.0 s"]}}}) is None


def test_goals_give_a_verdict_per_machine(tmp_path):
    records = [
        _suite({"cv_clt": 204.8, "rho_hat": 112.2}, "AMD EPYC", "znver5", "2026-11-24"),
        _suite({"cv_clt": 437.1, "rho_hat": 342.7, "nedelko_fisher": 158.3}, "AMD EPYC", "znver3", "2026-11-28"),
        {"workload": "cv_clt-full", "median_simstudy_s": 438.9, "cpu": "AMD EPYC", "cpu_target": "znver3",
         "date": "2026-11-28"},
    ]
    (tmp_path / "benchmarks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    text = "\n".join(benchpage.goals_rst(tmp_path))
    rows = text.split("   * - ")
    assert any("AMD EPYC (znver5)" in r and "204.8 s" in r and "- met" in r for r in rows)      # 317.0 - 112.2
    assert any("AMD EPYC (znver3)" in r and "595.4 s" in r and "- met" in r for r in rows)      # 938.1 - 342.7
    assert any("AMD EPYC (znver3)" in r and "438.9 s" in r and "**not met**" in r for r in rows)
    assert "CPU" not in text.split("record\n", 1)[1]   # the machine column names it; the record cell does not
    assert text.count("not measured") == 5    # two ratio goals, the audit's and two scaling goals: no records
