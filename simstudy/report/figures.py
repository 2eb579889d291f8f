"""Shared figure style: one look and one error-bar convention for every study's figures.

Studies build their figures as :class:`matplotlib.figure.Figure` objects (so that a notebook
can show them); the engine saves them with :func:`save_figure`. The helpers here make a figure
fit for a paper whatever the study:

- :func:`size_axis`: a (log) axis ticked at the values actually run, with plain labels
  (``100, 200, 400``, never ``2x10^2``); :func:`plain_log_axis` for any other log axis;
- :func:`rate_bars` / :func:`mean_bars`: error bars in the one convention of tables and
  figures, :data:`ERROR_BARS` (95% intervals: Wilson score intervals for rates, +-1.96 Monte Carlo
  standard errors for means and ratios);
- :func:`paper_points`: published reference values (open black squares);
- :func:`finish`: titles, grids, one legend outside the data (below the panels) and a caption
  that names the error-bar convention;
- :func:`panel_grid`, :func:`series_style`: small multiples with at most a few series per panel
  and the same colour for the same series in every panel.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator  # noqa: E402
from simstudy.files import atomic_path  # noqa: E402

__all__ = ["ERROR_BARS", "Z95", "style_axes", "save_figure", "draw_figure", "plt", "size_axis", "plain_log_axis",
           "rate_bars", "mean_bars", "paper_points", "finish", "in_order_of_x", "panel_grid", "series_style",
           "plain_number"]

log = logging.getLogger("simstudy")

#: The two-sided 95% normal quantile used for every "+-" and error bar of means.
Z95 = 1.959963984540054
#: The error-bar convention shared by figures and tables (figure captions, Markdown notes, HTML).
ERROR_BARS = ("Error bars and +- are 95% intervals: Wilson score intervals for rates, "
              "+-1.96 Monte Carlo standard errors for means and ratios.")

_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
            "tab:cyan", "tab:gray"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


def plain_number(value: float, _pos=None) -> str:
    """A tick label without powers of ten: 100, 0.05, 2000 (``%g`` up to 7 digits)."""
    if not np.isfinite(value):
        return ""
    return f"{value:.7g}"


def plain_log_axis(ax, axis: str = "y") -> None:
    """Plain decimal labels on a log axis, ticked at 1, 2, 5 x powers of ten (20, 50, 100, not 2x10^1)."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(FuncFormatter(plain_number))
    target.set_minor_formatter(NullFormatter())


def size_axis(ax, values: Iterable[float], axis: str = "x", log: bool = True, label: str | None = None) -> None:
    """Tick an axis at exactly ``values`` (the sizes run), plain labels, on a log scale by default.

    With many values, every other label is kept so that labels never overlap.
    """
    values = sorted({float(v) for v in values if np.isfinite(v)})
    target = ax.xaxis if axis == "x" else ax.yaxis
    if log and values and min(values) > 0:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
        lo, hi = values[0], values[-1]
        pad = (hi / lo) ** 0.06 if hi > lo else 1.3
        (ax.set_xlim if axis == "x" else ax.set_ylim)(lo / pad, hi * pad)
    target.set_major_locator(matplotlib.ticker.FixedLocator(values))
    step = 1 if len(values) <= 8 else 2
    labels = [plain_number(v) if i % step == 0 else "" for i, v in enumerate(values)]
    target.set_major_formatter(matplotlib.ticker.FixedFormatter(labels))
    target.set_minor_locator(NullLocator())
    if label:
        (ax.set_xlabel if axis == "x" else ax.set_ylabel)(label)


def series_style(names: Sequence[str]) -> dict[str, dict]:
    """A fixed colour and marker per series name (the same series looks the same in every panel)."""
    return {name: {"color": _COLOURS[i % len(_COLOURS)], "marker": _MARKERS[i % len(_MARKERS)]}
            for i, name in enumerate(dict.fromkeys(names))}


def in_order_of_x(x, *ys) -> tuple[np.ndarray, ...]:
    """``x`` and the ``ys`` as arrays, sorted by ``x`` when it is numeric (a line joins its points
    in the order given: sizes run as ``[40, 20, 30]`` would be drawn zig-zag); categories keep
    their order."""
    x = np.asarray(x)
    arrays = [np.asarray(y) for y in ys]
    if x.ndim == 1 and np.issubdtype(x.dtype, np.number) and len(x) > 1:
        order = np.argsort(x, kind="stable")
        x, arrays = x[order], [a[order] if a.ndim == 1 and len(a) == len(order) else a for a in arrays]
    return (x, *arrays)


