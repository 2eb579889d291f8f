"""Self-contained HTML reports: one file a person can open or send (figures embedded).

:func:`run_report_html` (one run, ``report.html``) holds the headline, the study's tables with
their Monte Carlo errors (:meth:`simstudy.studies.base.Study.report_tables`, which includes the
comparison with the paper where the paper has numbers), the figures, the configuration, the
provenance from the manifest (software, commit, seeds, timings) and the failures and warnings.
:func:`sweep_report_html` does the same for a collected sweep (``simstudy-collect``).

No JavaScript is needed to read a report; one small inline script records, for the browser
check (``benchmarks/check_report_html.py``), how many images and tables rendered.
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd
import yaml

from simstudy.report.figures import ERROR_BARS

__all__ = ["run_report_html", "sweep_report_html", "figure_tag", "table_html", "REPORT_FILE"]

#: File name of a run's report.
REPORT_FILE = "report.html"

_CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1.05em}.meta{color:#555;font-size:.92em}
pre{background:#f6f8fa;padding:.8em;overflow-x:auto;font-size:.82em;border-radius:4px}
table{border-collapse:collapse;font-size:.82em;margin:.6em 0 1.2em;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f0f2f5}td:first-child,th:first-child{text-align:left}
figure{margin:1em 0 2em}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
.note{background:#fff8e1;border-left:4px solid #f0c36d;padding:.5em .8em;font-size:.9em}
.ok{color:#1a7f37}.bad{color:#c62828;font-weight:bold}nav a{margin-right:1em}
"""

_CHECK_SCRIPT = """<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length;
  document.body.setAttribute('data-report-check', JSON.stringify({images: imgs.length, broken: broken,
    tables: document.querySelectorAll('table').length, sections: document.querySelectorAll('h2').length}));
});
</script>"""


def figure_tag(png: bytes | Path, caption: str = "") -> str:
    """An ``<figure>`` with the PNG embedded as a data URI (bytes, or a file to read)."""
    data = png.read_bytes() if isinstance(png, Path) else png
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="{src}" alt="{html.escape(caption or "figure")}">{cap}</figure>'


def table_html(frame: pd.DataFrame, digits: int = 4) -> str:
    """A DataFrame as an HTML table (escaped, index dropped, floats to ``digits`` significant digits)."""
    from simstudy.report.tables import format_value

    shown = frame.copy()
    for column in shown.columns:
        if pd.api.types.is_float_dtype(shown[column]):
            shown[column] = [format_value(float(v), digits) for v in shown[column]]
    return shown.to_html(index=False, escape=True, border=0, na_rep="")


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _section(anchor: str, title: str, body: Iterable[str]) -> str:
    return f'<h2 id="{anchor}">{html.escape(title)}</h2>\n' + "\n".join(body)


def _page(title: str, subtitle: str, sections: list[tuple[str, str, list[str]]]) -> str:
    nav = "".join(f'<a href="#{a}">{html.escape(t)}</a>' for a, t, _ in sections)
    body = "\n".join(_section(a, t, b) for a, t, b in sections)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head>\n<body>\n<h1>{html.escape(title)}</h1>\n<p class=\"meta\">"
            f"{html.escape(subtitle)}</p>\n<nav>{nav}</nav>\n{body}\n{_CHECK_SCRIPT}\n</body></html>\n")


def _provenance(manifest: Mapping[str, Any]) -> list[str]:
    env = manifest.get("environment") or {}
    rows = [("study", manifest.get("study")), ("command", manifest.get("command")),
            ("started (UTC)", manifest.get("started_utc")), ("finished (UTC)", manifest.get("finished_utc")),
            ("wall time (s)", manifest.get("wall_time_s")), ("seed", manifest.get("seed")),
            ("identity hash", manifest.get("identity_hash") or manifest.get("config_hash")),
            ("git commit", env.get("git_commit")), ("python", env.get("python")), ("platform", env.get("platform")),
            ("host", env.get("host")),
            ("computed / resumed chunks", f"{manifest.get('computed_chunks')} / {manifest.get('resumed_chunks')}"),
            ("re-aggregated with", manifest.get("reaggregated_with"))]
    rows += [(f"package {k}", v) for k, v in (env.get("packages") or {}).items()]
    frame = pd.DataFrame([(k, "" if v is None else str(v)) for k, v in rows if v not in (None, "")],
                         columns=["item", "value"])
    out = [table_html(frame)]
    conditions = manifest.get("conditions")
    if conditions:
        out += ["<h3>Conditions (replicates, failures, timing)</h3>", table_html(pd.DataFrame(conditions))]
    parts = {k: manifest[k] for k in ("population", "learner", "learners", "loss", "rhat", "comparisons")
             if manifest.get(k) is not None}
    if parts:
        out += ["<h3>Parts</h3>", _pre(yaml.safe_dump(json.loads(json.dumps(parts, default=str)), sort_keys=False))]
    return out


