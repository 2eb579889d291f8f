"""simstudy certify and simstudy.testing.assert_calibrated: the naive K-fold t fails where it is
known to under-cover (gaussian_folds, rho = 0.5), the Grandvalet-Bengio t with the true rho
passes; the verdict rule by hand; the command writes the certificate."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simstudy.errors import ConfigError
from simstudy.inference.distributions import t_cdf, t_ppf
from simstudy.inference.procedures import PROCEDURES, KFoldDesign
from simstudy.inference.procedures import adapters
from simstudy.studies.benchmark.certificate import overall, verdicts
from simstudy.testing import assert_calibrated

FOLDS = dict(mechanisms=["gaussian_folds"], replicates=200)


def true_rho_t(procedure, losses, alpha, mu0, alternative):
    """Grandvalet & Bengio's t with the true rho = 0.5 of gaussian_folds (Proposition 2: exact level)."""
    return adapters.kfold_t(procedure, losses, alpha, mu0, alternative, rho=0.5)


true_rho_t.design = KFoldDesign(10)


def test_naive_kfold_t_fails_where_it_under_covers():
    # theory: with rho = 0.5 the naive variance is (1 - rho) too small, so the coverage is
    # P(|T_9| <= t_{0.975,9} sqrt(1 - rho)) = 0.856
    theory = 2 * t_cdf(t_ppf(0.975, 9) * np.sqrt(0.5), 9) - 1
    with pytest.raises(AssertionError, match="liberal") as info:
        assert_calibrated(PROCEDURES["kfold_t"].load(), **FOLDS)
    assert "gaussian_folds" in str(info.value) and "Clopper-Pearson" in str(info.value)
    assert 0.85 < theory < 0.86


def test_true_rho_t_passes_and_its_coverage_is_nominal():
    certificate = assert_calibrated(true_rho_t, **FOLDS)
    assert certificate.verdict in ("calibrated", "undecided")
    row = certificate.table.iloc[0]
    assert row["cp_low"] <= 0.95 <= row["cp_high"] and row["replicates"] == 200


def test_the_size_of_the_naive_test_is_judged_liberal():
    with pytest.raises(AssertionError, match="size"):
        assert_calibrated("kfold_t", kind="test", **FOLDS)


def test_verdict_rule_by_hand():
    # 80 of 100 at nominal 0.95: Clopper-Pearson 95% upper bound beta(0.975; 81, 20) = 0.8733 < 0.95
    low, high, v = verdicts(np.array([80, 100, 9500, 95]), np.array([100, 100, 10000, 100]), 0.95, "interval",
                            0.2, 0.025)          # 4 cells: each at level 1 - 0.2 / 4 = 0.95
    assert v == ["liberal", "conservative", "calibrated", "undecided"]
    assert high[0] == pytest.approx(stats.beta.ppf(0.975, 81, 20)) and high[0] == pytest.approx(0.8733, abs=1e-4)
    assert low[1] == pytest.approx(0.025 ** (1 / 100))      # k = R: the lower bound solves p^R = 0.025
    assert overall(v) == "liberal" and overall(["calibrated", "undecided"]) == "undecided"
    assert overall(["conservative", "calibrated"]) == "conservative" and overall(["calibrated"]) == "calibrated"
    _, _, tests = verdicts(np.array([20, 0]), np.array([100, 100]), 0.05, "test", 0.1, 0.025)
    assert tests == ["liberal", "conservative"]


def test_certify_command_writes_the_certificate(tmp_path, monkeypatch, capsys):
    from simstudy.cli.benchmark import certify_main

    (tmp_path / "my_intervals.py").write_text(
        "from simstudy.inference.procedures import KFoldDesign, adapters\n"
        "def rho_half(procedure, losses, alpha, mu0, alternative):\n"
        "    return adapters.kfold_t(procedure, losses, alpha, mu0, alternative, rho=0.5)\n"
        "rho_half.design = KFoldDesign(10)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    certify_main(["my_intervals:rho_half", "--mechanisms", "gaussian_folds", "--replicates", "40", "-o", "cert"])
    assert "my_intervals:rho_half:" in capsys.readouterr().out
    table = pd.read_csv(tmp_path / "cert" / "certificate.csv")
    assert list(table["mechanism"]) == ["gaussian_folds"] and table["replicates"].iloc[0] == 40
    assert "verdict" in (tmp_path / "cert" / "certificate.md").read_text()
    with pytest.raises(SystemExit) as exit_info:
        certify_main(["my_intervals:missing", "--mechanisms", "gaussian_folds"])
    assert exit_info.value.code == 2 and "cannot be imported" in capsys.readouterr().err
    sys.modules.pop("my_intervals", None)


def test_certify_refuses_a_bad_kind():
    with pytest.raises(ConfigError, match="kind"):
        assert_calibrated("kfold_t", kind="coverage", **FOLDS)
