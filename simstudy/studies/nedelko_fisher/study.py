"""The nedelko_fisher study as the engine runs it (Nedelko's Figure 3).

One phase, the study's replicates, preceded, for the oracle R_hat methods only, by the
calibration over the model family (its own random streams). The study defines its own
population family (the logistic model over the Bayes-error grid) and learner (Fisher's
discriminant with an ERM threshold): the population and learner groups do not apply.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.errors import ConfigError
from simstudy.inference.risk_bounds import ORACLE_METHODS
from simstudy.learners.linear.threshold import TIE_RULES
from simstudy.report.tables import with_error
from simstudy.studies.base import Phase, Study, StudyTables, as_list
from simstudy.studies.nedelko_fisher.aggregate import (
    add_rhat, aggregate, paired_delta0, rhat_table, sensitivity_markdown, tie_rule_sensitivity, winners_markdown,
)
from simstudy.studies.nedelko_fisher.config import NedelkoFisherConfig
from simstudy.studies.nedelko_fisher.report import RHAT_DESCRIPTIONS, TIE_RULE_DESCRIPTIONS, summary_markdown
from simstudy.studies.nedelko_fisher.worker import FisherRiskWorker, OptimismWorker, make_conditions
from simstudy.files import write_text_atomic

__all__ = ["NedelkoFisherStudy"]

CALIBRATION = "rhat_calibration"


class NedelkoFisherStudy(Study):
    """LOO vs K-fold vs empirical risk (and R_hat, .632, .632+) for Fisher's discriminant."""

    name = "nedelko_fisher"
    description = "Nedelko: LOO vs K-fold vs empirical risk for Fisher's discriminant (Figure 3)"
    Config = NedelkoFisherConfig
    uses = ()

    def _sizes(self) -> list[int]:
        return [int(v) for v in as_list(self.config.sample_size)]

    def _sensitivity(self) -> tuple[str, ...]:
        c = self.config
        return tuple(r for r in TIE_RULES if r != c.tie_rule) if c.tie_rule_sensitivity else ()

    def phases(self, on_error: str = "record") -> list[Phase]:
        c = self.config
        out = []
        if c.rhat_method in ORACLE_METHODS:
            cal = make_conditions(self._sizes(), [float(v) for v in c.rhat_grid], purpose=CALIBRATION)
            out.append(Phase(CALIBRATION, cal, [int(c.rhat_calibration_replicates)] * len(cal),
                             OptimismWorker(cal, int(c.seed), str(c.tie_rule)), description="R_hat calibration"))
        conditions = make_conditions(self._sizes(), [float(v) for v in as_list(c.bayes_error)])
        out.append(Phase("replicates", conditions, [int(c.replicates)] * len(conditions),
                         FisherRiskWorker(conditions, int(c.seed), int(c.K), int(c.bootstrap), str(c.tie_rule),
                                          self._sensitivity()),
                         description="nedelko_fisher"))
        return out

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        c = self.config
        rec = records[self.main_phase].copy()
        if c.rhat_method in ORACLE_METHODS and CALIBRATION not in records:
            raise ConfigError(f"study.rhat_method={c.rhat_method!r} needs the R_hat calibration records "
                              f"({CALIBRATION}.parquet), which this run does not have: run the study with "
                              f"study.rhat_method={c.rhat_method} (the same run directory reuses the replicates and "
                              "adds the calibration).")
        table = rhat_table(rec["sample_size"].unique(), c.rhat_method, c.rhat_cells, float(c.rhat_delta),
                           records.get(CALIBRATION), int(c.rhat_min_count))
        rec["rhat"] = add_rhat(rec, table, c.rhat_method, c.rhat_cells, float(c.rhat_delta))
        extra = {"rhat_bias": table, "paired_delta0": paired_delta0(rec)}
        if any(col.startswith("true_risk__") for col in rec.columns):
            extra["tie_rule_sensitivity"] = tie_rule_sensitivity(rec, str(c.tie_rule))
        return StudyTables(aggregate(rec), None, extra)

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.nedelko_fisher.figures import risk_estimate_figure

        c = self.config
        return {f"fig3_N{N}": partial(risk_estimate_figure, g, int(N), int(c.K), str(c.rhat_method), str(c.tie_rule))
                for N, g in tables.summary.groupby("sample_size")}

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        path = Path(directory) / "summary.md"
        write_text_atomic(path, summary_markdown(tables, self.config))
        return [path]

    def report_tables(self, tables: StudyTables) -> dict[str, pd.DataFrame]:
        """Per N: means ± 1.96 SE (x 1000) and the paired LOO - K-fold comparison of Delta0."""
        from simstudy.studies.nedelko_fisher.report import summary_table

        out = {}
        paired = tables.extra["paired_delta0"]
        for N, g in tables.summary.groupby("sample_size"):
            out[f"N = {N}: mean true risk, estimates, bias, RMSE and Delta0 (x 1000, ± 1.96 SE)"] = summary_table(g)
            p = paired[(paired["sample_size"] == N) & (paired["estimator"] == "loo") & (paired["reference"] == "kfold")]
            out[f"N = {N}: Delta0(LOO) - Delta0(K-fold) on the same samples (x 1000, ± 1.96 SE)"] = pd.DataFrame({
                "R0": p["bayes_error"].to_numpy(), "replicates": p["replicates"].to_numpy(),
                "difference x 1000": [with_error(m, e, 1000, 2) for m, e in zip(p["mean_difference"], p["se"])],
                "z": p["z"].round(1).to_numpy()})
        return out

    def headline(self, tables: StudyTables) -> str:
        """Figure 3's key numbers per (N, R0): the mean true risk, each estimate's mean Delta0
        (x 1000), the most accurate estimate and the paired z of LOO - K-fold."""
        s, paired = tables.summary, tables.extra["paired_delta0"]
        wide = s.pivot_table(index=["sample_size", "bayes_error"], columns="estimator", values="mean_delta0")
        best = wide.idxmin(axis=1)
        wide = (1000 * wide).round(2)
        wide.insert(0, "true_risk", s.groupby(["sample_size", "bayes_error"])["mean_true_risk"].first().round(4))
        wide["best"] = best
        lk = paired[(paired["estimator"] == "loo") & (paired["reference"] == "kfold")]
        wide["z(loo-kfold)"] = lk.set_index(["sample_size", "bayes_error"])["z"].round(1)
        return (f"nedelko_fisher ({self.config.replicates} samples per point, ties {self.config.tie_rule}): mean true "
                "risk and mean Delta0 of each estimate (x1000) per (N, R0); best = smallest mean Delta0; "
                "z(loo-kfold) < 0: LOO more accurate on the same samples\n" + wide.to_string())

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        c = self.config
        rhat: dict[str, Any] = {"method": str(c.rhat_method), "description": RHAT_DESCRIPTIONS[str(c.rhat_method)]}
        if c.rhat_method == "nedelko_worst_case":
            rhat["cells"] = c.rhat_cells
        elif c.rhat_method == "vc_halfplane":
            rhat["delta"] = float(c.rhat_delta)
        else:
            rhat.update({"bayes_errors": list(c.rhat_grid), "replicates": int(c.rhat_calibration_replicates),
                         "min_count": int(c.rhat_min_count)})
        return {"population": {"name": "logistic", "model": "x ~ N(0, I2), P(y=1|x) = sigmoid(alpha (x1 + x2))"},
                "learner": {"name": "fisher", "direction": "S^-1 (m1 - m0), S = S1 + S0 (class scatter matrices "
                                                           "normalised by class size)",
                            "threshold": "empirical risk minimisation",
                            "tie_rule": str(c.tie_rule), "tie_rule_description": TIE_RULE_DESCRIPTIONS[str(c.tie_rule)],
                            "tie_rule_sensitivity": list(self._sensitivity())},
                "rhat": rhat}
