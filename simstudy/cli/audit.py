"""``simstudy audit DATA`` (also ``simstudy-audit``): the audit from the command line.

Bad input (a missing file, an unknown learner, a class column that cannot be found, too few
rows...) prints one line naming the option, the value and the fix, and exits with code 2,
before any simulation.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _value(text: str) -> Any:
    """A --param value: int, float, true/false/null, else the string."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _learner(name: str, params: list[str]) -> Any:
    """A learner preset name, with estimator parameters from ``--param KEY=VALUE``."""
    from simstudy.errors import ConfigError
    from simstudy.registry import LEARNERS

    if name not in LEARNERS or name == "custom":
        choices = ", ".join(n for n in LEARNERS if n != "custom")
        raise ConfigError(f"--learner={name!r} is invalid: choose one of {choices} (from Python, audit() also takes "
                          "any scikit-learn estimator).")
    if not params:
        return name
    spec = asdict(LEARNERS[name].load_config())
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--param={item!r} is invalid: write KEY=VALUE, e.g. --param max_depth=5.")
        spec["estimator"][key] = _value(value)
    return spec


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="simstudy audit",
        description="Audit K-fold CV on your data: simulate training sets from it (at your n with replacement, at "
                    "n/2 without), measure the size and power of every CV interval/test there, and report your CV "
                    "estimate with the interval that kept its level, as Markdown and HTML with a figure.")
    p.add_argument("data", help="data file (CSV or whitespace separated; class in the first or last column)")
    p.add_argument("--learner", default="tree", help="learner preset (default: tree)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="estimator parameter of the learner, repeatable (e.g. --param solver=newton-cholesky)")
    p.add_argument("--loss", default=None,
                   help="classifiers: zero_one (default) or log_loss; regressors: squared (default) or absolute")
    p.add_argument("-K", "--folds", dest="K", type=int, default=10, help="folds K (default 10)")
    p.add_argument("--replicates", type=int, default=1000,
                   help="simulated training sets per setting (default 1000; the cap with --rule sequential)")
    p.add_argument("--splits", type=int, default=5, help="B splits into halves of the subsample estimators (default 5)")
    p.add_argument("--nested-cv-replicates", type=int, default=200, help="replicates with nested CV (default 200)")
    p.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level (default 0.05)")
    p.add_argument("--slack", type=float, default=0.01,
                   help="recommendation rule: tolerated excess of the size over alpha (default 0.01 = 1 point)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="recommendation rule: each error of the sequential rule is at most (1 - confidence) / 2; "
                        "the fixed rule's Wilson interval has this level (default 0.95)")
    p.add_argument("--rule", default="sequential",
                   help="recommendation rule: sequential (default: each setting stops once the verdicts that matter "
                        "are settled, --replicates is the cap) or fixed (every replicate, Wilson bounds)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label-column", default="auto", help="auto, first, last or a 0-based column index")
    p.add_argument("--positive", nargs="+", help="class labels mapped to 1 (the rest to 0); default: keep classes")
    p.add_argument("--n-jobs", type=int, default=-1, help="worker processes (default: all cores)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-o", "--out", default=None, help="report folder (default: audit_<data file stem>)")
    return p


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``simstudy-audit`` and ``simstudy audit``)."""
    from simstudy.cli.console import fail, setup_logging
    from simstudy.errors import UserError

    args = parser().parse_args(argv)
    label = args.label_column
    if label not in ("auto", "first", "last"):
        try:
            label = int(label)
        except ValueError:
            fail("simstudy audit", f"--label-column={label!r} is invalid: use auto, first, last or a 0-based index.")
    out = Path(args.out or f"audit_{Path(args.data).stem}")
    setup_logging()
    from simstudy.audit import audit

    try:
        result = audit(args.data, learner=_learner(args.learner, args.param), loss=args.loss, K=args.K,
                       replicates=args.replicates, splits=args.splits,
                       nested_cv_replicates=args.nested_cv_replicates, alpha=args.alpha, slack=args.slack,
                       confidence=args.confidence, rule=args.rule, seed=args.seed,
                       label_column=label, positive=args.positive, n_jobs=args.n_jobs,
                       progress=not args.no_progress, out=out)
    except UserError as exc:
        fail("simstudy audit", " ".join(str(exc).split()))
    except KeyboardInterrupt:
        fail("simstudy audit", "interrupted; no report written.", 130)
    low, high = result.interval
    print(f"CV estimate {result.estimate:.4f}; recommended interval [{low:.4f}, {high:.4f}] "
          f"({result.recommendation.procedure}); {result.seconds:.0f} s")
    print(result.recommendation.text.replace("**", ""))
    print(f"report: {out / 'report.md'}, {out / 'report.html'}")


if __name__ == "__main__":
    main(sys.argv[1:])
