"""Paired engine check of Table 2: scikit-learn's tree against simstudy's numba CART, replicate by replicate.

``results/table2_letter`` (numba CART) and ``results/table2_letter_sklearn`` (scikit-learn's
``DecisionTreeClassifier``, ``learner.engine=sklearn``) are the same study with the same seeds:
replicate r of size n has the same training set and the same folds in both, and only the tree
code differs (and, through it, the random tie-breaking between equally good splits). The two
runs are therefore *paired*, not independent: their difference is an engine check, and its
uncertainty is that of the per-replicate differences, which is much smaller than that of two
independent runs.

For every size n this script reads both runs' ``replicates.parquet``, checks that they are
paired (same condition keys, replicates and study settings apart from the engine), and reports,
with standard errors from the per-replicate differences (R replicates each):

- ``mu_hat``: mean of mu_hat(sklearn) - mu_hat(numba), SE = sd / sqrt(R), z, and the share of
  replicates where the two CV estimates are identical;
- ``true_error``: the same for the mean exact error of the K fold models;
- ``rho`` = 1 - E[theta3] / Var(mu_hat) (Grandvalet & Bengio's between-block correlation, as in
  Table 2) of each run and their difference, with the paired delta-method SE: the SE of the
  mean of the difference of the two runs' influence functions on the same replicates (the
  influence of :func:`simstudy.studies.metrics.between_block_correlation`). ``rho_se_independent`` is
  what the SE would be if the runs were independent (sqrt(se_a^2 + se_b^2)), for comparison.

Writes ``paired_differences.csv`` and ``paired_differences.md`` into the scikit-learn run's
directory (or ``--out``). It only reads the two committed runs (seconds).

Usage (from the project root)::

    PYTHONPATH=. python experiments/table2_engine_check.py results/table2_letter results/table2_letter_sklearn
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from simstudy.engine.manifest import environment_info
from simstudy.studies.metrics import between_block_correlation

__all__ = ["PairedMean", "paired_mean", "paired_rho", "paired_table", "check_paired", "main"]

KEYS = ["n", "condition_key", "replicate"]


@dataclass(frozen=True)
class PairedMean:
    """Mean of per-replicate differences b - a with its standard error."""

    a: float
    b: float
    diff: float
    se: float
    identical: float      # share of replicates with b == a exactly

    @property
    def z(self) -> float:
        return self.diff / self.se if self.se > 0 else (0.0 if self.diff == 0 else np.inf)


@dataclass(frozen=True)
class PairedRho:
    """rho of each run, their difference b - a, its paired SE and the SE were the runs independent."""

    a: float
    b: float
    diff: float
    se: float
    se_independent: float

    @property
    def z(self) -> float:
        return self.diff / self.se if self.se > 0 else (0.0 if self.diff == 0 else np.inf)


def paired_mean(a, b) -> PairedMean:
    """Mean of b - a over paired replicates, SE = sd(b - a, ddof 1) / sqrt(R)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = b - a
    return PairedMean(float(a.mean()), float(b.mean()), float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)),
                      float(np.mean(a == b)))


def paired_rho(mu_a, theta3_a, mu_b, theta3_b) -> PairedRho:
    """rho of two paired runs and the delta-method SE of rho_b - rho_a on the same replicates
    (the influences of :func:`simstudy.studies.metrics.between_block_correlation`)."""
    a, b = between_block_correlation(mu_a, theta3_a), between_block_correlation(mu_b, theta3_b)
    if a.influence is None or b.influence is None or a.influence.size != b.influence.size:
        raise ValueError("rho needs at least 3 paired replicates with finite mu_hat and theta3 in both runs.")
    R = a.influence.size
    se = float((b.influence - a.influence).std(ddof=1) / np.sqrt(R))
    return PairedRho(a.value, b.value, b.value - a.value, se, float(np.hypot(a.se, b.se)))


def _load(directory: Path) -> tuple[pd.DataFrame, dict]:
    records = pd.read_parquet(directory / "replicates.parquet")
    config = yaml.safe_load((directory / "config.yaml").read_text())
    return records[records["error"].fillna("") == ""], config


def check_paired(config_a: dict, config_b: dict, records_a: pd.DataFrame, records_b: pd.DataFrame) -> None:
    """Raise ValueError unless the two runs share the study settings, the population and every
    (n, condition key, replicate): i.e. the same training sets and folds."""
    from simstudy.studies.cv_variance.config import CVVarianceConfig

    defaults = CVVarianceConfig().as_dict()  # a field added later (loss) is absent from older runs
    study_a, study_b = ({**defaults, **config["study"]} for config in (config_a, config_b))
    if study_a != study_b:
        raise ValueError("the two runs have different study settings: not a paired engine check "
                         f"({config_a['study']} vs {config_b['study']}).")
    # fields added after a run was made, at their defaults (no label noise, classification, missing
    # values refused) sample the same population
    later = {"label_noise": None, "noise_truth": "clean", "task": "classification", "missing": "error"}
    pop_a, pop_b = ({**later, **{k: v for k, v in config["population"].items() if k not in ("path", "data_home")}}
                    for config in (config_a, config_b))
    if pop_a != pop_b:
        raise ValueError(f"the two runs sample different populations: {pop_a} vs {pop_b}.")
    keys_a = set(map(tuple, records_a[KEYS].to_numpy().tolist()))
    keys_b = set(map(tuple, records_b[KEYS].to_numpy().tolist()))
    if keys_a != keys_b:
        raise ValueError(f"the runs' replicates differ ({len(keys_a ^ keys_b)} (n, condition, replicate) keys are in "
                         "one run only).")


