"""The site's stylesheet and script (``site.css``, ``site.js`` in this folder, shipped with the
package), written next to its pages (no CDN, no server: the site opens from disk, offline).

The script reads ``data.js`` (``window.BENCH``: the cell table's columns the page needs, one array
per row) and redraws the leaderboard and the heat-map tables whenever a filter changes, with the
same definitions as :mod:`.leaderboard` and :mod:`.heatmap` (the tests compare the two). Clicking
a column header sorts a table; the address may set filters (``index.html?estimand=Err_n&learner=tree``).
After each redraw it records what it computed on
``document.body.dataset.benchCheck`` for the browser test.
"""
from __future__ import annotations

from importlib.resources import files

import matplotlib
import numpy as np

__all__ = ["SITE_CSS", "SITE_JS", "RDBU_ANCHORS"]

#: matplotlib's RdBu colour map (the heat map figure's) at 11 evenly spaced points, red = under-coverage:
#: the HTML heat map interpolates between them, so that its colours match the figure's.
RDBU_ANCHORS = tuple(matplotlib.colors.to_hex(c) for c in matplotlib.colormaps["RdBu"](np.linspace(0, 1, 11)))

SITE_CSS = (files(__package__) / "site.css").read_text(encoding="utf-8")
SITE_JS = (files(__package__) / "site.js").read_text(encoding="utf-8")
