"""A plain scikit-learn version of the fits and predictions of one cv_clt replicate (the work the
``cv_clt-full`` benchmark compares simstudy with).

Per replicate (Letter, n rows drawn with replacement, K = 10), for logistic regression
(newton-cholesky), the default tree, 5-NN, and the tree again under other seeds (the tree vs tree
comparison): 10-fold CV with the fold models kept (``cross_validate(return_estimator=True)``),
the full-sample fit, the true error of those 11 models (predictions on the 20,000 Letter rows),
Dietterich's 5x2 design (10 fits), 15 train/validation splits, and on nested replicates Bates et
al.'s nested CV (3 repetitions: 45 pair fits each, 10 outer refits for repetitions 2 and 3), all
one ``fit``/``predict`` call each, as a user without simstudy would write it. Samples and splits
come from simstudy's random streams so that the work matches; the numbers themselves are not
compared (the trees' tie-breaking draws differ).
"""
from __future__ import annotations

import numpy as np


def learners():
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    return {"logreg": LogisticRegression(solver="newton-cholesky"), "tree": DecisionTreeClassifier(),
            "knn": KNeighborsClassifier(5), "tree copy": DecisionTreeClassifier()}


def _fit_score(est, X, y, train, test, seed):
    from sklearn.base import clone

    model = clone(est)
    if "random_state" in model.get_params():
        model.set_params(random_state=seed)
    return np.mean(model.fit(X[train], y[train]).predict(X[test]) != y[test])


def replicate(population, n: int, r: int, nested: bool, seed: int = 2020, K: int = 10, splits: int = 15,
              repetitions: int = 3) -> float:
    """All fits of replicate r at size n; returns a checksum (sum of the CV and true errors)."""
    import warnings

    from sklearn.model_selection import PredefinedSplit, cross_validate

    from simstudy.cv.splits import FiveByTwo, KFold, RepeatedSplits
    from simstudy.rng import condition_key, replicate_rng

    key = condition_key({"study": "cv_clt-plain", "n": n})
    rng = replicate_rng(seed, key, r)
    sample = population.sample(n, rng)
    X, y = sample.X.astype(float), sample.y
    labels = KFold(K).labels(n, rng)
    halves = FiveByTwo().halves(n, rng)
    tv_test = RepeatedSplits(n // K, splits).test_masks(n, rng)
    Xpop, ypop = population.evaluation_set(np.float64)
    everyone = np.arange(n)
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, est in learners().items():
            seeds = iter(rng.integers(0, 2**31 - 1, 1000))
            if "random_state" in est.get_params():
                est = est.set_params(random_state=int(next(seeds)))
            cv = cross_validate(est, X, y, cv=PredefinedSplit(labels), return_estimator=True)
            models = list(cv["estimator"]) + [_refit(est, X, y)]
            total += 1 - cv["test_score"].mean()
            total += sum(np.mean(m.predict(Xpop) != ypop) for m in models)
            for h in halves:
                total += _fit_score(est, X, y, h, ~h, int(next(seeds))) + _fit_score(est, X, y, ~h, h, int(next(seeds)))
            for t in tv_test:
                total += _fit_score(est, X, y, ~t, t, int(next(seeds)))
            if nested and name != "tree copy":
                nested_rng = np.random.default_rng(r)
                for rep in range(repetitions):
                    lab = labels if rep == 0 else KFold(K).labels(n, nested_rng)
                    for a in range(K):
                        for b in range(a + 1, K):
                            test = (lab == a) | (lab == b)
                            total += _fit_score(est, X, y, everyone[~test], everyone[test], int(next(seeds)))
                        if rep > 0:
                            total += _fit_score(est, X, y, everyone[lab != a], everyone[lab == a], int(next(seeds)))
    return float(total)


def _refit(est, X, y):
    from sklearn.base import clone

    return clone(est).fit(X, y)
