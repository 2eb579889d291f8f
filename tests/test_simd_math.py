"""The vectorised exp and log1p of the logistic kernel against the C library's.

The reference is the C library's scalar ``exp`` and ``log1p`` (through :mod:`math`), not NumPy's
ufuncs: NumPy dispatches those by CPU (on a machine with AVX-512 its ``log1p`` differs from the C
library's in the last bit for 5.4% of the arguments below, against 0.2% for ours), so they would
make the test depend on the machine."""
import math

import numpy as np

from simstudy.learners.logistic.simd_math import exp_neg_abs, log1p_unit


def _libm(function, x):
    """``function`` (math.exp, math.log1p: the C library's) at every entry of x."""
    return np.fromiter((function(v) for v in x.tolist()), np.float64, x.size)


def _ulps(ours, ref):
    """|ours - ref| in units of the last place of ref (the smallest subnormal for ref = 0)."""
    return np.abs(ours - ref) / np.spacing(np.maximum(np.abs(ref), 5e-324))


def _exp(z):
    out = np.full(z.size + 3, -1.0)       # longer than m: entries past m stay untouched
    exp_neg_abs(z, z.size, out, np.empty(z.size, np.int64))
    assert np.all(out[z.size:] == -1.0)
    return out[:z.size]


def _log1p(x):
    out = np.full(x.size + 3, -1.0)
    log1p_unit(x, x.size, out)
    assert np.all(out[x.size:] == -1.0)
    return out[:x.size]


def test_exp_within_one_ulp_of_the_c_library():
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.normal(0, 5, 10**6), rng.uniform(-760, 760, 10**6),
                        np.linspace(-745.5, 745.5, 10**6)])
    ours, ref = _exp(z), _libm(math.exp, -np.abs(z))
    assert _ulps(ours, ref).max() <= 1.0
    assert (ours != ref).mean() < 0.1      # about 6% differ in the last bit (5.9% here)


def test_exp_special_arguments():
    z = np.array([0.0, -0.0, 1.0, -1.0, 708.0, -708.0, 708.5, 745.0, 745.2, 800.0, np.inf, -np.inf, np.nan])
    ours = _exp(z)
    assert ours[0] == 1.0 and ours[1] == 1.0
    assert ours[2] == ours[3] and abs(ours[2] - math.exp(-1)) <= math.ulp(math.exp(-1))
    assert _ulps(ours[4:7], np.exp(-np.abs(z[4:7]))).max() <= 1.0     # the floor and below it
    assert ours[7] == np.exp(-745.0) and ours[7] > 0.0                  # subnormal, from np.exp
    assert ours[8] == 0.0 and ours[9] == 0.0 and ours[10] == 0.0 and ours[11] == 0.0
    assert np.isnan(ours[12])


def test_log1p_within_one_ulp_on_the_unit_interval():
    rng = np.random.default_rng(1)
    root = math.sqrt(2.0) - 1.0            # where 1 + x crosses sqrt(2): k = 0 -> 1
    x = np.concatenate([rng.random(10**6), np.exp(-rng.uniform(0, 745, 10**6)), np.linspace(0, 1, 10**6),
                        [0.0, 5e-324, 1e-300, 1e-17, 1.0, root, np.nextafter(root, 0), np.nextafter(root, 1)]])
    ours, ref = _log1p(x), _libm(math.log1p, x)
    assert _ulps(ours, ref).max() <= 1.0
    assert (ours != ref).mean() < 0.01     # about 0.2% differ in the last bit (0.17% here)
    assert _log1p(np.array([0.0]))[0] == 0.0
    assert abs(_log1p(np.array([1.0]))[0] - math.log(2.0)) <= math.ulp(math.log(2.0))


def test_log1p_in_place():
    x = np.exp(-np.linspace(0, 30, 100))
    ref = np.log1p(x)
    log1p_unit(x, x.size, x)
    assert _ulps(x, ref).max() <= 1.0
