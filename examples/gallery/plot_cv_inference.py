"""
CV inference on your own model
==============================

You cross-validated a model and got an error estimate: which interval should you report?
:func:`simstudy.evaluate.cross_validate_losses` runs any scikit-learn splitter and keeps
every point's loss; ``.infer()`` gives every interval and test of the package in one table, and
two models run on the same folds compare with the paired tests.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from simstudy.evaluate import compare, cross_validate_losses

X, y = load_breast_cancer(return_X_y=True)
folds = StratifiedKFold(10, shuffle=True, random_state=0)
logreg = cross_validate_losses(make_pipeline(StandardScaler(), LogisticRegression()), X, y, cv=folds,
                               name="logreg")
tree = cross_validate_losses(DecisionTreeClassifier(random_state=0), X, y, cv=folds, name="tree")
logreg

# %%
# Every interval for the logistic regression's error (0-1 loss), one row per procedure.
table = logreg.infer()
table[["procedure", "target", "estimate", "low", "high", "clipped"]]

# %%
# The intervals side by side: they differ by a factor of two in width.
fig, ax = plt.subplots(figsize=(6, 3))
rows = table.dropna(subset=["low", "high"]).reset_index(drop=True)
ax.hlines(rows.index, rows["low"], rows["high"], lw=3)
ax.plot(rows["estimate"], rows.index, "k|", ms=12)
ax.set_yticks(rows.index, rows["procedure"])
ax.set_xlabel("error rate, 95% interval")
fig.tight_layout()

# %%
# The paired comparison of the two models (loss differences logreg - tree; H0: equal error).
compare(logreg, tree).infer()[["procedure", "estimate", "low", "high", "pvalue"]]