def _failures(manifest: Mapping[str, Any]) -> list[str]:
    failed, total = manifest.get("replicates_failed"), manifest.get("replicates_total")
    warnings, errors = manifest.get("warnings") or {}, manifest.get("chunk_errors") or []
    status = "ok" if not failed and not warnings and not errors else "bad"
    out = [f'<p class="{status}">{failed or 0} failed replicate(s) of {total if total is not None else "?"}; '
           f"{len(errors)} chunk error(s); {len(warnings)} kind(s) of warning.</p>"]
    sample = manifest.get("failures_sample") or []
    if sample:
        out += ["<h3>First failures</h3>", table_html(pd.DataFrame(sample))]
    if errors:
        out += ["<h3>Chunk errors</h3>", _pre("\n".join(map(str, errors)))]
    if warnings:
        out += ["<h3>Warnings (message: count)</h3>",
                _pre("\n".join(f"{k}: {v}" for k, v in warnings.items()) if isinstance(warnings, dict)
                     else "\n".join(map(str, warnings)))]
    return out


def run_report_html(result: Any, figure_files: Mapping[str, Path] | None = None, *,
                    report_tables: Mapping[str, pd.DataFrame] | None = None, headline: str | None = None) -> str:
    """The HTML report of one run (a :class:`simstudy.results.StudyResult`).

    ``figure_files`` (name -> PNG file) are embedded; without them the figures are drawn anew.
    ``report_tables`` and ``headline``, when given, are the result's (already computed).
    """
    study, manifest = result.study, result.manifest or {}
    labels = ", ".join(f"{k} {v}" for k, v in result.tables.labels.items() if isinstance(v, (str, int, float)))
    env = manifest.get("environment") or {}
    subtitle = (f"{study.description or study.name}. {labels + '. ' if labels else ''}"
                f"Commit {env.get('git_commit', 'unknown')}, finished {manifest.get('finished_utc', 'unknown')}"
                f"{', wall time %.1f s' % manifest['wall_time_s'] if manifest.get('wall_time_s') else ''}.")
    tables = [f'<p class="note">{html.escape(ERROR_BARS)} Rates show [95% Wilson interval] (count/replicates).</p>']
    for title, frame in (result.report_tables() if report_tables is None else report_tables).items():
        tables += [f"<h3>{html.escape(title)}</h3>", table_html(frame)]
    if figure_files is None:
        import io

        from simstudy.report.figures import plt

        figure_files = {}
        pngs = {}
        for name, fig in result.figures().items():
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
            plt.close(fig)
            pngs[name] = buffer.getvalue()
        figures = [figure_tag(data, name) for name, data in pngs.items()]
    else:
        figures = [figure_tag(Path(path), name) for name, path in figure_files.items()]
    config = yaml.safe_dump(json.loads(json.dumps(result.config, default=str)), sort_keys=False)
    headline = result.headline() if headline is None else headline
    sections = [("headline", "Headline", [_pre(headline or "(this study defines no headline)")]),
                ("tables", "Tables (with Monte Carlo errors)", tables),
                ("figures", "Figures", figures or ["<p>This study draws no figures.</p>"]),
                ("failures", "Failures and warnings", _failures(manifest)),
                ("config", "Configuration", [_pre(config)]),
                ("provenance", "Provenance", _provenance(manifest) if manifest else
                 ["<p>No manifest (an in-memory run).</p>"])]
    return _page(f"simstudy report: {study.name}", subtitle, sections)


def sweep_report_html(sweep_dir: Path, studies: Mapping[str, Mapping[str, Any]], left_out: Sequence[str] = ()) -> str:
    """The HTML report of a collected sweep.

    ``studies`` maps each study name to ``{"parameters", "runs" (list of (run dir, headline,
    manifest)), "summary", "tests", "figures" (name -> PNG file), "notes"}``; ``left_out``: the
    run directories not collected, with why.
    """
    sections = []
    if left_out:
        sections.append(("left-out", "Runs left out", [f"<p>{html.escape(item)}</p>" for item in left_out]))
    for name, part in studies.items():
        runs = part["runs"]
        overview = pd.DataFrame([{"run": str(Path(run).relative_to(sweep_dir)) if Path(run).is_relative_to(sweep_dir)
                                  else str(run), **overrides,
                                  "replicates failed": (manifest or {}).get("replicates_failed"),
                                  "warnings": len((manifest or {}).get("warnings") or {}),
                                  "wall time (s)": (manifest or {}).get("wall_time_s"),
                                  "git commit": ((manifest or {}).get("environment") or {}).get("git_commit")}
                                 for run, overrides, _, manifest in runs])
        body = [f"<p>{len(runs)} runs; parameters (what varies between the runs): "
                f"{html.escape(', '.join(part['parameters']) or 'none')}.</p>",
                *[f"<p>{html.escape(note)}</p>" for note in part.get("notes", ())],
                f'<p class="note">{html.escape(ERROR_BARS)}</p>', table_html(overview),
                "<h3>Headline of each run</h3>"]
        body += [f"<h4>{html.escape(str(overrides) if overrides else str(run))}</h4>" + _pre(text)
                 for run, overrides, text, _ in runs]
        body += [figure_tag(Path(p), n) for n, p in part["figures"].items()]
        body += ["<h3>Collected summary (every column with its SE as in the runs' summary.csv)</h3>",
                 table_html(part["summary"])]
        if part.get("tests") is not None:
            body += ["<h3>Collected tests</h3>", table_html(part["tests"])]
        sections.append((f"study-{name}", f"Study {name}", body))
    return _page(f"simstudy sweep report: {sweep_dir.name}", f"Sweep directory {sweep_dir}", sections)
