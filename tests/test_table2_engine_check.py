"""experiments/table2_engine_check.py: paired differences of two runs on the same replicates."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from simstudy.studies.metrics import between_block_correlation

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "table2_engine_check.py"


@pytest.fixture(scope="module")
def check():
    spec = importlib.util.spec_from_file_location("table2_engine_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _paired_runs(rng, R, shared=0.8):
    """mu_hat and theta3 of two engines on the same replicates: a shared part (the sample) plus
    engine noise of the same law, so both runs have the same rho."""
    base, own = rng.standard_normal(R), rng.standard_normal((2, R))
    mu = np.sqrt(shared) * base + np.sqrt(1 - shared) * own
    t3_base, t3_own = rng.exponential(0.5, R), rng.exponential(0.5, (2, R))
    return mu[0], t3_base + t3_own[0], mu[1], t3_base + t3_own[1]


def test_paired_mean_by_hand(check):
    res = check.paired_mean([0.1, 0.2, 0.3, 0.4], [0.1, 0.25, 0.3, 0.5])
    assert res.diff == pytest.approx(0.0375)
    assert res.se == pytest.approx(np.std([0, 0.05, 0, 0.1], ddof=1) / 2)
    assert res.identical == 0.5 and res.z == pytest.approx(0.0375 / res.se)


def test_paired_rho_matches_between_block_correlation(check):
    rng = np.random.default_rng(3)
    mu_a, t3_a, mu_b, t3_b = _paired_runs(rng, 400)
    res = check.paired_rho(mu_a, t3_a, mu_b, t3_b)
    one, two = between_block_correlation(mu_a, t3_a), between_block_correlation(mu_b, t3_b)
    assert res.a == pytest.approx(one.value) and res.b == pytest.approx(two.value)
    assert res.se_independent == pytest.approx(np.hypot(one.se, two.se))
    assert res.se < res.se_independent                       # pairing removes the shared variation
    same = check.paired_rho(mu_a, t3_a, mu_a, t3_a)
    assert same.diff == 0 and same.se == 0 and same.z == 0


def test_paired_rho_z_is_calibrated(check):
    """Equal rho in both runs: |z| < 1.96 in 95% of simulated pairs (binomial test)."""
    rng = np.random.default_rng(11)
    T = 800
    hits = sum(abs(check.paired_rho(*_paired_runs(rng, 600)).z) < 1.959964 for _ in range(T))
    assert stats.binomtest(hits, T, 0.95).pvalue > 1e-3


def _write_run(directory: Path, frame: pd.DataFrame, study: dict):
    directory.mkdir(parents=True)
    frame.to_parquet(directory / "replicates.parquet")
    (directory / "config.yaml").write_text(yaml.safe_dump({"study": study, "population": {"name": "p", "path": "x"}}))


def test_main_writes_the_paired_table_and_refuses_unpaired_runs(check, tmp_path, capsys):
    rng = np.random.default_rng(5)
    R = 50
    mu_a, t3_a, mu_b, t3_b = _paired_runs(rng, R)
    a = pd.DataFrame({"n": 20, "condition_key": "k", "replicate": np.arange(R), "mu_hat": mu_a, "theta3": t3_a,
                      "true_error": mu_a / 2, "error": ""})
    b = a.assign(mu_hat=mu_b, theta3=t3_b, true_error=mu_b / 2)
    _write_run(tmp_path / "a", a, {"name": "cv_variance", "seed": 1})
    _write_run(tmp_path / "b", b, {"name": "cv_variance", "seed": 1})
    assert check.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    table = pd.read_csv(tmp_path / "b" / "paired_differences.csv")
    assert table.loc[0, "mu_hat_diff"] == pytest.approx((b.mu_hat - a.mu_hat).mean())
    assert (tmp_path / "b" / "paired_differences.md").read_text().startswith("# Paired engine check")
    _write_run(tmp_path / "c", b, {"name": "cv_variance", "seed": 2})
    assert check.main([str(tmp_path / "a"), str(tmp_path / "c")]) == 2
    assert "different study settings" in capsys.readouterr().err
    _write_run(tmp_path / "d", b.iloc[:-1], {"name": "cv_variance", "seed": 1})
    assert check.main([str(tmp_path / "a"), str(tmp_path / "d")]) == 2
    assert "1 (n, condition, replicate) keys" in capsys.readouterr().err
