"""Math as MathML, written into the page at build time: no JavaScript, no request to a CDN.

Sphinx's default renderer (MathJax) loads a script from the internet when a page is opened, so
formulas stay raw LaTeX offline and in the docs' browser test. docutils ships a LaTeX-to-MathML
converter, and every current browser renders MathML Core, so the pages carry the formulas
themselves. Select it with ``html_math_renderer = "mathml"``.
"""
from __future__ import annotations

from docutils import nodes
from docutils.utils.math import latex2mathml


def _inline(self, node: nodes.Element) -> None:
    self.body.append(latex2mathml.tex2mathml(node.astext()))
    raise nodes.SkipNode


def _block(self, node: nodes.Element) -> None:
    anchor = f' id="{node["ids"][0]}"' if node.get("ids") else ""
    parts = [p.strip() for p in node.astext().split("\n\n") if p.strip()]
    self.body.append(f'<div class="math-block"{anchor}>')
    for latex in parts:
        self.body.append(latex2mathml.tex2mathml(latex, as_block=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", inline_renderers=(_inline, None), block_renderers=(_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
