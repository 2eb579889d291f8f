"""Render simstudy HTML reports in a real headless browser (Chromium) and fail on a broken page.

Usage::

    python benchmarks/check_report_html.py results/*/report.html [--screenshot-dir DIR]

For each report: Chromium loads the file (no network), runs the report's inline check script
and dumps the DOM; the page fails when the check did not run (the page did not load), an
embedded image did not decode, the report has no table, or a section is missing. With
``--screenshot-dir``, a 1280x1600 PNG of the top of each page is saved there (``<study>.png``).
Exit status 0 when every report renders, 1 otherwise, 2 without Chromium.
"""
from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The sections every run report has (``simstudy.report.html.run_report_html``).
RUN_SECTIONS = 6
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The path of a Chromium / Chrome executable, or None."""
    return next((p for p in map(shutil.which, _CANDIDATES) if p), None)


def _chromium(browser: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: no state shared between checks
        return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
                               "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=10000", *args],
                              capture_output=True, text=True, timeout=timeout)


def check_report(path: Path, browser: str, min_sections: int = 1) -> dict:
    """Render ``path`` and return the page's check (images, broken, tables, sections) plus
    ``problems``, a list of what is wrong (empty: the page is fine)."""
    path = Path(path).resolve()
    run = _chromium(browser, "--dump-dom", path.as_uri())
    match = re.search(r'data-report-check="([^"]*)"', run.stdout)
    if not match:
        return {"report": str(path), "problems": [f"the page did not load or its check did not run (exit "
                                                  f"{run.returncode}; {run.stderr.strip()[-300:]})"]}
    check = json.loads(html.unescape(match.group(1)))
    problems = []
    if check["broken"]:
        problems.append(f"{check['broken']} of {check['images']} images did not render")
    if not check["tables"]:
        problems.append("no table rendered")
    if check["sections"] < min_sections:
        problems.append(f"{check['sections']} sections, expected at least {min_sections}")
    return {"report": str(path), **check, "problems": problems}


def screenshot(path: Path, browser: str, out: Path, width: int = 1280, height: int = 1600) -> Path:
    """A PNG of the top of the rendered page."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _chromium(browser, f"--screenshot={out.resolve()}", f"--window-size={width},{height}", "--hide-scrollbars",
              Path(path).resolve().as_uri())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="report.html files (run or sweep reports)")
    parser.add_argument("--screenshot-dir", type=Path, help="save a screenshot of each report here")
    args = parser.parse_args(argv)
    browser = find_chromium()
    if browser is None:
        print("check_report_html: no Chromium found; install it (apt-get install -y chromium)", file=sys.stderr)
        return 2
    failed = 0
    for report in args.reports:
        result = check_report(report, browser)
        status = "FAIL" if result["problems"] else "ok"
        failed += bool(result["problems"])
        detail = "; ".join(result["problems"]) or (f"{result['images']} images, {result['tables']} tables, "
                                                    f"{result['sections']} sections")
        print(f"{status:4} {report}: {detail}")
        if args.screenshot_dir is not None and not result["problems"]:
            name = report.parent.name if report.name == "report.html" else report.stem
            print(f"     screenshot {screenshot(report, browser, args.screenshot_dir / f'{name}.png')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
