"""``simstudy --help``: what simstudy is, its parts (from the registry) and example commands."""
from __future__ import annotations

from importlib import resources

__all__ = ["help_text", "experiment_presets"]

_INTRO = """\
simstudy: Monte Carlo simulation studies of cross-validation.

Runs a CV procedure thousands of times on training sets drawn from a population whose truth
is known, and measures how far to trust the CV estimate, its variance estimates, tests and
intervals. Usage: simstudy [GROUP=OPTION ...] [FIELD=VALUE ...]   (Hydra overrides)
Audit your own K-fold CV (which interval to trust on your data): simstudy audit DATA [OPTIONS]
(simstudy audit --help lists the options).
The CV inference benchmark: simstudy benchmark [--scale ci|quick|full] [--out DIR] ...; certify your own
interval or test on it: simstudy certify package.module:function [--kind interval|test].
"""

_EXAMPLES = """\
Examples:
  simstudy                                                   # quick default study (about 8 s)
  simstudy experiment=table2_letter population.path=../shared/data/letter-recognition.data
  simstudy study=cv_clt population=letter population.path=../shared/data/letter-recognition.data \\
           study.sizes=[100,200] study.replicates=200 runner.n_jobs=2 hydra.run.dir=runs/clt

  simstudy audit letter5000.data --positive A B C D E F G H I J K L M -o audit_letter5000

More: simstudy --cfg job (the composed config), simstudy --hydra-help (Hydra's own help),
README.md (every study, field and output column), and simstudy-report / simstudy-collect --help."""


def experiment_presets() -> list[tuple[str, str]]:
    """(name, first sentence of the leading comment) of every experiment preset YAML."""
    folder = resources.files("simstudy.conf").joinpath("experiment")
    out = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        lines = [ln[1:].strip() for ln in entry.read_text().splitlines() if ln.startswith("#") and "@package" not in ln]
        first = ""
        for line in lines:  # the first sentence, which may run over several comment lines
            first = f"{first} {line}".strip()
            if not line or line.endswith("."):
                break
        out.append((entry.name[:-5], first))
    return out


def _section(title: str, rows: list[tuple[str, str]], usage: str) -> str:
    width = max((len(name) for name, _ in rows), default=0)
    body = "\n".join(f"  {name:<{width}}  {text}" for name, text in rows)
    return f"{title} ({usage}):\n{body}\n"


def help_text() -> str:
    """The full help page, built from the registries and the experiment presets."""
    from simstudy.registry import LEARNERS, LOSSES, POPULATIONS, STUDIES

    runner = [("default", "worker processes: forked (Linux), else loky (runner.n_jobs, runner.chunk_size, ...)"),
              ("fork", "worker processes forked from the command (Linux)"), ("loky", "loky worker processes"),
              ("threading", "threads"), ("sequential", "one process"), ("dask", "dask.distributed cluster")]
    parts = [
        _INTRO,
        _section("Studies", STUDIES.describe(), "study=NAME; fields study.FIELD=VALUE"),
        _section("Populations", POPULATIONS.describe(), "population=NAME; fields population.FIELD=VALUE"),
        _section("Learners", LEARNERS.describe(), "learner=NAME; any scikit-learn estimator with "
                                                  "learner.estimator._target_=CLASS"),
        _section("Losses", LOSSES.describe(), "study.loss=NAME or the import path of a function (y, y_hat)"),
        _section("Experiment presets", experiment_presets(), "experiment=NAME"),
        _section("Runners", runner, "runner=NAME"),
        _EXAMPLES,
    ]
    return "\n".join(parts)
