"""simstudy.studies.nedelko_histogram.libm: the C library's exp and log, elementwise, whatever NumPy dispatches to."""
import math

import numpy as np

from simstudy.studies.nedelko_histogram import libm


def _reference(function, x):
    """Python's math function (a direct call into the C library) at every element."""
    return np.array([function(v) for v in x.ravel()]).reshape(x.shape)


def test_exp_is_the_c_library_s_bit_for_bit():
    rng = np.random.default_rng(20261123)
    x = np.concatenate([rng.uniform(-745.0, 709.0, 200_000), rng.uniform(-5.0, 5.0, 200_000),
                        [0.0, -0.0, 1e-300, -1e-300, 709.78]])
    assert np.array_equal(libm.exp(x), _reference(math.exp, x))


def test_log_is_the_c_library_s_bit_for_bit():
    rng = np.random.default_rng(20261124)
    x = np.concatenate([rng.uniform(0.0, 10.0, 200_000), np.exp(rng.uniform(-700.0, 700.0, 200_000)),
                        [5e-324, 1e-310, 1.0, np.finfo(float).max]])
    assert np.array_equal(libm.log(x), _reference(math.log, x))


def test_special_values_and_shapes_follow_numpy():
    with np.errstate(divide="ignore", invalid="ignore"):
        edge = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan])
        np.testing.assert_array_equal(libm.log(edge), np.log(edge))
        np.testing.assert_array_equal(libm.exp(edge), np.exp(edge))
    grid = np.linspace(0.1, 3.0, 12).reshape(3, 4)
    assert libm.exp(grid).shape == (3, 4) and libm.log(grid[None]).shape == (1, 3, 4)
    np.testing.assert_allclose(libm.exp(libm.log(grid)), grid, rtol=1e-15)
