"""The audit's report: Markdown, a self-contained HTML page (figure embedded) and CSV tables.

The HTML is deliberately minimal (one inline style block, the figure as a data URI) so that it can
later adopt the package's shared report style.
"""
from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy.inference.proportions import wilson_bounds
from simstudy.report import frame_to_markdown
from simstudy.report.figures import plt, save_figure, style_axes
from simstudy.report.notebook import html_fragment, inline_png, table_section
from simstudy.studies.rho_hat.aggregate import PROCEDURES
from simstudy.studies.rho_hat.figures import STYLE
from simstudy.files import write_csv_atomic, write_text_atomic

__all__ = ["audit_figure", "audit_markdown", "audit_result_html", "check_report_folder", "write_report"]


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
        simulated = t["size"].notna().to_numpy()   # nested CV is not simulated with nested_cv_replicates=0
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
    left.set_yticklabels([f"{p} ({verdict.get(p, _unjudged(result, p))})" for p in procs])
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


def _unjudged(result, procedure: str) -> str:
    """The label of a procedure without a verdict: the reference, or not simulated (nested CV switched off)."""
    return "not simulated" if procedure not in set(result.tests["n"]["procedure"]) else "reference"


def _calibration_table(result) -> pd.DataFrame:
    rows = []
    table = result.recommendation.table.set_index("procedure")
    verdict = table["verdict"]
    for proc in result.intervals["procedure"]:
        row = {"procedure": proc, "verdict": verdict.get(proc, _unjudged(result, proc))}
        for setting in ("n", "n/2"):
            t = result.tests[setting].set_index("procedure")
            if proc not in t.index:
                continue
            r = t.loc[proc]
            row[f"size at {setting} (%)"] = f"{_pct(r['size'])} [{_pct(r['size_low'])}, {_pct(r['size_high'])}]"
            row[f"coverage at {setting} (%)"] = _pct(1 - r["size"])
            row[f"power at {setting} (%)"] = _pct(r["power"])
            row[f"replicates at {setting}"] = int(r["replicates"])
            key = "n" if setting == "n" else "half"
            if f"stopped_{key}" in table.columns and proc in table.index:
                row[f"stopped at {setting}"] = f"{table.loc[proc, f'stopped_{key}']} ({table.loc[proc, f'how_{key}']})"
        rows.append(row)
    return pd.DataFrame(rows)


def _fixed_rule_text(result) -> list[str]:
    from simstudy.audit.operating import fixed_rule_errors

    s, rec = result.settings, result.recommendation
    limit = s["alpha"] + rec.slack
    counts = sorted({int(r) for t in result.tests.values() for r in t["replicates"]})
    trust, liberal = fixed_rule_errors(counts, limit, rec.confidence)
    exact = "; ".join(f"{c} replicates: {100 * t:.2f}% and {100 * l:.2f}%" for c, t, l in zip(counts, trust, liberal))
    return [
        f"Rule (fixed): a procedure is *trusted* when the upper end of the {100 * rec.confidence:g}% Wilson interval "
        f"of its size is at most alpha + {100 * rec.slack:g} point(s) = {100 * limit:g}% in both settings "
        "(the evidence supports its level), *liberal* when the lower end exceeds that in either, *undecided* "
        "otherwise; the most powerful trusted one is recommended. Its exact errors per setting, for a procedure "
        f"whose size is exactly {100 * limit:g}% (the worst case: P(trusted) falls and P(liberal) grows with the "
        f"size), P(trusted) and P(liberal), by binomial computation: {exact} (the Wilson interval is approximate; "
        "the sequential rule, `--rule sequential`, bounds both exactly). With R replicates a procedure exactly at "
        "its level needs R in the thousands to be trusted, so at a few hundred the rule favours conservative "
        "procedures; more replicates (`--replicates`) let it pick a more powerful one.", ""]


