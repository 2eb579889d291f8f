"""Shared figure helpers: finishing axes and saving figures (matplotlib, Agg backend).

Studies build their figures as :class:`matplotlib.figure.Figure` objects (so that a notebook
can show them); the engine saves them with :func:`save_figure`.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["style_axes", "save_figure", "plt"]


def style_axes(fig, axes, titles=None, legend_size: int = 8):
    """Titles, grids and legends on ``axes``; returns ``fig`` laid out tightly."""
    axes = list(axes) if isinstance(axes, (list, tuple, np.ndarray)) else [axes]
    titles = titles if isinstance(titles, (list, tuple)) else [titles] * len(axes)
    for ax, title in zip(axes, titles):
        if title:
            ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=legend_size)
    fig.tight_layout()
    return fig


def save_figure(fig, path: Path, dpi: int = 130) -> Path:
    """Save ``fig`` as a PNG (creating the folder) and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path
