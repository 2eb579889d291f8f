"""Sphinx configuration of simstudy's API reference (built offline; warnings are errors in CI).

The pages: ``index.rst`` (what simstudy is), ``api.rst`` (autodoc of the public modules, numpydoc
docstrings read by ``sphinx.ext.napoleon``) and ``examples.rst``, generated here from README.md:
every ``python`` code block of the README under the heading it belongs to, so the examples in
the docs are exactly those the README's tests run.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "simstudy"
author = "simstudy developers"
release = "0.2.0"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"         # the numpydoc "Parameters" sections carry the types
autodoc_default_options = {"members": True, "show-inheritance": False}
html_theme = "alabaster"
html_static_path: list[str] = []
exclude_patterns = ["_build"]
suppress_warnings = ["ref.python"]  # several modules re-export the same names (e.g. simstudy and simstudy.results)


def readme_examples(readme: Path) -> str:
    """The README's ``python`` code blocks as reStructuredText, each under its README heading."""
    text = readme.read_text()
    heading, out = "", ["Examples from the README", "========================", "",
                        "Every Python example of README.md, under the README section it comes from.", ""]
    seen: set[str] = set()
    for match in re.finditer(r"^(#{2,4}) ([^\n]+)$|^```python\n(.*?)^```", text, re.M | re.S):
        if match.group(1):
            heading = match.group(2).strip().replace("`", "")
            continue
        if heading not in seen:
            out += [heading, "-" * len(heading), ""]
            seen.add(heading)
        out += [".. code-block:: python", ""] + ["   " + line if line else "" for line in
                                                 match.group(3).rstrip().splitlines()] + [""]
    return "\n".join(out) + "\n"


(Path(__file__).parent / "examples.rst").write_text(readme_examples(ROOT / "README.md"))
