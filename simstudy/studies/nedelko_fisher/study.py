"""The nedelko_fisher study as the engine runs it (Nedelko's Figure 3).

Two phases: the R_hat calibration over the model family (its own random streams; skipped with
``rhat_calibration_replicates=0``), then the study's replicates. The study defines its own
population family (the logistic model over the Bayes-error grid) and learner (Fisher's
discriminant with an ERM threshold): the population and learner groups do not apply.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from simstudy.report.tables import frame_to_markdown
from simstudy.studies.base import Phase, Study, StudyTables, as_list
from simstudy.studies.nedelko_fisher.aggregate import aggregate, apply_rhat, optimism_table, winners_markdown
from simstudy.studies.nedelko_fisher.config import NedelkoFisherConfig
from simstudy.studies.nedelko_fisher.worker import FisherRiskWorker, OptimismWorker, make_conditions

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

    def phases(self, on_error: str = "record") -> list[Phase]:
        c = self.config
        out = []
        if c.rhat_calibration_replicates > 0:
            cal = make_conditions(self._sizes(), [float(v) for v in c.rhat_grid], purpose=CALIBRATION)
            out.append(Phase(CALIBRATION, cal, [int(c.rhat_calibration_replicates)] * len(cal),
                             OptimismWorker(cal, int(c.seed)), description="R_hat calibration"))
        conditions = make_conditions(self._sizes(), [float(v) for v in as_list(c.bayes_error)])
        out.append(Phase("replicates", conditions, [int(c.replicates)] * len(conditions),
                         FisherRiskWorker(conditions, int(c.seed), int(c.K), int(c.bootstrap)),
                         description="nedelko_fisher"))
        return out

    def aggregate(self, records: dict[str, pd.DataFrame]) -> StudyTables:
        rec = records[self.main_phase].copy()
        extra = {}
        if CALIBRATION in records:
            table = optimism_table(records[CALIBRATION], str(self.config.rhat_method), int(self.config.rhat_min_count))
            rec["rhat"] = apply_rhat(rec, table)
            extra["rhat_bias"] = table
        return StudyTables(aggregate(rec), None, extra)

    def figures(self, tables: StudyTables) -> dict[str, Any]:
        from simstudy.studies.nedelko_fisher.figures import risk_estimate_figure

        return {f"fig3_N{N}": risk_estimate_figure(g, int(N), int(self.config.K))
                for N, g in tables.summary.groupby("sample_size")}

    def write_tables(self, tables: StudyTables, directory: Path) -> list[Path]:
        cols = ["sample_size", "bayes_error", "estimator", "mean_true_risk", "mean_estimate", "bias", "rmse",
                "mean_delta0", "mean_delta0_se"]
        md = [f"# Nedelko: risk estimates for Fisher's discriminant ({self.config.replicates} samples per point)\n",
              "Mean true risk, mean estimate, bias, RMSE and mean Delta0 per (N, R0, estimator); "
              "all columns with standard errors are in summary.csv.\n"]
        for N, g in tables.summary.groupby("sample_size"):
            md.append(f"\n## N = {N}\n\n" + frame_to_markdown(g[cols]))
            md.append("\n" + winners_markdown(g))
        path = Path(directory) / "summary.md"
        path.write_text("\n".join(md))
        return [path]

    def headline(self, tables: StudyTables) -> str:
        s = tables.summary
        wide = s.pivot_table(index=["sample_size", "bayes_error"], columns="estimator", values="mean_delta0")
        truth = s.groupby(["sample_size", "bayes_error"])["mean_true_risk"].first()
        wide.insert(0, "true_risk", truth)
        return ("nedelko_fisher: mean true risk and mean Delta0 of each estimate (x1000) per (N, R0)\n"
                + (wide.assign(**{c: 1000 * wide[c] for c in wide.columns if c != "true_risk"})
                   .round(3).to_string()))

    def manifest(self, records: dict[str, pd.DataFrame]) -> dict[str, Any]:
        c = self.config
        return {"population": {"name": "logistic", "model": "x ~ N(0, I2), P(y=1|x) = sigmoid(alpha (x1 + x2))"},
                "learner": {"name": "fisher", "threshold": "empirical risk minimisation, tie -> closest to Fisher "
                                                           "midpoint"},
                "rhat_calibration": {"method": str(c.rhat_method), "bayes_errors": list(c.rhat_grid),
                                     "replicates": int(c.rhat_calibration_replicates),
                                     "min_count": int(c.rhat_min_count)}}

    @staticmethod
    def warm_up() -> None:
        from simstudy.studies.nedelko_fisher.worker import warm_up

        warm_up()