def rate_bars(ax, x, rate, low, high, scale: float = 100.0, **kwargs):
    """A rate with its 95% Wilson interval as asymmetric error bars (``scale`` 100: percent)."""
    x, rate, low, high = in_order_of_x(x, rate, low, high)
    rate, low, high = (np.asarray(v, dtype=float) * scale for v in (rate, low, high))
    err = np.clip(np.vstack([rate - low, high - rate]), 0, None)
    kwargs.setdefault("capsize", 2)
    kwargs.setdefault("markersize", 4)
    return ax.errorbar(x, rate, yerr=err, **kwargs)


def mean_bars(ax, x, mean, se, scale: float = 1.0, **kwargs):
    """A Monte Carlo mean with +-1.96 standard errors as error bars."""
    x, mean, se = in_order_of_x(x, mean, se)
    mean = np.asarray(mean, dtype=float) * scale
    se = np.nan_to_num(np.asarray(se, dtype=float) * scale)
    kwargs.setdefault("capsize", 2)
    kwargs.setdefault("markersize", 4)
    return ax.errorbar(x, mean, yerr=Z95 * se, **kwargs)


def paper_points(ax, x, y, label: str = "paper", **kwargs):
    """Published values as open black squares joined by a thin dashed line."""
    style = {"color": "black", "marker": "s", "mfc": "none", "ls": "--", "lw": 0.8, "markersize": 6, **kwargs}
    x, y = in_order_of_x(x, y)
    return ax.plot(x, y, label=label, **style)


def panel_grid(rows: int, cols: int, width: float = 4.2, height: float = 3.3, sharey: bool | str = False):
    """``rows x cols`` small multiples; returns ``(fig, axes)`` with ``axes`` a 2-D array."""
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False, sharey=sharey)
    return fig, axes


def _unique_handles(axes) -> tuple[list, list]:
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    return handles, labels


def finish(fig, axes, titles=None, caption: str | None = ERROR_BARS, legend: str = "below", ncol: int | None = None,
           legend_size: int = 8):
    """Titles, grids, one legend outside the data and a caption; returns ``fig``.

    Parameters
    ----------
    legend : {"below", "right", "none"}
        One legend for the whole figure (the series of every panel, once each), placed below
        the panels or to their right, never over the data.
    caption : str or None
        Text under the figure; by default the error-bar convention :data:`ERROR_BARS`.
    """
    axes = list(np.ravel(axes)) if isinstance(axes, (list, tuple, np.ndarray)) else [axes]
    titles = titles if isinstance(titles, (list, tuple)) else [titles] * len(axes)
    for ax, title in zip(axes, titles):
        if title:
            ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    handles, labels = _unique_handles(axes)
    fig.tight_layout()
    if handles and legend == "below":
        ncol = ncol or min(len(labels), 4)
        rows = -(-len(labels) // ncol)
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, fontsize=legend_size,
                   frameon=False)
        below = 0.08 + 0.2 * rows * legend_size / 8  # inches taken by the legend
    else:
        if handles and legend == "right":
            fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=legend_size,
                       frameon=False)
        below = 0.05
    if caption:
        fig.text(0.5, -below / fig.get_size_inches()[1], caption, ha="center", va="top", fontsize=7, style="italic",
                 wrap=True)
    return fig


def style_axes(fig, axes, titles=None, legend_size: int = 8, caption: str | None = None):
    """Titles, grids and one legend outside the data (below the panels); plain labels on log axes.

    The former per-axes helper, kept for figures that have not moved to :func:`finish`. Without
    a ``caption``, a figure with error bars gets :data:`ERROR_BARS` as its caption (and one
    without error bars none).
    """
    from matplotlib.container import ErrorbarContainer

    flat = list(np.ravel(axes)) if isinstance(axes, (list, tuple, np.ndarray)) else [axes]
    for ax in flat:
        for axis in ("x", "y"):
            if (ax.get_xscale() if axis == "x" else ax.get_yscale()) == "log":
                plain_log_axis(ax, axis)
    if caption is None and any(isinstance(c, ErrorbarContainer) for ax in flat for c in ax.containers):
        caption = ERROR_BARS
    return finish(fig, axes, titles, caption=caption, legend_size=legend_size)


def save_figure(fig, path: Path, dpi: int = 130) -> Path:
    """Save ``fig`` as a PNG (creating the folder) and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:  # format given: the temporary name has no .png
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path


def draw_figure(figure) -> Figure:
    """``figure`` itself, or the Figure its maker (a function of no argument) draws.

    Raises
    ------
    TypeError
        ``figure`` is neither, or its maker returned something else.
    """
    drawn = figure() if callable(figure) and not isinstance(figure, Figure) else figure
    if not isinstance(drawn, Figure):
        raise TypeError(f"a study's figure must be a matplotlib Figure or a function of no argument returning one "
                        f"(Study.figures); got {type(figure).__name__}"
                        + (f" returning {type(drawn).__name__}" if drawn is not figure else ""))
    return drawn


