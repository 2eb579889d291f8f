"""The nedelko_fisher study's options through its pipeline: tie rule and its sensitivity table,
R_hat methods, paired comparisons of Delta0 (against direct computations and Monte Carlo)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import validate
from simstudy.engine.run import run_study
from simstudy.errors import ConfigError
from simstudy.inference.error_functions import delta0
from simstudy.inference.risk_bounds import rhat_bias_bound
from simstudy.studies.base import Chunk
from simstudy.studies.nedelko_fisher.aggregate import (
    add_rhat, optimism_table, paired_delta0, rhat_table, tie_rule_sensitivity, winners_markdown,
)
from simstudy.studies.nedelko_fisher.worker import SENSITIVITY_COLUMNS, FisherRiskWorker, make_conditions

OTHERS = ("midpoint", "first", "last")


@pytest.fixture(scope="module")
def same_samples():
    """Two conditions at N = 20: the study's worker (random, with sensitivity) and one worker per rule."""
    conds = make_conditions([20], [0.1, 0.35], purpose="sensitivity-test")
    chunks = [Chunk(i, 0, 400) for i in range(len(conds))]
    run = lambda rule, sens: pd.concat([FisherRiskWorker(conds, 7, 5, 6, rule, sens)(c) for c in chunks],  # noqa
                                       ignore_index=True)
    return run("random", OTHERS), {rule: run(rule, ()) for rule in ("random",) + OTHERS}


def test_sensitivity_columns_are_separate_runs_on_the_same_samples(same_samples):
    with_sens, alone = same_samples
    main_cols = ["true_risk", "empirical", "loo", "kfold", "boot632", "boot632plus", "minimisers"]
    pd.testing.assert_frame_equal(with_sens[main_cols], alone["random"][main_cols], check_exact=True)
    for rule in OTHERS:
        for name in SENSITIVITY_COLUMNS:
            np.testing.assert_array_equal(with_sens[f"{name}__{rule}"], alone[rule][name], err_msg=f"{name} {rule}")
        # tied thresholds have equal training error: the empirical risk does not depend on the rule
        np.testing.assert_array_equal(alone[rule]["empirical"], with_sens["empirical"])
        np.testing.assert_array_equal(alone[rule]["minimisers"], with_sens["minimisers"])
    assert (with_sens["true_risk__midpoint"] != with_sens["true_risk"]).mean() > 0.05   # the rule does matter


def test_sensitivity_table_equals_a_direct_computation(same_samples):
    with_sens, alone = same_samples
    table = rhat_table([20], "nedelko_worst_case")
    rec = with_sens.assign(rhat=add_rhat(with_sens, table, "nedelko_worst_case"))
    sens = tie_rule_sensitivity(rec, "random").set_index(["bayes_error", "rule", "quantity", "estimator"])
    for r0 in (0.1, 0.35):
        base = alone["random"][alone["random"]["bayes_error"] == r0]
        R = base["true_risk"].to_numpy()
        rhat = np.clip(base["empirical"] + rhat_bias_bound(base["empirical"].to_numpy(), 20), 0, 1).to_numpy()
        for rule in OTHERS:
            other = alone[rule][alone[rule]["bayes_error"] == r0]
            Ra = other["true_risk"].to_numpy()
            direct = {("true_risk", ""): Ra - R}
            for est in ("loo", "kfold", "empirical", "boot632", "boot632plus"):
                e, ea = base[est].to_numpy(), other[est].to_numpy()
                direct["bias", est] = (ea - Ra) - (e - R)
                direct["delta0", est] = delta0(np.clip(ea, 0, 1), Ra) - delta0(np.clip(e, 0, 1), R)
            direct["bias", "rhat"] = -(Ra - R)                     # R_hat is a function of the empirical risk
            direct["delta0", "rhat"] = delta0(rhat, Ra) - delta0(rhat, R)
            for (quantity, est), diff in direct.items():
                row = sens.loc[(r0, rule, quantity, est)]
                assert row["mean_difference"] == pytest.approx(diff.mean(), abs=1e-14), (r0, rule, quantity, est)
                assert row["se"] == pytest.approx(diff.std(ddof=1) / np.sqrt(len(diff)), rel=1e-10)
            row = sens.loc[(r0, rule, "true_risk", "")]
            assert row["tied_samples"] == pytest.approx(np.mean(base["minimisers"] > 1))
            assert row["changed_samples"] == pytest.approx(np.mean(Ra != R))


