"""CV inference on your own model (the notebook use case).

:func:`cross_validate_losses` runs K-fold CV (any scikit-learn splitter) of your estimator on
your (X, y) with a loss and keeps every point's loss; :func:`from_predictions` and
:func:`from_cross_validate` take what ``cross_val_predict`` / ``cross_validate`` already
produced, without refitting; :func:`compare` pairs two models run on the same folds; and
:meth:`CVLosses.infer` (= :func:`infer`) turns any of them into every interval and test of
:mod:`simstudy.inference` as one tidy DataFrame.
"""
from simstudy.evaluate.build import cross_validate_losses, from_cross_validate, from_predictions
from simstudy.evaluate.result import CVLosses, compare, difference_bounds
from simstudy.evaluate.table import COLUMNS, infer

__all__ = ["COLUMNS", "CVLosses", "compare", "cross_validate_losses", "difference_bounds", "from_cross_validate",
           "from_predictions", "infer"]
