"""Issue 15, item 7: the API reference (Sphinx, numpydoc docstrings, the README's Python examples)
builds offline without a single warning. CI installs Sphinx with the ``test`` extra."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
                           str(ROOT / "docs"), str(tmp_path / "html")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    examples = (tmp_path / "html" / "examples.html").read_text()
    assert "run_study" in examples and "load_run" in examples
    api = (tmp_path / "html" / "api.html").read_text()
    for name in ("run_study", "StudyResult", "cv_t_test", "frame_to_latex", "run_report_html"):
        assert name in api, name
