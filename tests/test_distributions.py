"""simstudy.inference.distributions: scipy.stats's t and normal, bit for bit, without importing it."""
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from conftest import ROOT
from simstudy.inference import distributions as D

RNG = np.random.default_rng(2026)
X = np.concatenate([RNG.normal(0, 3, 100_000), RNG.normal(0, 1e-3, 1_000),
                    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -40.0, 40.0, 1e300]])
Q = np.concatenate([RNG.uniform(0, 1, 100_000), RNG.uniform(0, 1e-6, 1_000),
                    [0.0, 1.0, 0.5, 1e-300, 1 - 1e-16, np.nan]])


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a) & np.isnan(b)
    assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(np.signbit(a)[~nan], np.signbit(b)[~nan])  # 0.0 and -0.0 too


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 19, 29, 99, 1000, 2.5, 1e7])
def test_student_t_is_scipy_stats_bit_for_bit(df):
    _same_bits(D.t_cdf(X, df), stats.t.cdf(X, df))
    _same_bits(D.t_sf(X, df), stats.t.sf(X, df))
    _same_bits(D.t_ppf(Q, df), stats.t.ppf(Q, df))


def test_normal_is_scipy_stats_bit_for_bit():
    _same_bits(D.norm_cdf(X), stats.norm.cdf(X))
    _same_bits(D.norm_sf(X), stats.norm.sf(X))
    _same_bits(D.norm_ppf(Q), stats.norm.ppf(Q))


def test_known_values_and_scalar_types():
    # tables: t_{0.975; 9} = 2.262157..., z_{0.975} = 1.959963..., P(T_1 > 1) = 1/4 (Cauchy)
    assert D.t_ppf(0.975, 9) == pytest.approx(2.2621571627982, abs=1e-12)
    assert D.norm_ppf(0.975) == pytest.approx(1.959963984540054, abs=1e-15)
    assert D.t_sf(1.0, 1) == pytest.approx(0.25, abs=1e-15)
    assert D.norm_cdf(0.0) == 0.5 and D.t_ppf(0.0, 3) == -np.inf and D.t_ppf(1.0, 3) == np.inf
    for value, reference in ((D.t_sf(1.3, 9), stats.t.sf(1.3, 9)), (D.norm_ppf(0.5), stats.norm.ppf(0.5))):
        assert type(value) is type(reference) is np.float64 and value == reference
    assert D.t_cdf(np.float32(1.3), 9) == stats.t.cdf(np.float32(1.3), 9)  # computed in float64 as scipy.stats does


def test_the_cv_variance_aggregation_and_report_never_import_scipy_stats(tmp_path):
    """The quick study's aggregation and report need only scipy.special (0.5 s of CPU less). A
    residual population: no learner, so scikit-learn (which imports scipy.stats) stays out."""
    code = f"""
import sys
from simstudy.engine.run import run_study
result = run_study("cv_variance", population={{"kind": "gaussian_folds", "rho": 0.3}},
                   runner={{"n_jobs": 1, "progress": False}}, sizes=[20, 40], replicates=30, seed=1,
                   out={str(tmp_path)!r})
print("scipy.stats" in sys.modules, len(result.tables.summary))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "2"]
