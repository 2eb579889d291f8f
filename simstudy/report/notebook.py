"""What a result shows in Jupyter: a small HTML report (``_repr_html_``).

:func:`study_result_html` (a :class:`simstudy.results.StudyResult`) and :func:`cv_losses_html` (a
CV of your own model) give the headline, the tables with their Monte Carlo errors and the figures
inline as PNG data URIs; the audit's result is drawn with the same pieces by
:func:`simstudy.audit.report.audit_result_html`. The fragment is
meant to stay small and quick: long tables are cut to their first rows (the result object holds
them whole) and figures are drawn at screen resolution. Styles are scoped to one class, so the
notebook's own look is untouched.
"""
from __future__ import annotations

import base64
import html
import io
from typing import Any, Iterable

import pandas as pd

__all__ = ["study_result_html", "cv_losses_html", "table_section", "inline_png", "html_fragment", "MAX_ROWS"]

#: Rows of a table shown in a notebook; the result object holds the rest.
MAX_ROWS = 24
#: Resolution of the inline figures (screen, not print).
DPI = 72

_STYLE = """<style>
.simstudy-result{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1100px}
.simstudy-result h3{font-size:1.15em;margin:.3em 0}.simstudy-result h4{font-size:1em;margin:1em 0 .3em}
.simstudy-result pre{background:#f6f8fa;padding:.6em;font-size:.82em;overflow-x:auto}
.simstudy-result table{border-collapse:collapse;font-size:.82em;margin:.3em 0}
.simstudy-result th,.simstudy-result td{border:1px solid #ddd;padding:2px 6px;text-align:right}
.simstudy-result td:first-child,.simstudy-result th:first-child{text-align:left}
.simstudy-result .note{color:#555;font-size:.85em}.simstudy-result img{max-width:48%;margin:2px}
</style>"""


def table_section(frame: pd.DataFrame, title: str) -> list[str]:
    """A titled HTML table of the first :data:`MAX_ROWS` rows, with a note when rows were cut."""
    from simstudy.report.html import table_html

    shown = frame.head(MAX_ROWS)
    cut = (f'<p class="note">First {MAX_ROWS} of {len(frame)} rows.</p>' if len(frame) > MAX_ROWS else "")
    return [f"<h4>{html.escape(title)}</h4>", table_html(shown), cut]


def inline_png(figure: Any) -> str:
    """A matplotlib figure as an ``<img>`` with a PNG data URI (the figure is closed)."""
    from simstudy.report.figures import plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="figure">'


def html_fragment(title: str, parts: Iterable[str]) -> str:
    """The parts under one title, in the scoped style: what ``_repr_html_`` returns."""
    return f'{_STYLE}<div class="simstudy-result"><h3>{html.escape(title)}</h3>{"".join(parts)}</div>'


def _error_note() -> str:
    from simstudy.report.figures import ERROR_BARS

    return (f'<p class="note">{html.escape(ERROR_BARS)} Rates show [95% Wilson interval] '
            "(count/replicates).</p>")


def study_result_html(result: Any, figures: bool = True) -> str:
    """A :class:`~simstudy.results.StudyResult` as an HTML fragment: headline, report tables (every
    number with its Monte Carlo error) and, with ``figures``, the study's figures inline."""
    parts = [f"<pre>{html.escape(result.headline() or '(this study defines no headline)')}</pre>", _error_note()]
    for title, frame in result.report_tables().items():
        parts += table_section(frame, title)
    if figures:
        images = [inline_png(fig) for fig in result.figures().values()]
        if images:
            parts += ["<h4>Figures</h4>", "".join(images)]
    where = f" in {result.run_dir}" if result.run_dir else ""
    parts.append(f'<p class="note">Headline, tables and figures of a {result.study.name} run{html.escape(where)}; '
                 "res.summary, res.tests and res.records hold every column, res.html() the full report.</p>")
    return html_fragment(f"simstudy {result.study.name}: {result.study.description or ''}".rstrip(": "), parts)


def cv_losses_html(cv: Any) -> str:
    """A CV of your own model (:class:`~simstudy.evaluate.result.CVLosses`) as an HTML fragment:
    what was run, the estimate, and every interval of ``cv.infer()`` at its defaults."""
    sizes = cv.fold_sizes
    what = (f"{cv.rounds} round(s) of {cv.K}-fold CV" if cv.design == "kfold"
            else f"{cv.rounds} train/validation split(s)")
    loss = getattr(cv.loss, "name", str(cv.loss))
    parts = [f"<p>{cv.n} points, {what}, test folds of {int(sizes.min())}-{int(sizes.max())} points, "
             f"{html.escape(loss)} loss. CV estimate: <b>{cv.estimate:.4g}</b>.</p>"]
    try:
        table = cv.infer()
    except Exception as exc:  # a comparison or design without a default null value: say why, show the rest
        parts.append(f'<p class="note">No default inference table: {html.escape(str(exc))}</p>')
    else:
        columns = [c for c in ("procedure", "target", "estimate", "low", "high", "clipped", "pvalue")
                   if c in table and table[c].notna().any()]
        parts += table_section(table[columns], "Every interval (cv.infer())")
    kind = "comparison" if cv.kind == "comparison" else "model"
    return html_fragment(f"Cross-validation of {kind} {cv.name!r}", parts)

