"""
Regression with an exact truth
==============================

On the Gaussian linear model the risk of any linear predictor is closed form, so every fold
model's true risk is exact. Here: Grandvalet & Bengio's quantities for ordinary least squares
with the squared loss, including a size that K does not divide (n = 25: folds of 3 and 2).
"""

# %%
import simstudy

res = simstudy.run_study("cv_variance", population="gaussian_linear", learner="ols", loss="squared",
                         sizes=[20, 25, 40, 80], replicates=200, truth=True, n_jobs=1, progress=False)
res.summary[["n", "m", "mu_hat_mean", "true_error_mean", "cv_minus_true_z", "rho", "rho_se"]]

# %%
# The study's figures: rho and the CV t-test's type-I error against n (assumed correlations 0 and
# 0.7), the type-I error against the assumed correlation, and the learning curve (CV estimate and
# true risk against n, with Monte Carlo bands and the spread across training sets).
figures = res.figures()
# sphinx_gallery_thumbnail_number = 4
