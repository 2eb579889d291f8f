"""A small SVG canvas for the drill-down figures: panels of horizontal dot plots sharing one row axis.

The benchmark's site has one figure per data cell (hundreds at the full scale); drawing them as
SVG text keeps the site build to milliseconds per cell, where a matplotlib figure costs a fifth
of a second, and the files to a few kilobytes. Only what those figures need is here: a panel with
a linear x scale, ticks, a grid, vertical lines and bands, horizontal error bars, bars and
markers, row labels, titles and a legend.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from simstudy.report.benchmark.markup import esc

__all__ = ["Canvas", "Panel", "nice_ticks"]

#: Pixels per character of the 11 px sans-serif labels (for the left margin).
CHAR_WIDTH = 6.4
ROW_HEIGHT = 20
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]``: steps of 1, 2, 2.5 or 5 times a power of ten."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [lo]
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    count = int(math.floor((hi - first) / step + 1e-9)) + 1
    return [round(first + i * step, 12) for i in range(count)]


def _num(value: float) -> str:
    return f"{value:.1f}"


class Panel:
    """One panel: a linear x scale from ``lo`` to ``hi`` over ``width`` pixels at ``left``, the
    canvas's rows stacked from ``top`` (row i at ``top + (i + 0.5) * ROW_HEIGHT``)."""

    def __init__(self, canvas: "Canvas", left: float, width: float, lo: float, hi: float):
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            lo, hi = (lo - 0.5, lo + 0.5) if math.isfinite(lo) else (0.0, 1.0)
        self.canvas, self.left, self.width, self.lo, self.hi = canvas, left, width, lo, hi

    def x(self, value: float) -> float:
        return self.left + (value - self.lo) / (self.hi - self.lo) * self.width

    def y(self, row: float) -> float:
        return self.canvas.top + (row + 0.5) * ROW_HEIGHT

    @property
    def bottom(self) -> float:
        return self.canvas.top + self.canvas.rows * ROW_HEIGHT

    def frame(self, title: str, label: str, tick_text: Callable[[float], str] = lambda v: f"{v:g}") -> None:
        """Grid lines, axis box, ticks with their labels, the x label and the title."""
        top, bottom, out = self.canvas.top, self.bottom, self.canvas.parts
        for tick in nice_ticks(self.lo, self.hi):
            x = _num(self.x(tick))
            out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#e6e6e6"/>')
            out.append(f'<line x1="{x}" y1="{bottom}" x2="{x}" y2="{bottom + 4}" stroke="#333"/>')
            out.append(f'<text x="{x}" y="{bottom + 15}" text-anchor="middle" font-size="10">'
                       f"{esc(tick_text(tick))}</text>")
        out.append(f'<rect x="{_num(self.left)}" y="{top}" width="{_num(self.width)}" height="{bottom - top}" '
                   'fill="none" stroke="#333" stroke-width="0.8"/>')
        out.append(f'<text x="{_num(self.left + self.width / 2)}" y="{bottom + 31}" text-anchor="middle" '
                   f'font-size="11">{esc(label)}</text>')
        out.append(f'<text x="{_num(self.left + self.width)}" y="{top - 6}" text-anchor="end" font-size="11">'
                   f"{esc(title)}</text>")

    def band(self, lo: float, hi: float, colour: str = "#e0e0e0") -> None:
        lo, hi = max(lo, self.lo), min(hi, self.hi)
        if hi > lo:
            self.canvas.parts.append(f'<rect x="{_num(self.x(lo))}" y="{self.canvas.top}" '
                                     f'width="{_num(self.x(hi) - self.x(lo))}" '
                                     f'height="{self.bottom - self.canvas.top}" fill="{colour}"/>')

    def vline(self, value: float, dashed: bool = False, colour: str = "#4d4d4d") -> None:
        if self.lo <= value <= self.hi:
            x = _num(self.x(value))
            dash = ' stroke-dasharray="4 3"' if dashed else ""
            self.canvas.parts.append(f'<line x1="{x}" y1="{self.canvas.top}" x2="{x}" y2="{self.bottom}" '
                                     f'stroke="{colour}" stroke-width="0.9"{dash}/>')

    def error_bar(self, row: float, lo: float, hi: float, colour: str) -> None:
        if math.isfinite(lo) and math.isfinite(hi):
            y, a, b = _num(self.y(row)), _num(self.x(lo)), _num(self.x(hi))
            self.canvas.parts.append(
                f'<path d="M{a} {y}H{b}M{a} {float(y) - 3:.1f}V{float(y) + 3:.1f}M{b} {float(y) - 3:.1f}'
                f'V{float(y) + 3:.1f}" stroke="{colour}" stroke-width="1.1" fill="none"/>')

    def bar(self, row: float, start: float, end: float, colour: str, opacity: float) -> None:
        if math.isfinite(start) and math.isfinite(end) and end != start:
            a, b = sorted((self.x(start), self.x(end)))
            self.canvas.parts.append(f'<rect x="{_num(a)}" y="{_num(self.y(row) - 3.5)}" width="{_num(b - a)}" '
                                     f'height="7" fill="{colour}" fill-opacity="{opacity}"/>')

    def marker(self, row: float, value: float, shape: str, colour: str, filled: bool = True, label: str = "") -> None:
        """A marker at ``value`` on row ``row``; ``label`` names it (``data-label``, with ``data-value``)."""
        if math.isfinite(value):
            data = f' data-label="{esc(label)}" data-value="{value!r}"' if label else ""
            self.canvas.parts.append(marker_svg(self.x(value), self.y(row), shape, colour, filled, data))