def test_sensitivity_standard_errors_by_monte_carlo():
    """The SE of a paired difference predicts the spread of independent batch means (chi-square test)."""
    cond = make_conditions([20], [0.3], purpose="se-check")
    worker = FisherRiskWorker(cond, 3, 5, 0, "random", ("midpoint",))
    batches = [worker(Chunk(0, 100 * b, 100 * (b + 1))) for b in range(30)]
    means, ses = [], []
    for rec in batches:
        s = tie_rule_sensitivity(rec, "random")
        row = s[s["quantity"] == "true_risk"].iloc[0]
        means.append(row["mean_difference"])
        ses.append(row["se"])
    means, ses = np.array(means), np.array(ses)
    statistic = np.sum((means - means.mean()) ** 2 / ses ** 2)
    p = stats.chi2.cdf(statistic, len(means) - 1)
    assert 1e-3 < p < 1 - 1e-3, (statistic, p)


# ----------------------------------------------------------------------------- paired Delta0
def test_paired_delta0_by_hand():
    rec = pd.DataFrame({"sample_size": 10, "bayes_error": 0.2, "error": "",
                        "true_risk": [0.2, 0.3, 0.25], "loo": [0.1, 0.3, 0.5], "kfold": [0.3, 0.2, 0.2],
                        "empirical": [0.1, 0.1, 0.2]})
    out = paired_delta0(rec).set_index(["estimator", "reference"])
    d0 = lambda a, b: (a - b) ** 2 / (2 * a * (1 - a) + 2 * b * (1 - b))  # noqa: E731
    diff = np.array([d0(0.1, 0.2) - d0(0.3, 0.2), 0.0 - d0(0.2, 0.3), d0(0.5, 0.25) - d0(0.2, 0.25)])
    row = out.loc[("loo", "kfold")]
    assert row["mean_difference"] == pytest.approx(diff.mean())
    assert row["se"] == pytest.approx(np.std(diff, ddof=1) / np.sqrt(3))
    assert row["z"] == pytest.approx(diff.mean() / (np.std(diff, ddof=1) / np.sqrt(3)))
    assert set(out.index) == {("loo", "kfold"), ("empirical", "loo"), ("empirical", "kfold")}


# ----------------------------------------------------------------------------- the whole pipeline
@pytest.fixture(scope="module")
def tiny_run():
    return run_study("nedelko_fisher", sample_size=[10, 20], bayes_error=[0.1, 0.4], replicates=150, bootstrap=4,
                     runner={"n_jobs": 1, "progress": False})


def test_rhat_default_through_the_pipeline(tiny_run):
    """Default R_hat = clip(R_emp + B_n(R_emp)) with n from the growth function; no calibration phase."""
    assert set(tiny_run.phase_records) == {"replicates"}
    rec = tiny_run.records
    table = tiny_run.tables.extra["rhat_bias"]
    assert set(table["method"]) == {"nedelko_worst_case"} and len(table) == 11 + 21
    for N in (10, 20):
        t = table[table["sample_size"] == N]
        np.testing.assert_allclose(t["bias"], rhat_bias_bound(np.arange(N + 1) / N, N, cells="growth"))
    s = tiny_run.summary.set_index(["sample_size", "bayes_error", "estimator"])
    for (N, r0), g in rec.groupby(["sample_size", "bayes_error"]):
        rhat = np.clip(g["empirical"] + rhat_bias_bound(g["empirical"].to_numpy(), N), 0, 1)
        assert s.loc[(N, r0, "rhat"), "mean_estimate"] == pytest.approx(rhat.mean(), abs=1e-14)
        assert s.loc[(N, r0, "rhat"), "mean_delta0"] == pytest.approx(delta0(rhat, g["true_risk"]).mean(), abs=1e-14)
    assert tiny_run.manifest["learner"]["tie_rule"] == "random" and tiny_run.manifest["rhat"]["cells"] == "growth"
    assert tiny_run.manifest["learner"]["tie_rule_sensitivity"] == list(OTHERS)


