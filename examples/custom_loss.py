"""A loss of your own: misclassification with unequal costs.

A loss is any function of ``(y, y_hat)`` (or ``(y, y_hat, proba)``) returning one loss per
point. Here a missed positive costs 5 and a false alarm 1:

    res = simstudy.run_study("cv_variance", population="letter", learner="tree",
                             loss="examples.custom_loss.asymmetric_cost", ...)

or pass the function itself: ``loss=asymmetric_cost``. From the command line:
``study.loss=examples.custom_loss.asymmetric_cost``.
"""
from __future__ import annotations

import numpy as np


def asymmetric_cost(y, y_hat):
    """5 for a missed positive (y = 1, y_hat = 0), 1 for a false alarm, 0 when right."""
    y, y_hat = np.asarray(y), np.asarray(y_hat)
    return np.where((y == 1) & (y_hat == 0), 5.0, np.where((y == 0) & (y_hat == 1), 1.0, 0.0))
