"""The audit's report: Markdown, a self-contained HTML page (figure embedded) and CSV tables.

The HTML is deliberately minimal (one inline style block, the figure as a data URI) so that it can
later adopt the package's shared report style.
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy.inference.proportions import wilson_bounds
from simstudy.report import frame_to_markdown
from simstudy.report.figures import plt, save_figure, style_axes
from simstudy.studies.rho_hat.aggregate import PROCEDURES
from simstudy.studies.rho_hat.figures import STYLE

__all__ = ["audit_figure", "audit_markdown", "write_report"]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def audit_figure(result):
    """Left: size of every procedure at n and n/2 (Wilson bars at the rule's level, goal band alpha +- 1 point,
    the rule's limit alpha + slack; each label carries the rule's verdict).
    Right: the user's interval by every procedure (recommended on top, bold)."""
    alpha = result.settings["alpha"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    procs = [p for p in result.intervals["procedure"]]
    y = np.arange(len(procs))[::-1]
    for offset, (setting, marker) in zip((0.15, -0.15), (("n", "o"), ("n/2", "s"))):
        t = result.tests[setting].set_index("procedure").reindex(procs)
        simulated = t["replicates"].notna().to_numpy()  # nested CV is not, with nested_cv_replicates=0
        t = t[simulated]
        low, high = wilson_bounds(t["size_count"].to_numpy(), t["replicates"].to_numpy(),
                                  result.recommendation.confidence)
        err = np.vstack([t["size"] - low, high - t["size"]]) * 100
        n_sim = result.rho[setting][0]
        left.errorbar(100 * t["size"], y[simulated] + offset, xerr=np.clip(err, 0, None), fmt=marker, capsize=2,
                      label=f"{setting} = {n_sim} ({'with' if setting == 'n' else 'without'} replacement)")
    rec = result.recommendation
    left.axvspan(100 * alpha - 1, 100 * alpha + 1, color="green", alpha=0.15, label="alpha +- 1 point")
    left.axvline(100 * alpha, color="k", linewidth=1)
    left.axvline(100 * (alpha + rec.slack), color="firebrick", linestyle="--", linewidth=1,
                 label="rule: bar must end left of this line in both settings")
    verdict = rec.table.set_index("procedure")["verdict"]
    left.set_yticks(y)
    left.set_yticklabels([f"{p} ({verdict.get(p, 'reference')})" for p in procs])
    left.set_xlabel("size (%): rejections of a true H0 in simulated data like yours")
    iv = result.intervals
    for yi, (_, row) in zip(y, iv.iterrows()):
        color = STYLE.get(row["procedure"], ("k",))[0]
        best = row["procedure"] == result.recommendation.procedure
        right.plot([row["low"], row["high"]], [yi, yi], color=color, linewidth=4 if best else 1.5)
    right.axvline(result.estimate, color="k", linestyle=":")
    right.set_yticks(y)
    right.set_yticklabels(procs)
    right.set_xlabel(f"{100 * (1 - alpha):g}% interval for the expected CV error (your data)")
    titles = [f"calibration in data like yours ({result.settings['learner']}, K = {result.K})",
              f"your intervals (recommended: thick; dotted: CV estimate {result.estimate:.4f})"]
    fig = style_axes(fig, [left, right], titles, legend_size=7)
    return fig


def _calibration_table(result) -> pd.DataFrame:
    rows = []
    verdict = result.recommendation.table.set_index("procedure")["verdict"]
    for proc in result.intervals["procedure"]:
        row = {"procedure": proc, "verdict": verdict.get(proc, "reference")}
        for setting in ("n", "n/2"):
            t = result.tests[setting].set_index("procedure")
            if proc not in t.index:
                continue
            r = t.loc[proc]
            row[f"size at {setting} (%)"] = f"{_pct(r['size'])} [{_pct(r['size_low'])}, {_pct(r['size_high'])}]"
            row[f"coverage at {setting} (%)"] = _pct(1 - r["size"])
            row[f"power at {setting} (%)"] = _pct(r["power"])
            row[f"replicates at {setting}"] = int(r["replicates"])
        rows.append(row)
    return pd.DataFrame(rows)


def audit_markdown(result) -> str:
    """The report as Markdown."""
    s, alpha = result.settings, result.settings["alpha"]
    low, high = result.interval
    rec = result.recommendation
    mc = 100 * np.sqrt(alpha * (1 - alpha) / s["replicates"])
    iv = result.intervals.copy()
    iv[["low", "high", "width"]] = iv[["low", "high", "width"]].round(4)
    iv["rho_hat"] = iv["rho_hat"].round(3)
    lines = [
        f"# CV audit: {s['learner']} on {s['data']} ({result.n} rows, K = {result.K}, {s['loss']} loss)", "",
        f"**Your CV estimate: {result.estimate:.4f}; recommended {100 * (1 - alpha):g}% interval "
        f"[{low:.4f}, {high:.4f}] ({rec.procedure}).**", "",
        rec.text, "",
        "## rho, the between-fold correlation that the usual t-test ignores", "",
        *(f"- {k} = {v[0]}: rho = {_pct(v[1])}% (se {_pct(v[2])})" for k, v in result.rho.items()), "",
        "## Your intervals, every procedure", "", frame_to_markdown(iv), "",
        "## How each procedure behaves in data like yours", "",
        f"Your data were treated as the population: {s['replicates']} training sets of n rows drawn with "
        f"replacement, and {s['replicates']} of n/2 rows drawn without; H0 is the expected CV error at that size. "
        f"Size = how often a true H0 is rejected at level {alpha:g} (Monte Carlo error about {mc:.1f} points; "
        "Wilson 95% intervals in brackets); coverage = 100 - size; power = rejections of "
        "mu_true +- 2 sd(mu_hat). Nested CV ran on the first "
        f"{s['nested_cv_replicates']} replicates only.", "",
        frame_to_markdown(_calibration_table(result)), "",
        f"Rule: a procedure is *trusted* when the upper end of the {100 * rec.confidence:g}% Wilson interval of its "
        f"size is at most alpha + {100 * rec.slack:g} point(s) = {100 * (alpha + rec.slack):g}% in both settings "
        "(the evidence supports its level), *liberal* when the lower end exceeds that in either, *undecided* "
        "otherwise; the most powerful trusted one is recommended. With R replicates a procedure exactly at its "
        "level needs R in the thousands to be trusted, so at a few hundred the rule favours conservative "
        "procedures; more replicates (`--replicates`) let it pick a more powerful one.", "",
        "Procedures:", "", *(f"- `{k}`: {v}" for k, v in PROCEDURES.items() if k != "oracle_rho"), "",
        f"Settings: {', '.join(f'{k}={v}' for k, v in s.items())}; {result.seconds:.0f} s.", ""]
    return "\n".join(lines)


def _html(markdown_text: str, png: bytes) -> str:
    """A minimal self-contained page: the Markdown's paragraphs and tables as HTML, the figure inline."""
    out, table = [], []

    def flush_table():
        if table:
            rows = [r.strip().strip("|").split("|") for r in table if not set(r.replace("|", "").strip()) <= {"-", ":"}]
            head, body = rows[0], rows[1:]
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c.strip())}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{html.escape(c.strip())}</td>" for c in r) + "</tr>"
                                 for r in body) + "</table>")
            table.clear()

    def inline(text: str) -> str:
        text = html.escape(text)
        parts = text.split("**")
        return "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts)).replace("`", "")

    for line in markdown_text.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush_table()
        if line.startswith("# "):
            out.append(f"<h1>{inline(line[2:])}</h1>")
            out.append(f'<img alt="audit figure" src="data:image/png;base64,{base64.b64encode(png).decode()}">')
        elif line.startswith("## "):
            out.append(f"<h2>{inline(line[3:])}</h2>")
        elif line.startswith("- "):
            out.append(f"<li>{inline(line[2:])}</li>")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.4}"
             "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px}"
             "img{max-width:100%}")
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>CV audit</title><style>{style}</style>" \
           f"</head><body>{''.join(out)}</body></html>\n"


def write_report(result, folder: Path) -> list[Path]:
    """report.md, report.html (self-contained), figures/audit.png, intervals.csv, calibration.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    text = audit_markdown(result)
    fig = audit_figure(result)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    png = save_figure(fig, folder / "figures" / "audit.png")
    files = [folder / "report.md", folder / "report.html", png, folder / "intervals.csv", folder / "calibration.csv"]
    files[0].write_text(text)
    files[1].write_text(_html(text, buffer.getvalue()))
    result.intervals.to_csv(files[3], index=False)
    pd.concat([t.assign(setting=k) for k, t in result.tests.items()]).to_csv(files[4], index=False)
    return files
