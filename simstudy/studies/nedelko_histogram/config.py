"""Settings of the nedelko_histogram study (Nedelko's Figure 4, exact)."""
from __future__ import annotations

from dataclasses import dataclass

from simstudy.studies.settings import StudyConfig, fail

__all__ = ["NedelkoHistogramConfig"]


@dataclass
class NedelkoHistogramConfig(StudyConfig):
    """Nedelko's Figure 4: the histogram classifier computed exactly over a grid of distributions."""

    name: str = "nedelko_histogram"
    cells: int = 3
    sample_size: int = 12
    K: int = 4
    #: Grid over the simplex of (cell, class) distributions: coordinates in multiples of 1/grid_steps.
    grid_steps: int = 6
    #: A cell whose two class counts are equal (also an empty cell) predicts: "overall" the
    #: majority class of the whole training sample (class 0 if that ties too), "zero" class 0,
    #: "coin" a fair coin (in expectation). Nedelko states no rule (simstudy.learners.histogram).
    tie: str = "overall"

    def validate(self) -> None:
        for name in ("cells", "sample_size", "K", "grid_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                fail(f"study.{name}", value, "use a whole number.")
        if self.cells < 1:
            fail("study.cells", self.cells, "need at least one cell.")
        if self.K < 2 or self.sample_size % self.K or self.sample_size < 2 * self.K:
            fail("study.sample_size", self.sample_size,
                 f"must be a multiple of study.K={self.K} with at least two examples per fold.")
        if self.sample_size > 20 or self.cells > 5:
            fail("study.sample_size", self.sample_size,
                 "exact enumeration grows exponentially: keep sample_size <= 20 and cells <= 5.")
        from simstudy.learners.histogram import TIE_RULES   # here: the CLI loads every config at start-up

        if self.tie not in TIE_RULES:
            fail("study.tie", self.tie, f"use one of {', '.join(TIE_RULES)}.")
        if self.grid_steps < 1:
            fail("study.grid_steps", self.grid_steps, "use a positive number of grid steps (6 gives step 1/6).")