def paired_table(records_a: pd.DataFrame, records_b: pd.DataFrame) -> pd.DataFrame:
    """One row per n: paired differences (b - a) of mu_hat, true error and rho with their SEs."""
    both = records_a.merge(records_b, on=KEYS, suffixes=("_a", "_b"), validate="one_to_one")
    rows = []
    for n, g in both.groupby("n", sort=True):
        mu, err = paired_mean(g["mu_hat_a"], g["mu_hat_b"]), paired_mean(g["true_error_a"], g["true_error_b"])
        rho = paired_rho(g["mu_hat_a"], g["theta3_a"], g["mu_hat_b"], g["theta3_b"])
        rows.append({"n": int(n), "replicates": len(g),
                     "mu_hat_a": mu.a, "mu_hat_b": mu.b, "mu_hat_diff": mu.diff, "mu_hat_diff_se": mu.se,
                     "mu_hat_diff_z": mu.z, "mu_hat_identical": mu.identical,
                     "true_error_a": err.a, "true_error_b": err.b, "true_error_diff": err.diff,
                     "true_error_diff_se": err.se, "true_error_diff_z": err.z,
                     "true_error_identical": err.identical,
                     "rho_a": rho.a, "rho_b": rho.b, "rho_diff": rho.diff, "rho_diff_se": rho.se,
                     "rho_diff_z": rho.z, "rho_se_independent": rho.se_independent})
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame, a: Path, b: Path, command: str) -> str:
    lines = ["# Paired engine check: scikit-learn's tree - numba CART, same training sets and folds", "",
             f"a = `{a}`, b = `{b}`; every difference is b - a over the same replicates, with the standard "
             "error of the per-replicate differences (rho: paired delta method). `identical`: share of "
             "replicates where both engines give exactly the same value. `SE if independent`: the SE of the "
             "rho difference had the runs used independent seeds.", "",
             f"Command: `{command}` (commit {environment_info()['git_commit']}; the runs' own commits are in "
             "their manifest.json)", "",
             "| n | R | mu_hat diff | SE | z | identical | true error diff | SE | z | identical | rho a | rho b "
             "| rho diff | SE | z | SE if independent |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for _, r in table.iterrows():
        lines.append(f"| {int(r.n)} | {int(r.replicates)} | {r.mu_hat_diff:+.5f} | {r.mu_hat_diff_se:.5f} | {r.mu_hat_diff_z:+.2f} "
                     f"| {r.mu_hat_identical:.1%} | {r.true_error_diff:+.5f} | {r.true_error_diff_se:.5f} | "
                     f"{r.true_error_diff_z:+.2f} | {r.true_error_identical:.1%} | {r.rho_a:.4f} | {r.rho_b:.4f} | "
                     f"{r.rho_diff:+.4f} | {r.rho_diff_se:.4f} | {r.rho_diff_z:+.2f} | {r.rho_se_independent:.4f} |")
    lines += ["", "Over all sizes (independent samples, so the z are independent; chi-square with "
              f"{len(table)} df of the sum of z^2, p-value of no engine difference at any n):", ""]
    for column, label in (("mu_hat_diff_z", "mu_hat"), ("true_error_diff_z", "true error"), ("rho_diff_z", "rho")):
        chi2 = float(np.sum(table[column] ** 2))
        lines.append(f"- {label}: chi-square {chi2:.2f}, p = {stats.chi2.sf(chi2, len(table)):.3f}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("numba_run", type=Path, help="run directory a (e.g. results/table2_letter)")
    parser.add_argument("sklearn_run", type=Path, help="run directory b (e.g. results/table2_letter_sklearn)")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: the second run directory)")
    args = parser.parse_args(argv)
    records_a, config_a = _load(args.numba_run)
    records_b, config_b = _load(args.sklearn_run)
    try:
        check_paired(config_a, config_b, records_a, records_b)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    table = paired_table(records_a, records_b)
    command = f"PYTHONPATH=. python experiments/table2_engine_check.py {args.numba_run} {args.sklearn_run}"
    text = to_markdown(table, args.numba_run, args.sklearn_run, command)
    out = args.out or args.sklearn_run
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "paired_differences.csv", index=False)
    (out / "paired_differences.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
