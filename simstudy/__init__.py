"""simstudy: Monte Carlo simulation studies of cross-validation."""
__version__ = "0.1.0"
