"""Math as MathML, written into the page at build time: no JavaScript, no request to a CDN.

Sphinx's default renderer (MathJax) loads a script from the internet when a page is opened, so
formulas stay raw LaTeX offline and in the docs' browser test. docutils ships a LaTeX-to-MathML
converter, and every current browser renders MathML Core, so the pages carry the formulas
themselves. Select it with ``html_math_renderer = "mathml"``.
"""
from __future__ import annotations

import re

from docutils import nodes
from docutils.utils.math import latex2mathml

#: An accented symbol with a subscript, which docutils writes as ``<munderover>`` (the subscript
#: under the symbol): ``\hat\theta_3``. Rewritten as the subscript of the accented symbol.
_ACCENT_SUB = re.compile(r"<munderover>\s*(<mi>[^<]*</mi>)\s*(<m[in]>[^<]*</m[in]>|<mrow>.*?</mrow>)\s*"
                         r"(<mo stretchy=\"false\">[\u02c6\u02c9\u02dc\u00af\u02d9\u2192]</mo>)\s*</munderover>", re.S)


def tex2mathml(latex: str, as_block: bool = False) -> str:
    """docutils' MathML for ``latex``, with accented symbols' subscripts where LaTeX puts them."""
    out = latex2mathml.tex2mathml(latex, as_block=as_block)
    return _ACCENT_SUB.sub(r'<msub><mover accent="true">\1\3</mover>\2</msub>', out)


def _inline(self, node: nodes.Element) -> None:
    self.body.append(tex2mathml(node.astext()))
    raise nodes.SkipNode


def _block(self, node: nodes.Element) -> None:
    anchor = f' id="{node["ids"][0]}"' if node.get("ids") else ""
    parts = [p.strip() for p in node.astext().split("\n\n") if p.strip()]
    self.body.append(f'<div class="math-block"{anchor}>')
    for latex in parts:
        self.body.append(tex2mathml(latex, as_block=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", inline_renderers=(_inline, None), block_renderers=(_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