def marker_svg(x: float, y: float, shape: str, colour: str, filled: bool = True, data: str = "") -> str:
    """One marker: ``o`` circle, ``s`` square, ``D`` diamond or ``x`` cross, centred at (x, y);
    ``data`` holds extra attributes."""
    fill = colour if filled else "white"
    style = f'fill="{fill}" stroke="{colour}" stroke-width="1.1"{data}'
    if shape == "s":
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" {style}/>'
    if shape == "D":
        return (f'<path d="M{x:.1f} {y - 4.5:.1f}L{x + 4.5:.1f} {y:.1f}L{x:.1f} {y + 4.5:.1f}'
                f'L{x - 4.5:.1f} {y:.1f}Z" {style}/>')
    if shape == "x":
        return (f'<path d="M{x - 3.5:.1f} {y - 3.5:.1f}L{x + 3.5:.1f} {y + 3.5:.1f}M{x - 3.5:.1f} {y + 3.5:.1f}'
                f'L{x + 3.5:.1f} {y - 3.5:.1f}" stroke="{colour}" stroke-width="1.3"{data}/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.6" {style}/>'


class Canvas:
    """A figure of ``rows`` labelled rows and panels of the given pixel widths side by side."""

    def __init__(self, labels: Sequence[str], widths: Sequence[float], gap: float = 28, legend_rows: int = 1):
        self.labels = list(labels)
        self.rows = len(self.labels)
        self.top = 24 + 16 * legend_rows
        margin = 12 + CHAR_WIDTH * max((len(s) for s in self.labels), default=4)
        self.lefts, left = [], margin
        for width in widths:
            self.lefts.append(left)
            left += width + gap
        self.widths = list(widths)
        self.width = left - gap + 14
        self.height = self.top + self.rows * ROW_HEIGHT + 40
        self.parts: list[str] = []

    def panel(self, index: int, lo: float, hi: float) -> Panel:
        return Panel(self, self.lefts[index], self.widths[index], lo, hi)

    def row_labels(self) -> None:
        x = self.lefts[0] - 6
        for i, label in enumerate(self.labels):
            y = self.top + (i + 0.5) * ROW_HEIGHT + 4
            self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="end" font-size="11">{esc(label)}</text>')

    def legend(self, left: float, entries: Sequence[tuple[str, str, str, bool]], row: int = 0) -> None:
        """Entries (label, shape, colour, filled) in one line above the panels."""
        x, y = left + 6, 12 + 16 * row
        for label, shape, colour, filled in entries:
            self.parts.append(marker_svg(x, y, shape, colour, filled))
            self.parts.append(f'<text x="{x + 8:.1f}" y="{y + 4:.1f}" font-size="10">{esc(label)}</text>')
            x += 26 + CHAR_WIDTH * len(label)

    def svg(self, title: str) -> str:
        """The figure as an SVG document (``title``: its accessible name)."""
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" height="{self.height:.0f}" '
                f'viewBox="0 0 {self.width:.0f} {self.height:.0f}" {FONT} role="img">'
                f"<title>{esc(title)}</title>"
                f'<rect width="100%" height="100%" fill="white"/>' + "".join(self.parts) + "</svg>\n")
