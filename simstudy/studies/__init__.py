"""Studies: what a replicate records and how records aggregate, one module per study."""
from simstudy.studies import cv_variance

__all__ = ["cv_variance"]
