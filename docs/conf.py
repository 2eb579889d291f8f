"""Sphinx configuration of simstudy's documentation (built offline; warnings are errors in CI).

The site: getting started, user guide, configuration reference, reproductions, statistics,
gallery, API reference, benchmarks, changelog, developer guide. Generated at build time, never
committed (``docs/.gitignore``):

- ``_generated/configuration.rst.inc``: every field of every registered part
  (``sphinxext/configref.py``), ``_generated/benchmarks.rst.inc``: the latest benchmark records
  (``sphinxext/benchpage.py``), and ``_generated/benchmark_results.rst.inc`` with the results site
  of a committed benchmark run in ``_generated/extra/benchmark/`` (``sphinxext/benchsite.py``),
  written only when their text changes;
- ``api/generated/``: one page per module (autosummary, recursive: new modules appear by
  themselves);
- ``auto_examples/``: the gallery, executed from ``examples/gallery/`` (sphinx-gallery).

Math is MathML written at build time (``sphinxext/mathml.py``): no script from the internet.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "sphinxext"))
os.environ.setdefault("MPLBACKEND", "Agg")

project = "simstudy"
author = "simstudy developers"
copyright = "simstudy developers"
release = version = "0.2.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "mathml",
    "repotext",
    "plaindocs",
    "reexports",
    "resultcsv",
]

exclude_patterns = ["_build", "_generated", "**/*.rst.inc", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
templates_path = ["_templates"]
suppress_warnings = ["ref.python"]  # several packages re-export the names of their modules
nitpicky = False

# -- API reference: autodoc + autosummary, docstrings in numpydoc format
# Generated anew on every build: pages of modules that moved or were removed would otherwise stay
# behind, outside every toctree (a warning, so an error under -W).
shutil.rmtree(DOCS / "api" / "generated", ignore_errors=True)
autosummary_generate = True
autosummary_imported_members = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"            # the numpydoc "Parameters" sections carry the types
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

# -- the gallery: every script of examples/gallery runs at build time, at small scale
sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples" / "gallery")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"\.py$",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "gallery_order.ExampleOrder",
    "download_all_examples": False,
    "write_computation_times": False,
    "show_memory": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "remove_config_comments": True,
    "min_reported_time": 1,
}

# -- HTML
html_theme = "pydata_sphinx_theme"
html_title = "simstudy"
html_static_path = ["_static"]
html_css_files = ["simstudy.css"]
html_js_files = ["pagecheck.js"]
html_math_renderer = "mathml"
# the benchmark's results site (sphinxext/benchsite.py) is copied beside the pages as benchmark/
html_extra_path = ["_generated/extra"]
(DOCS / "_generated" / "extra").mkdir(parents=True, exist_ok=True)
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "show_prev_next": True,
    "footer_start": ["copyright"],
    "footer_end": [],
    # the reproductions' wide tables get the whole width; other pages keep the page's contents on the right
    "secondary_sidebar_items": {pattern: ["page-toc"] for pattern in (
        "index", "getting_started/*", "user_guide/*", "configuration", "statistics/*", "api/*", "api/generated/*",
        "benchmarks", "benchmark_results", "changelog", "developer/*")} | {"reproductions/*": [], "auto_examples/*": []},
}
html_sidebars = {"index": [], "changelog": [], "benchmarks": [], "benchmark_results": [], "configuration": [], "developer/index": []}


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (so Sphinx rebuilds only what changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate_pages(app) -> None:
    """The generated parts of the configuration reference and the benchmarks page."""
    import benchpage
    import benchsite
    import configref

    out = DOCS / "_generated"
    _write_if_changed(out / "configuration.rst.inc", configref.configuration_rst())
    _write_if_changed(out / "benchmarks.rst.inc", benchpage.benchmarks_rst(ROOT / "results" / "benchmarks"))
    _write_if_changed(out / "benchmark_results.rst.inc",
                      benchsite.benchmark_results_rst(ROOT / "results" / "benchmark", out / "extra"))


def setup(app):
    app.connect("builder-inited", generate_pages)
