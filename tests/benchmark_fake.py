"""A realistic made-up benchmark cell table (the contract of ``simstudy.report.benchmark``), for the
site's tests: several procedures, mechanisms, learners, losses and sizes, both estimands, intervals
and tests, a few failed replicates and one cell where every replicate failed."""
from __future__ import annotations

import numpy as np
import pandas as pd

#: procedure -> (kind, true coverage on R_n, on Err_n, relative width, fits at n=100)
INTERVALS = {"holdout_wald": (0.95, 0.93, 1.6, 1), "kfold_t": (0.86, 0.80, 0.7, 10),
             "cv_clt_all_pairs": (0.95, 0.90, 1.0, 10), "cv_clt_within_fold": (0.948, 0.90, 1.0, 10),
             "nadeau_bengio_t": (0.96, 0.94, 1.3, 15), "conservative_z": (0.99, 0.975, 2.2, 300),
             "nested_cv": (0.97, 0.955, 1.8, 250), "bootstrap_632plus": (0.90, 0.86, 1.1, 100)}
#: test procedure -> (size, power)
TESTS = {"kfold_t": (0.12, 0.7), "cv_clt_all_pairs": (0.055, 0.6), "five_by_two_f": (0.03, 0.3)}
MECHANISMS = {"friedman1": "regression", "gaussian_linear": "regression", "letter": "classification",
              "logistic": "classification"}
LEARNERS = {"regression": ("ridge", "tree"), "classification": ("logistic", "tree")}
LOSSES = {"regression": ("squared", "absolute"), "classification": ("zero_one", "log_loss")}


def _wilson(k, r, z=1.959963984540054):
    p = k / r
    centre = (p + z * z / (2 * r)) / (1 + z * z / r)
    half = z * np.sqrt(p * (1 - p) / r + z * z / (4 * r * r)) / (1 + z * z / r)
    return centre - half, centre + half


def _row(rng, procedure, kind, mechanism, learner, loss, n, estimand, rate, replicates, alpha):
    task = MECHANISMS[mechanism]
    failed = int(rng.integers(0, 3))
    k = rng.binomial(replicates, rate) if replicates else 0
    value = k / replicates if replicates else np.nan
    lo, hi = _wilson(k, replicates) if replicates else (np.nan, np.nan)
    row = dict(procedure=procedure, kind=kind, mechanism=mechanism, task=task, learner=learner, loss=loss, n=n,
               estimand=estimand, nominal=1 - alpha if kind == "interval" else alpha, replicates=replicates,
               failed=failed, coverage=np.nan, coverage_lo=np.nan, coverage_hi=np.nan, coverage_mcse=np.nan,
               miss_left=np.nan, miss_right=np.nan, width_mean=np.nan, width_median=np.nan, relative_width=np.nan,
               null_true=False, rejection_rate=np.nan, rejection_lo=np.nan, rejection_hi=np.nan,
               truth_mean=0.2 + 0.1 * rng.random(), truth_mcse=0.0 if mechanism != "letter" else 1e-4,
               fits=0.0, cpu_seconds=0.0, cell_seed=int(rng.integers(2**31)))
    if kind == "interval":
        miss = (1 - value) if replicates else np.nan
        row.update(coverage=value, coverage_lo=lo, coverage_hi=hi,
                   coverage_mcse=np.sqrt(value * (1 - value) / replicates) if replicates else np.nan,
                   miss_left=0.6 * miss, miss_right=0.4 * miss)
    else:
        row.update(rejection_rate=value, rejection_lo=lo, rejection_hi=hi)
    return row


def fake_cells(seed: int = 0, replicates: int = 400, alpha: float = 0.05, mechanisms=None) -> pd.DataFrame:
    """The made-up cell table (deterministic in ``seed``), of ``mechanisms`` (default: all four)."""
    rng = np.random.default_rng(seed)
    rows = []
    for mechanism, task in MECHANISMS.items():
        if mechanisms is not None and mechanism not in mechanisms:
            continue
        for learner in LEARNERS[task]:
            for loss in LOSSES[task]:
                for n in (100, 400):
                    reps = 0 if (mechanism, learner, loss, n) == ("letter", "tree", "log_loss", 100) else replicates
                    for estimand in ("R_n", "Err_n"):
                        for proc, (cov_r, cov_e, rel, fits) in INTERVALS.items():
                            rate = cov_r if estimand == "R_n" else cov_e
                            rate = min(0.999, rate + (0.01 if n == 400 else -0.01) * (rate < 0.95))
                            row = _row(rng, proc, "interval", mechanism, learner, loss, n, estimand, rate, reps, alpha)
                            width = 0.1 * rel * np.sqrt(100 / n)
                            row.update(width_mean=1.05 * width, width_median=width, relative_width=rel,
                                       fits=fits * (n / 100 if proc == "nested_cv" else 1),
                                       cpu_seconds=0.002 * fits)
                            rows.append(row)
                        pair = "-vs-".join(LEARNERS[task])
                        for proc, (size, power) in TESTS.items() if learner == LEARNERS[task][0] else ():
                            null = loss.startswith(("squared", "zero"))
                            row = _row(rng, proc, "test", mechanism, pair, loss, n, estimand,
                                       size if null else power, replicates, alpha)
                            row.update(null_true=null, fits=2 * INTERVALS.get(proc, (0, 0, 0, 10))[3],
                                       cpu_seconds=0.004)
                            rows.append(row)
    return pd.DataFrame(rows)


def fake_config(replicates: int = 400, alpha: float = 0.05) -> dict:
    """A made-up resolved grid of the same run."""
    return {"scale": "fake", "procedures": sorted(set(INTERVALS) | set(TESTS)), "mechanisms": list(MECHANISMS),
            "learners": sorted({lrn for pair in LEARNERS.values() for lrn in pair}),
            "losses": sorted({loss for pair in LOSSES.values() for loss in pair}), "sizes": [100, 400],
            "replicates": replicates, "seed": 0, "alpha": alpha}


class FakeResult:
    """What ``run_benchmark`` returns, as far as the site reads it."""

    def __init__(self, cells: pd.DataFrame, config: dict):
        self.cells, self.config = cells, config