def test_paired_table_means_are_differences_of_the_summary_means(tiny_run):
    s = tiny_run.summary.set_index(["sample_size", "bayes_error", "estimator"])["mean_delta0"]
    for row in tiny_run.tables.extra["paired_delta0"].itertuples():
        key = (row.sample_size, row.bayes_error)
        assert row.mean_difference == pytest.approx(s[key + (row.estimator,)] - s[key + (row.reference,)], abs=1e-12)
    g = tiny_run.summary[tiny_run.summary["sample_size"] == 20]
    text = winners_markdown(g, tiny_run.tables.extra["paired_delta0"].query("sample_size == 20"))
    assert "LOO - K-fold (paired)" in text and "R_hat - LOO" in text and text.count("\n") == 2 + 2


def test_other_rhat_methods_by_reaggregation(tiny_run):
    vc = tiny_run.reaggregate(rhat_method="vc_halfplane").summary
    assert (vc[vc["estimator"] == "rhat"]["mean_estimate"] == 1.0).all()     # vacuous at N = 10, 20
    vc3 = tiny_run.reaggregate(rhat_cells="vc_dimension")
    assert set(vc3.tables.extra["rhat_bias"]["detail"]) == {"n = 3 cells (vc_dimension)"}
    with pytest.raises(ConfigError, match="rhat_calibration"):
        tiny_run.reaggregate(rhat_method="oracle_mean_curve")


def test_oracle_run_calibrates_and_reaggregates_to_the_default(tiny_run):
    oracle = run_study("nedelko_fisher", sample_size=[10, 20], bayes_error=[0.1, 0.4], replicates=150, bootstrap=4,
                       rhat_method="oracle_mean_curve", rhat_grid=[0.05, 0.2, 0.4], rhat_calibration_replicates=60,
                       runner={"n_jobs": 1, "progress": False})
    cal = oracle.phase_records["rhat_calibration"]
    assert len(cal) == 2 * 3 * 60
    pd.testing.assert_frame_equal(oracle.records, tiny_run.records)        # the replicates do not depend on R_hat
    expected = optimism_table(cal, "oracle_mean_curve")
    pd.testing.assert_frame_equal(oracle.tables.extra["rhat_bias"].drop(columns="detail"), expected)
    back = oracle.reaggregate(rhat_method="nedelko_worst_case")
    pd.testing.assert_frame_equal(back.summary, tiny_run.summary)


@pytest.mark.parametrize("overrides,field", [
    (["study.tie_rule=closest"], "study.tie_rule"),
    (["study.rhat_method=mean_curve"], "study.rhat_method"),
    (["study.rhat_cells=0"], "study.rhat_cells"),
    (["study.rhat_cells=many"], "study.rhat_cells"),
    (["study.rhat_delta=1.5"], "study.rhat_delta"),
    (["study.rhat_method=oracle_mean_curve", "study.rhat_calibration_replicates=0"],
     "study.rhat_calibration_replicates"),
])
def test_bad_values_name_the_field(compose_config, overrides, field):
    with pytest.raises(ConfigError) as info:
        validate(compose_config("experiment=nedelko_fisher", *overrides))
    assert field in str(info.value)


def test_python_api_checks_the_sensitivity_flag():
    with pytest.raises(ConfigError, match="study.tie_rule_sensitivity"):
        run_study("nedelko_fisher", tie_rule_sensitivity="maybe")


def test_histogram_tie_is_validated(compose_config):
    with pytest.raises(ConfigError, match="study.tie"):
        validate(compose_config("experiment=nedelko_histogram", "study.tie=random"))
    validate(compose_config("experiment=nedelko_histogram", "study.tie=coin"))
