"""The gallery's reading order: your own parts first, then your own model, then sweeps."""
from __future__ import annotations

ORDER = ("plot_own_population.py", "plot_own_learner.py", "plot_own_loss.py", "plot_own_study.py",
         "plot_cv_inference.py", "plot_audit.py", "plot_sweep.py", "plot_regression.py")


class ExampleOrder:
    """sphinx-gallery's ``within_subsection_order``: the position in :data:`ORDER` (others last,
    by name)."""

    def __init__(self, src_dir: str):
        self.src_dir = src_dir

    def __call__(self, filename: str) -> tuple[int, str]:
        return (ORDER.index(filename) if filename in ORDER else len(ORDER), filename)

    def __repr__(self) -> str:  # sphinx-gallery compares configs by repr
        return "ExampleOrder"
