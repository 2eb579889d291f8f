"""Studies: what a replicate records and how records aggregate, one module per study.

Each module provides ``execute(cfg, run_dir, options) -> StudyOutput`` and
``write_reports(run_dir, study_cfg, records=None)``; :data:`STUDIES` maps ``study.name`` to it.
"""
from simstudy.studies import cv_clt, cv_variance, histogram_exact, risk_estimates

STUDIES = {"cv_variance": cv_variance, "cv_clt": cv_clt, "nedelko_fisher": risk_estimates, "nedelko_histogram": histogram_exact}

__all__ = ["STUDIES", "cv_clt", "cv_variance", "histogram_exact", "risk_estimates"]
