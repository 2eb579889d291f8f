"""Learners that misbehave on purpose (importable by Hydra's instantiate in the tests)."""
import warnings

from sklearn.tree import DecisionTreeClassifier


class FlakyTree(DecisionTreeClassifier):
    """Raises on some training sets of 18 (those with a large sum of the first feature: about
    30% of the replicates at n = 20, whose 10 training folds overlap heavily)."""

    def fit(self, X, y, **kwargs):
        if len(y) == 18 and X[:, 0].sum() > 2.3:
            raise RuntimeError("flaky fit")
        return super().fit(X, y, **kwargs)


class WarningTree(DecisionTreeClassifier):
    """Warns at every fit."""

    def fit(self, X, y, **kwargs):
        warnings.warn("this tree always warns", UserWarning)
        return super().fit(X, y, **kwargs)