def _sequential_rule_text(result) -> list[str]:
    from simstudy.audit.operating import operating_characteristics, operating_table

    s, rec = result.settings, result.recommendation
    limit = s["alpha"] + rec.slack
    lines = []
    for key, design in result.designs.items():
        at_limit = operating_characteristics(design, limit)
        what = "Every procedure" if key == "main" else "Nested CV (its first replicates only)"
        lines.append(f"- {what}: looks at {', '.join(str(n) for n in design.looks)} replicates; exact errors per "
                     f"setting at a size of exactly {100 * limit:g}%: P(trusted) = {100 * at_limit.trusted:.3f}%, "
                     f"P(liberal) = {100 * at_limit.liberal:.3f}%.")
    main = result.designs["main"]
    boundaries = main.table().rename(columns={"trusted_if_at_most": "trusted if at most",
                                              "liberal_if_at_least": "liberal if at least",
                                              "trust_closed_from": "trust question closed from",
                                              "liberal_closed_up_to": "liberal question closed up to"})
    alternatives = ("a size of alpha for trust, alpha + 2 slack for liberal" if main.futility > 0
                    else "deterministic curtailment only (slack = 0)")
    ran = ", ".join(f"{k}: {int(t['replicates'].max())}" for k, t in result.tests.items())
    return [
        f"Rule (sequential): each setting ran in looks (replicates run: {ran}; cap {s['replicates']}). At each look "
        "a procedure is *trusted* in a setting when its rejections are at most the look's trust boundary, "
        "*liberal* when at least its liberal boundary (exact boundaries by error spending at a size of "
        f"alpha + slack = {100 * limit:g}%, Hwang-Shih-DeCani shape {main.shape:g}); a question closes when a later "
        f"answer has conditional probability below {100 * main.futility:g}% ({alternatives}) or is impossible. "
        "Overall: trusted when trusted in both settings, liberal when liberal in either, else undecided. A setting "
        "is extended only while a procedure that could still be recommended (not yet trusted, trust question "
        "open, more powerful at n than every trusted one) is open there; the column *stopped at* gives the "
        "replicates at which each procedure's verdict was reached and how (boundary; curtailed; cap; closed by "
        "the other setting; not needed). "
        f"The guarantee, for every true size p and each setting: P(trusted) <= {100 * main.error:g}% when "
        f"p >= {100 * limit:g}% and P(liberal) <= {100 * main.error:g}% when p <= {100 * limit:g}%; the worst "
        "case is p = alpha + slack, where the exact values are:", "", *lines, "",
        "Boundaries (rejections among the look's replicates):", "", frame_to_markdown(boundaries), "",
        "What the rule does in one setting at a few true sizes (exact; the expected replicates until a procedure's "
        "verdict with both of its questions followed; the audit closes some earlier):", "",
        frame_to_markdown(operating_table(main)), ""]


def _nested_text(result) -> str:
    """How many replicates nested CV's rows rest on, per setting (the sequential rule may stop it early)."""
    s = result.settings
    counts = {k: int(t.set_index("procedure").loc["nested_cv", "replicates"]) if "nested_cv" in set(t["procedure"])
              else 0 for k, t in result.tests.items()}
    where = " and ".join(f"{v} at {k}" for k, v in counts.items())
    if result.designs and any(v < s["nested_cv_replicates"] for v in counts.values()):
        return (f"Nested CV, run on at most the first {s['nested_cv_replicates']} replicates, rests on {where}: "
                "the sequential rule stops it in a setting once its verdict there cannot change the recommendation.")
    return f"Nested CV ran on the first {s['nested_cv_replicates']} replicates only ({where} with a result)."


