"""
Your own learner
================

Any scikit-learn estimator works as it is. A learner of your own implements three methods:
``start(sample)`` prepares one training sample and returns a *state*, ``fit(state, rows, rng)``
trains a model on the sample's rows ``rows``, and ``predict(state, model, rows)`` predicts rows
of the same sample. With ``predict_features(model, X)`` simstudy can also compute each fold
model's true risk. Every split design (K-fold, 5x2, train/validation, nested CV) is a sequence
of these calls, so the learner serves every study.

Here: a nearest-centroid classifier, compared with a CART tree on Nedelko's logistic model.
"""

# %%
import numpy as np

import simstudy


class NearestCentroid:
    """Predicts the class whose training mean is closest (Euclidean distance)."""

    name = "nearest_centroid"

    def start(self, sample):
        return sample                                   # the state: the sample's X and y

    def fit(self, state, rows, rng):
        X, y = state.X[rows], state.y[rows]
        classes = np.unique(y)
        return classes, np.stack([X[y == c].mean(axis=0) for c in classes])

    def predict_features(self, model, X):
        classes, centroids = model
        distances = ((X[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        return classes[distances.argmin(axis=1)]

    def predict(self, state, model, rows):
        return self.predict_features(model, state.X[rows])

    def describe(self):
        return {"name": self.name}                      # how the manifest and the report name it


results = {}
for learner in (NearestCentroid(), "tree"):
    res = simstudy.run_study("cv_variance", population="logistic", learner=learner, sizes=[20, 40, 80],
                             replicates=100, n_jobs=1, progress=False)
    results[getattr(learner, "name", learner)] = res
    print(res.headline())

# %%
# The CV error of each learner against n, with its Monte Carlo error bars (±1.96 SE).
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 3.5))
for name, res in results.items():
    s = res.summary
    ax.errorbar(s["n"], s["mu_hat_mean"], yerr=1.96 * s["mu_hat_se"], marker="o", capsize=3, label=name)
ax.set_xticks(s["n"])
ax.set_xlabel("training-set size n")
ax.set_ylabel("mean 10-fold CV error")
ax.legend()
fig.tight_layout()
