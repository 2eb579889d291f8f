"""Results render as HTML in Jupyter (``_repr_html_``): a study's result, the audit's result and a
CV of the user's own model show their headline, tables with Monte Carlo errors and figures inline,
and the fragment is small and self-contained (no file, no script, no external resource)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest

import simstudy


class _Tags(HTMLParser):
    """Counts tags and collects image sources; fails on unbalanced tables."""

    def __init__(self):
        super().__init__()
        self.tags: dict[str, int] = {}
        self.images: list[str] = []
        self.open_tables = 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))
        if tag == "table":
            self.open_tables += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self.open_tables -= 1


def _parse(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    assert parser.open_tables == 0
    assert "<script" not in fragment and "http://" not in fragment and "https://" not in fragment
    return parser


def test_study_result_renders_headline_tables_and_figures():
    res = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[20, 40], replicates=40,
                             n_jobs=1, progress=False)
    fragment = res._repr_html_()
    tags = _parse(fragment)
    assert res.headline().splitlines()[0] in fragment
    assert tags.tags.get("table", 0) >= 2 and "±" in fragment and "Wilson" in fragment
    assert len(tags.images) == len(res.figures()) and all(s.startswith("data:image/png;base64,") for s in tags.images)
    assert len(fragment) < 400_000


def test_long_tables_are_cut_with_a_note():
    from simstudy.report import notebook

    res = simstudy.run_study("cv_variance", population="logistic", learner="tree", sizes=[20, 30, 40], replicates=20,
                             rho_hats=[round(0.03 * i, 2) for i in range(30)], n_jobs=1, progress=False)
    fragment = notebook.study_result_html(res, figures=False)
    assert f"First {notebook.MAX_ROWS} of 30 rows." in fragment
    assert "<img" not in fragment


def test_cv_losses_render_the_inference_table():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold
    from simstudy.evaluate import compare, cross_validate_losses

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    folds = KFold(5, shuffle=True, random_state=0)
    a = cross_validate_losses(LogisticRegression(), X, y, cv=folds, name="logreg")
    fragment = a._repr_html_()
    _parse(fragment)
    assert "120 points, 1 round(s) of 5-fold CV" in fragment and "cv_clt_all_pairs" in fragment
    b = cross_validate_losses(LogisticRegression(C=0.01), X, y, cv=folds, name="weak")
    assert "comparison" in compare(a, b)._repr_html_()


@pytest.mark.slow
def test_audit_result_renders_recommendation_and_figure():
    from sklearn.datasets import load_diabetes
    from simstudy.audit import audit

    X, y = load_diabetes(return_X_y=True)
    res = audit(X=X[:200], y=y[:200], learner="ridge_regressor", replicates=30, nested_cv_replicates=0, n_jobs=1,
                progress=False)
    fragment = res._repr_html_()
    tags = _parse(fragment)
    assert res.recommendation.procedure in fragment and "Your CV estimate" in fragment
    assert len(tags.images) == 1 and re.search(r"rho at n = \d+", fragment)