def audit_markdown(result) -> str:
    """The report as Markdown."""
    s, alpha = result.settings, result.settings["alpha"]
    low, high = result.interval
    rec = result.recommendation
    ran = {k: int(t["replicates"].max()) for k, t in result.tests.items()}
    mc = 100 * np.sqrt(alpha * (1 - alpha) / min(ran.values()))
    iv = result.intervals.copy()
    iv[["low", "high", "width"]] = iv[["low", "high", "width"]].round(4)
    iv["rho_hat"] = iv["rho_hat"].round(3)
    rule = _sequential_rule_text(result) if result.designs else _fixed_rule_text(result)
    nested = _nested_text(result) if s["nested_cv_replicates"] else \
        "Nested CV was not simulated (nested_cv_replicates = 0)."
    lines = [
        f"# CV audit: {s['learner']} on {s['data']} ({result.n} rows, K = {result.K}, {s['loss']} loss)", "",
        f"**Your CV estimate: {result.estimate:.4f}; recommended {100 * (1 - alpha):g}% interval "
        f"[{low:.4f}, {high:.4f}] ({rec.procedure}).**", "",
        rec.text, "",
        "## rho, the between-fold correlation that the usual t-test ignores", "",
        *(f"- {k} = {v[0]}: rho = {_pct(v[1])}% (se {_pct(v[2])})" for k, v in result.rho.items()), "",
        "## Your intervals, every procedure", "", frame_to_markdown(iv), "",
        "## How each procedure behaves in data like yours", "",
        f"Your data were treated as the population: {ran['n']} training sets of n rows drawn with "
        f"replacement, and {ran['n/2']} of n/2 rows drawn without; H0 is the expected CV error at that size. "
        f"Size = how often a true H0 is rejected at level {alpha:g} (Monte Carlo error about {mc:.1f} points; "
        "Wilson 95% intervals in brackets); coverage = 100 - size; power = rejections of "
        f"mu_true +- 2 sd(mu_hat). {nested}", "",
        frame_to_markdown(_calibration_table(result)), "",
        *rule,
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


#: The files an audit writes into its folder.
REPORT_FILES = ("report.md", "report.html", "figures", "intervals.csv", "calibration.csv")


def check_report_folder(folder: Path) -> None:
    """The report folder is new, empty, or a previous audit's (its report.md begins "# CV audit"); anything
    else is refused before any work, so that no user file is overwritten."""
    from simstudy.errors import ConfigError

    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"out={str(folder)!r} is a file, not a folder: choose a new folder for the audit's report.")
    if not folder.is_dir() or not any(folder.iterdir()):
        return
    report = folder / "report.md"
    try:
        previous = report.is_file() and report.read_text(errors="replace").startswith("# CV audit")
    except OSError:
        previous = False
    if not previous:
        names = sorted(p.name for p in folder.iterdir())
        raise ConfigError(f"out={str(folder)!r} holds files that are not an audit's ({', '.join(names[:5])}"
                          f"{', ...' if len(names) > 5 else ''}); the audit writes only into a new or empty folder "
                          "or a previous audit's. Choose another folder (-o / out=).")


def write_report(result, folder: Path) -> list[Path]:
    """report.md, report.html (self-contained), figures/audit.png, intervals.csv, calibration.csv."""
    check_report_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    text = audit_markdown(result)
    png = save_figure(audit_figure(result), folder / "figures" / "audit.png")   # drawn once: the page embeds the file
    files = [folder / "report.md", folder / "report.html", png, folder / "intervals.csv", folder / "calibration.csv"]
    write_csv_atomic(result.intervals, files[3])
    write_csv_atomic(pd.concat([t.assign(setting=k) for k, t in result.tests.items()]), files[4])
    write_text_atomic(files[1], _html(text, png.read_bytes()))
    write_text_atomic(files[0], text)  # last: report.md marks the folder as an audit's
    return files


def audit_result_html(result, figures: bool = True) -> str:
    """The audit's result as an HTML fragment: the recommendation, the user's intervals, the
    calibration table and the audit's figure."""
    s, low_high = result.settings, result.interval
    rec = result.recommendation
    parts = [f"<p><b>Your CV estimate: {result.estimate:.4g}; recommended interval "
             f"[{low_high[0]:.4g}, {low_high[1]:.4g}] ({html.escape(rec.procedure)}).</b></p>",
             f"<p>{html.escape(rec.text).replace('**', '')}</p>",
             "<p>" + "; ".join(f"rho at {html.escape(k)} = {v[0]}: {100 * v[1]:.1f}% (se {100 * v[2]:.1f})"
                               for k, v in result.rho.items()) + "</p>"]
    intervals = result.intervals.copy()
    parts += table_section(intervals, "Your intervals, every procedure")
    parts += table_section(_calibration_table(result),
                           "How each procedure behaves in data like yours (size: Wilson 95%)")
    if figures:
        parts += ["<h4>Figure</h4>", inline_png(audit_figure(result))]
    title = f"CV audit: {s.get('learner')} on {s.get('data')} ({result.n} rows, K = {result.K}, {s.get('loss')} loss)"
    return html_fragment(title, parts)
