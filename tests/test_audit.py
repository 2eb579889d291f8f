"""simstudy audit: bad input (exit 2, one line, no traceback, before any simulation), the
recommendation rule, and a small end-to-end audit through the Python call and the CLI."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simstudy.audit import audit
from simstudy.audit.recommend import recommend
from simstudy.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "simstudy.cli", "audit", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["missing.csv"], "missing.csv"),
    (["{file}", "--learner", "nope"], "--learner='nope'"),
    (["{file}", "-K", "2"], "K=2"),
    (["{file}", "--replicates", "5"], "replicates=5"),
    (["{file}", "--alpha", "0.7"], "alpha=0.7"),
    (["{file}", "--label-column", "middle"], "--label-column"),
    (["{file}", "--param", "oops"], "--param='oops'"),
    (["{file}", "-K", "150"], "too few"),
])
def test_bad_input_exit_2_without_traceback(tmp_path, letter_like_file, args, words):
    path = letter_like_file[0]
    proc = _cli(*[a.replace("{file}", str(path)) for a in args], "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("simstudy audit: error:") and words in proc.stderr
    assert not any(tmp_path.glob("audit_*"))


def test_bad_arrays_refused():
    with pytest.raises(ConfigError, match="not both"):
        audit("x.csv", X=np.zeros((10, 2)), y=np.zeros(10))
    with pytest.raises(ConfigError, match="single class"):
        audit(X=np.zeros((100, 2)), y=np.zeros(100), progress=False)
    with pytest.raises(ConfigError, match="same length"):
        audit(X=np.zeros((100, 2)), y=np.zeros(99), progress=False)


def _tests(sizes, powers):
    return pd.DataFrame({"procedure": list(sizes), "size": list(sizes.values()),
                         "size_low": [max(s - 0.03, 0) for s in sizes.values()], "power": list(powers.values()),
                         "mean_width": 1.0, "replicates": 200})


def test_recommendation_rule():
    at_n = _tests({"rho_hat=0": 0.10, "cv_clt": 0.055, "nadeau_bengio": 0.04, "oracle_rho": 0.05},
                  {"rho_hat=0": 0.9, "cv_clt": 0.7, "nadeau_bengio": 0.5, "oracle_rho": 0.95})
    at_half = _tests({"rho_hat=0": 0.12, "cv_clt": 0.075, "nadeau_bengio": 0.045, "oracle_rho": 0.05},
                     {"rho_hat=0": 0.9, "cv_clt": 0.7, "nadeau_bengio": 0.5, "oracle_rho": 0.95})
    rec = recommend(at_n, at_half, 0.05)
    # cv_clt is liberal at n/2 (7.5% > 6%), rho_hat=0 everywhere; the oracle is never recommended
    assert rec.procedure == "nadeau_bengio" and rec.trusted
    bad = recommend(_tests({"rho_hat=0": 0.10, "cv_clt": 0.08}, {"rho_hat=0": 0.9, "cv_clt": 0.7}),
                    _tests({"rho_hat=0": 0.12, "cv_clt": 0.09}, {"rho_hat=0": 0.9, "cv_clt": 0.7}), 0.05)
    assert bad.procedure == "cv_clt" and not bad.trusted and "No procedure" in bad.text


@pytest.mark.slow
def test_audit_end_to_end(tmp_path, letter_like_file):
    """A small audit through the CLI: report files, the recommended interval contains the estimate."""
    path = letter_like_file[0]
    proc = _cli(str(path), "--replicates", "20", "--nested-cv-replicates", "3", "--splits", "2",
                "--positive", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "--n-jobs", "1",
                "--no-progress", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    for name in ("report.md", "report.html", "figures/audit.png", "intervals.csv", "calibration.csv"):
        assert (out / name).exists(), name
    intervals = pd.read_csv(out / "intervals.csv")
    text = (out / "report.md").read_text()
    assert "recommended" in text and "<img" in (out / "report.html").read_text()
    estimate = float(text.split("Your CV estimate: ")[1].split(";")[0])
    assert np.all(intervals["low"] <= estimate) and np.all(estimate <= intervals["high"])
