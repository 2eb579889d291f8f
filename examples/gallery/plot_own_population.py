"""
Your own population
===================

A population is a subclass of :class:`simstudy.Population` with ``name``, ``sample(n, rng)``
(a training set of n examples) and ``seed_params()`` (the parameters that define the
distribution: they seed the random streams). With ``evaluation_set(dtype)``, a large fixed
sample, simstudy also computes every fold model's true risk (``truth=True``). Here: two Gaussian
classes whose separation is a parameter.
"""

# %%
import numpy as np

import simstudy
from simstudy.populations.base import Population, Sample


class TwoGaussians(Population):
    """Class 0 ~ N(0, I), class 1 ~ N(shift, I) in two dimensions, equal priors."""

    def __init__(self, shift=1.0, evaluation_size=20_000):
        self.name = "two_gaussians"
        self.shift = shift
        self.evaluation_size = evaluation_size

    def sample(self, n, rng):
        y = rng.integers(0, 2, n)
        X = rng.normal(size=(n, 2)) + self.shift * y[:, None]
        return Sample(X=X, y=y)

    def seed_params(self):
        return {"kind": "two_gaussians", "shift": self.shift}

    def evaluation_set(self, dtype=np.float64):
        sample = self.sample(self.evaluation_size, np.random.default_rng(0))
        return sample.X.astype(dtype), sample.y


res = simstudy.run_study("cv_variance", population=TwoGaussians(shift=1.0), learner="tree",
                         sizes=[20, 40, 80], replicates=100, truth=True, n_jobs=1, progress=False)
res.summary[["n", "mu_hat_mean", "true_error_mean", "rho", "rho_se"]]

# %%
# The study's figures (``res.figures()`` draws them all): rho against n, the t-tests' type-I
# error against n and against the assumed rho_hat, and the learning curve, where the CV estimate
# is set against the fold models' true error.
figures = res.figures()
# sphinx_gallery_thumbnail_number = 4
