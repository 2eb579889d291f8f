"""
Auditing your own cross-validation
==================================

:func:`simstudy.audit.audit` treats your data as the population and simulates, at your n and at
n/2, how often each interval procedure rejects a true null hypothesis (its size) and how often
it detects a shift (its power). It then recommends the most powerful procedure whose size is
shown to stay within alpha + 1 point. Here: ridge regression on scikit-learn's diabetes data
(442 rows), absolute loss, at a small scale (the defaults are 1,000 replicates and nested CV on
200; ``simstudy audit FILE`` does the same from the command line).
"""

# %%
from sklearn.datasets import load_diabetes

from simstudy.audit import audit

X, y = load_diabetes(return_X_y=True)
res = audit(X=X, y=y, learner="ridge_regressor", loss="absolute", replicates=100, nested_cv_replicates=0,
            n_jobs=1, progress=False)
print(res.recommendation.text)

# %%
# Your CV estimate with every procedure's interval, the recommended one first.
res.intervals

# %%
# Size and power of every procedure in the two simulated settings, with Wilson intervals.
res.tests["n"].head(12)

# %%
# The audit's figure: left, each procedure's size in the two settings with its Wilson interval and
# the rule's limit; right, your interval by every procedure, the recommended one thick.
from simstudy.audit.report import audit_figure

audit_figure(res)

# %%
# In a notebook the result renders as a small report (what you see below).
res
