"""
Your own loss
=============

A loss is any function of ``(y, y_hat)`` returning one loss per point. Here a missed positive
costs 5 and a false alarm 1. The same study with the 0-1 loss and with this cost shows how the
loss changes what cross-validation estimates and how correlated its fold means are.
"""

# %%
import numpy as np

import simstudy


def asymmetric_cost(y, y_hat):
    """5 for a missed positive (y = 1, y_hat = 0), 1 for a false alarm, 0 when right."""
    y, y_hat = np.asarray(y), np.asarray(y_hat)
    return np.where((y == 1) & (y_hat == 0), 5.0, np.where((y == 0) & (y_hat == 1), 1.0, 0.0))


runs = {loss_name: simstudy.run_study("cv_variance", population="logistic", learner="tree", loss=loss,
                                      sizes=[20, 40, 80], replicates=100, n_jobs=1, progress=False)
        for loss_name, loss in (("zero_one", "zero_one"), ("asymmetric_cost", asymmetric_cost))}
for name, res in runs.items():
    print(name)
    print(res.summary[["n", "mu_hat_mean", "mu_hat_se", "rho", "rho_se"]].round(3).to_string(index=False))

# %%
# The study's figures with the custom loss (``figures()`` draws them all; the learning curve's
# axis is the expected cost).
figures = runs["asymmetric_cost"].figures()

# %%
# On the command line a loss goes by import path, e.g.
# ``simstudy study.loss=examples.custom_loss.asymmetric_cost`` (run from the project root).
