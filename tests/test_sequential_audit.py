"""The audit's rules, by exact computation: the fixed rule's stated errors at every replicate count they cover,
and the sequential rule's guarantee at every cap it can have, checked against a hand-computed case, an exact
rational dynamic programme through the audit's own state machine, a brute-force enumeration of look-by-look
increments, and a Monte Carlo of the stopping rule judged with a binomial interval. Then its pieces in the
audit: the rounds' bookkeeping (observe, couple, still_needed) and a small sequential audit whose records equal a
fixed-count run's."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simstudy.audit.operating import fixed_rule_errors, operating_characteristics, operating_table
from simstudy.audit.sequential import SequentialState, audit_design, design, look_schedule
from simstudy.inference.proportions import wilson_bounds

LIMIT, ERROR = 0.06, 0.025       # alpha + slack and (1 - confidence) / 2 at the audit's defaults
COUNTS = np.arange(100, 5001)    # the range of the fixed rule's stated figures


# --- the fixed rule: its stated errors at every count -------------------------------------------------------

@pytest.fixture(scope="module")
def fixed_passes():
    """Per replicate count R in 100..5000: the largest k trusted (upper Wilson bound <= 6%) and the smallest k
    called liberal (lower bound > 6%)."""
    k_trust, k_liberal = [], []
    for R in COUNTS:
        k = np.arange(R + 1)
        low, high = wilson_bounds(k, np.full(k.size, R))
        k_trust.append(k[high <= LIMIT].max())
        k_liberal.append(k[low > LIMIT].min())
    return np.array(k_trust), np.array(k_liberal)


def test_fixed_rule_errors_at_every_count(fixed_passes):
    """recommend.py's figures: P(trusted | size 6%) exceeds 2.5% at 325 counts in 100..5000, worst 2.567% at 258 and
    427, 2.32% at 1,000, at least 0.61%; P(liberal | size 6%) exceeds 2.5% at 4,425 counts, worst 4.78% at 104,
    2.98% at 1,000 (scipy.stats.binom, and the module's own fixed_rule_errors)."""
    k_trust, k_liberal = fixed_passes
    trust = stats.binom.cdf(k_trust, COUNTS, LIMIT)
    liberal = stats.binom.sf(k_liberal - 1, COUNTS, LIMIT)
    assert (trust > ERROR).sum() == 325
    assert list(COUNTS[np.argsort(-trust)[:2]]) == [258, 427]
    assert round(trust.max(), 5) == 0.02567 and round(trust[COUNTS == 427][0], 5) == 0.02567
    assert round(trust[COUNTS == 1000][0], 4) == 0.0232 and round(trust.min(), 4) == 0.0061
    assert (liberal > ERROR).sum() == 4425 and COUNTS[liberal.argmax()] == 104
    assert round(liberal.max(), 4) == 0.0478 and round(liberal[COUNTS == 1000][0], 4) == 0.0298
    module_trust, module_liberal = fixed_rule_errors(COUNTS[::7], LIMIT)
    np.testing.assert_allclose(module_trust, trust[::7], rtol=1e-9)
    np.testing.assert_allclose(module_liberal, liberal[::7], rtol=1e-9)


def test_fixed_rule_counts_for_an_even_chance(fixed_passes):
    """A size of exactly 5% passes a setting with probability >= 50% first at 2,052 replicates and at every count
    from 2,216 (both settings, independent: 3,314 and 3,474). 200 replicates trust <= 5 rejections, 1,000 <= 45."""
    k_trust, _ = fixed_passes
    one = stats.binom.cdf(k_trust, COUNTS, 0.05)
    assert COUNTS[np.argmax(one >= 0.5)] == 2052 and COUNTS[one < 0.5].max() + 1 == 2216
    assert COUNTS[np.argmax(one ** 2 >= 0.5)] == 3314 and COUNTS[one ** 2 < 0.5].max() + 1 == 3474
    assert k_trust[COUNTS == 200][0] == 5 and k_trust[COUNTS == 1000][0] == 45


def test_fixed_rule_worst_counts_by_exact_rationals():
    """An independent second computation of the worst counts: the pass set from the closed form (upper Wilson bound
    <= L iff k <= R L - z sqrt(R L (1 - L)), z from the standard library) and the binomial tail in exact integers."""
    z = NormalDist().inv_cdf(0.975)

    def trust_error(R: int) -> Fraction:
        k_max = math.floor(R * 0.06 - z * math.sqrt(R * 0.06 * 0.94))
        term = total = 47 ** R                          # C(R, k) 3^k 47^(R - k), k = 0, 1, ...
        for k in range(1, k_max + 1):
            term = term * (R - k + 1) * 3 // (k * 47)
            total += term
        return Fraction(total, 50 ** R)

    worst = {R: trust_error(R) for R in (258, 427, 1000)}
    assert worst[258] > worst[427] > Fraction(25665, 1000000) > Fraction(1, 40) > worst[1000]
    assert float(worst[258]) == pytest.approx(0.0256676254, abs=1e-10)


# --- the sequential rule's design ----------------------------------------------------------------------------

def test_look_schedule():
    assert look_schedule(1000) == tuple(range(100, 901, 50)) + (1000,)
    assert look_schedule(20) == (20,) and look_schedule(150) == (100, 150) and look_schedule(210) == (100, 150, 210)
    assert look_schedule(12000)[-3:] == (7800, 9800, 12000)


def test_hand_computed_single_look():
    """Cap 20, one look: P_L(S = 0) = 0.94^20 = 0.290 > 2.5%, so no count is trusted; P_L(S >= 4) = 0.0290 and
    P_L(S >= 5) = 1 - 0.94^20 - 20(.06).94^19 - 190(.06)^2 .94^18 - 1140(.06)^3 .94^17 - 4845(.06)^4 .94^16
    = 0.00563: liberal from 5 rejections."""
    d = audit_design(20, 0.05, 0.01, 0.95)
    assert d.looks == (20,) and d.trust == (-1,) and d.liberal == (5,)
    below = sum(math.comb(20, k) * 0.06 ** k * 0.94 ** (20 - k) for k in range(5))
    assert 1 - below == pytest.approx(0.005634, abs=1e-6)
    oc = operating_characteristics(d, 0.06)
    assert oc.trusted == 0 and oc.liberal == pytest.approx(1 - below, rel=1e-12)


def _exact_errors(d) -> tuple[Fraction, Fraction]:
    """P_L(trusted), P_L(liberal) at L = 3/50 exactly: a dynamic programme in integers (weights times 50^n) whose
    transitions are the audit's own SequentialState.advance, one state per (count, open questions)."""
    states = {(0, True, True): 1}          # (count, trust open, liberal open) -> weight * 50^n_previous
    trusted = liberal = Fraction(0)
    previous = 0
    for j, n in enumerate(d.looks):
        m = n - previous
        step = [math.comb(m, k) * 3 ** k * 47 ** (m - k) for k in range(m + 1)]
        grown: dict = {}
        for (s, t_open, l_open), w in states.items():
            for k, c in enumerate(step):
                key = (s + k, t_open, l_open)
                grown[key] = grown.get(key, 0) + w * c
        states = {}
        for (s, t_open, l_open), w in grown.items():
            after = SequentialState(trust_open=t_open, liberal_open=l_open, look=j).advance(d, s)
            if after.verdict == "trusted":
                trusted += Fraction(w, 50 ** n)
            elif after.verdict == "liberal":
                liberal += Fraction(w, 50 ** n)
            elif after.verdict == "open":
                key = (s, after.trust_open, after.liberal_open)
                states[key] = states.get(key, 0) + w
        previous = n
    return trusted, liberal


def test_default_design_errors_exactly():
    """The audit's default designs (cap 1,000: a look every 50 from 100 to 900, then 1,000; nested CV's cap 200: 100,
    150, 200): both errors at most 1/40 in exact rationals, equal to the figures the module docstring and the user
    guide state (1.69% and 1.54% at cap 1,000), and the vectorised operating characteristics agree with them."""
    stated = {1000: (1.69, 1.54), 200: (1.82, 1.72)}
    for cap in (1000, 200):
        d = audit_design(cap, 0.05, 0.01, 0.95)
        assert d.looks == tuple(range(100, min(cap, 901), 50)) + (cap,)
        trusted, liberal = _exact_errors(d)
        assert trusted <= Fraction(1, 40) and liberal <= Fraction(1, 40)
        assert (round(100 * float(trusted), 2), round(100 * float(liberal), 2)) == stated[cap]
        oc = operating_characteristics(d, 3 / 50)
        assert oc.trusted == pytest.approx(float(trusted), abs=1e-13)
        assert oc.liberal == pytest.approx(float(liberal), abs=1e-13)


@pytest.mark.parametrize("alpha, slack, confidence", [(0.05, 0.01, 0.95), (0.05, 0.0, 0.95), (0.1, 0.02, 0.9),
                                                      (0.01, 0.005, 0.99)])
def test_guarantee_at_every_cap(alpha, slack, confidence):
    """For every cap from 20 (the audit's least) to 3,000 (and every 25th to 6,000) and the defaults' and other
    rules' options: P_L(trusted) <= e and P_L(liberal) <= e, L = alpha + slack, e = (1 - confidence) / 2."""
    e = (1 - confidence) / 2
    caps = list(range(20, 3001)) if (alpha, slack, confidence) == (0.05, 0.01, 0.95) else \
        list(range(20, 1001)) + list(range(1025, 3001, 25))
    caps += list(range(3025, 6001, 25))
    worst = 0.0
    for cap in caps:
        d = audit_design(cap, alpha, slack, confidence)
        oc = operating_characteristics(d, alpha + slack)
        worst = max(worst, oc.trusted, oc.liberal)
        assert oc.trusted <= e and oc.liberal <= e, cap
        assert oc.trusted + oc.liberal + oc.undecided == pytest.approx(1.0, abs=1e-10)
    assert worst > 0.8 * e   # the spending is used, not wasted


@pytest.mark.parametrize("cap", [200, 1000, 2500])
def test_errors_are_worst_at_the_limit(cap):
    """On a fine grid of sizes (and the limit itself): P(trusted) falls and P(liberal) grows with the size, so the
    bounds at p = L hold for every p on the wrong side of L (the coupling argument of the module docstring)."""
    d = audit_design(cap, 0.05, 0.01, 0.95)
    grid = np.unique(np.concatenate([np.linspace(0.0005, 0.2, 400), [LIMIT, LIMIT - 1e-6, LIMIT + 1e-6]]))
    ocs = [operating_characteristics(d, p) for p in grid]
    trusted, liberal = np.array([o.trusted for o in ocs]), np.array([o.liberal for o in ocs])
    assert np.all(np.diff(trusted) <= 1e-13) and np.all(np.diff(liberal) >= -1e-13)
    at_limit = operating_characteristics(d, LIMIT)
    assert trusted[grid >= LIMIT].max() <= at_limit.trusted + 1e-13 <= ERROR
    assert liberal[grid <= LIMIT].max() <= at_limit.liberal + 1e-13 <= ERROR


def test_brute_force_enumeration_of_increments():
    """A three-look design (30, 60, 90) evaluated path by path: every triple of increments, weighted by binomial
    probabilities (scipy), run through SequentialState.advance; the outcome probabilities and the expected
    stopping count equal the dynamic programme's."""
    d = design(90, LIMIT, ERROR, (0.05, 0.07), futility=0.2, looks=(30, 60, 90))
    assert d.looks == (30, 60, 90)
    for p in (0.02, LIMIT, 0.12):
        pmf = stats.binom.pmf(np.arange(31), 30, p)
        totals = {"trusted": 0.0, "liberal": 0.0, "undecided": 0.0}
        count = 0.0
        for steps in itertools.product(range(31), repeat=3):
            weight = pmf[steps[0]] * pmf[steps[1]] * pmf[steps[2]]
            state, s = SequentialState(), 0
            for step in steps:
                s += step
                state = state.advance(d, s)
                if state.settled:
                    break
            totals[state.verdict] += weight
            count += weight * state.replicates
        oc = operating_characteristics(d, p)
        assert (oc.trusted, oc.liberal, oc.undecided) == pytest.approx(
            (totals["trusted"], totals["liberal"], totals["undecided"]), abs=1e-12)
        assert oc.expected_count == pytest.approx(count, rel=1e-12)


def test_monte_carlo_of_the_stopping_rule():
    """20,000 simulated sequences of Bernoulli(p) rejections through the state machine, look by look: the observed
    frequencies of trusted and liberal at p = L and p = 3% lie in the 99.9% Wilson intervals around them, i.e.
    the exact values are not rejected by the binomial test."""
    d = audit_design(1000, 0.05, 0.01, 0.95)
    rng = np.random.default_rng(2024)
    looks = np.array(d.looks)
    for p in (LIMIT, 0.03):
        counts = np.cumsum(rng.random((20_000, d.cap)) < p, axis=1)[:, looks - 1]
        verdicts = []
        for row in counts:
            state = SequentialState()
            for s in row:
                state = state.advance(d, int(s))
                if state.settled:
                    break
            verdicts.append(state.verdict)
        verdicts = np.array(verdicts)
        oc = operating_characteristics(d, p)
        for name, exact in (("trusted", oc.trusted), ("liberal", oc.liberal)):
            low, high = wilson_bounds(int((verdicts == name).sum()), len(verdicts), 0.999)
            assert low <= exact <= high, (p, name, exact, low, high)


def test_failed_replicates_only_shrink_the_errors():
    """A failed replicate counts as a rejection for the trust question and as none for the liberal one."""
    d = audit_design(1000, 0.05, 0.01, 0.95)
    a = d.trust[0]
    assert SequentialState().advance(d, a).verdict == "trusted"
    assert SequentialState().advance(d, a, failed=1).verdict != "trusted"
    b = d.liberal[0]
    assert SequentialState().advance(d, b, failed=5).verdict == "liberal"
    assert SequentialState().advance(d, b - 1, failed=50).verdict != "liberal"


def test_sequential_saves_replicates():
    """Expected stopping counts of the default design (cap 1,000): a procedure far from the limit stops in a few
    hundred replicates (the module docstring's counts at 1-10%); the errors stay below the fixed rule's at 1,000."""
    d = audit_design(1000, 0.05, 0.01, 0.95)
    table = operating_table(d, [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10])
    assert table["expected replicates"].tolist() == [161, 235, 311, 321, 257, 224, 290, 256]
    expected = {p: operating_characteristics(d, p).expected_count for p in (0.005, 0.01, 0.02, 0.1, 0.15)}
    assert expected[0.005] < 200 and expected[0.01] < 250 and expected[0.02] < 300
    assert expected[0.1] < 400 and expected[0.15] < 250
    fixed_trust, fixed_liberal = fixed_rule_errors([1000], LIMIT)
    at_limit = operating_characteristics(d, LIMIT)
    assert at_limit.trusted < fixed_trust[0] and at_limit.liberal < fixed_liberal[0]


# --- the rule in the audit -------------------------------------------------------------------------------------

def _tests_table(counts: dict[str, int], replicates: int, powers: dict[str, float] | None = None) -> pd.DataFrame:
    powers = powers or {}
    return pd.DataFrame({"procedure": list(counts), "size_count": list(counts.values()),
                         "replicates": replicates, "size": [c / replicates for c in counts.values()],
                         "power": [powers.get(p, 0.5) for p in counts], "mean_width": 1.0})


def test_observe_couple_and_still_needed():
    """One look of the bookkeeping by hand: at 100 replicates (futility 10%: a_1 = 0, b_1 = 14, the trust question
    closed from 7, the liberal one up to 4) a procedure with 0 rejections is trusted, one with 14 liberal; liberal in one setting closes it in the other; a procedure whose trust question
    closed in one setting loses it in the other; only open procedures more powerful than the best trusted one hold
    the run; nested CV goes through its own design (cap 200: 1 rejection of 100 is trusted there, not under the
    main design's a_1 = 0)."""
    from simstudy.audit.rounds import couple, observe, still_needed

    designs = {"main": audit_design(1000, 0.05, 0.01, 0.95, futility=0.1),
               "nested_cv": audit_design(200, 0.05, 0.01, 0.95, futility=0.1)}
    first_look = designs["main"].table().iloc[0]
    assert tuple(first_look[["trusted_if_at_most", "liberal_if_at_least", "trust_closed_from",
                             "liberal_closed_up_to"]]) == (0, 14, 7, 4)
    counts = {"safe": 0, "bad": 14, "middle": 5, "closed": 12, "nested_cv": 1, "oracle_rho": 3}
    first = observe({}, _tests_table(counts, 100), 100, designs)
    assert "oracle_rho" not in first
    assert first["safe"].verdict == "trusted" and first["bad"].verdict == "liberal"
    assert first["middle"].verdict == "open" and first["middle"].trust_open
    assert first["closed"].verdict == "open" and not first["closed"].trust_open and first["closed"].liberal_open
    assert first["nested_cv"].verdict == "trusted" and designs["nested_cv"].trust[0] == 1
    second = observe({}, _tests_table({**counts, "bad": 3, "closed": 5, "middle": 3}, 100), 100, designs)
    states = couple({"n/2": first, "n": second})
    assert states["n"]["bad"].verdict == "undecided" and states["n"]["bad"].reason == "liberal at n/2"
    assert not states["n"]["closed"].trust_open and states["n"]["closed"].liberal_open
    power = pd.Series({"safe": 0.3, "middle": 0.5, "closed": 0.9, "nested_cv": 0.1, "bad": 0.8})
    needed = still_needed(states, power)
    assert needed == {"n/2": ["middle"], "n": ["middle"]}   # "closed" has no trust question left
    assert still_needed(states, power.where(power.index != "middle", 0.2)) == {"n/2": [], "n": []}


def test_nested_cv_stops_once_not_needed():
    """Nested CV stops in a setting once it no longer holds the run: its question closes ("not needed") and the
    setting's nested_cv_replicates drops to the replicates it has run; where it still holds the run, or has
    already run its replicates, nothing changes."""
    from simstudy.audit.rounds import NESTED, _stop_nested

    open_state, trusted = SequentialState(), SequentialState(verdict="trusted", trust_open=False,
                                                             liberal_open=False, look=1, replicates=100,
                                                             rejections=1)
    states = {"n/2": {NESTED: open_state, "a": open_state}, "n": {NESTED: trusted, "a": open_state}}
    out, nested = _stop_nested(states, {"n/2": [NESTED, "a"], "n": ["a"]}, {"n/2": 200, "n": 200},
                               {"n/2": 100, "n": 100})
    assert nested == {"n/2": 200, "n": 100}
    assert out["n/2"][NESTED] == open_state and out["n"][NESTED] == trusted      # a settled verdict is kept
    out, nested = _stop_nested(states, {"n/2": ["a"], "n": []}, {"n/2": 200, "n": 100}, {"n/2": 150, "n": 100})
    assert nested == {"n/2": 150, "n": 100}
    assert out["n/2"][NESTED].verdict == "undecided" and out["n/2"][NESTED].reason == "not needed"
    assert out["n/2"]["a"] == open_state
    out, nested = _stop_nested(states, {"n/2": [], "n": []}, {"n/2": 50, "n": 50}, {"n/2": 100, "n": 100})
    assert nested == {"n/2": 50, "n": 50} and out["n/2"][NESTED] == open_state   # its replicates all ran


def test_recommend_with_sequential_verdicts():
    """The recommendation reads the sequential verdicts: trusted in both settings, liberal in either."""
    from simstudy.audit.recommend import recommend

    d = audit_design(1000, 0.05, 0.01, 0.95)
    trusted, liberal, open_ = (SequentialState().advance(d, c) for c in (0, 14, 5))
    states = {"n": {"a": trusted, "b": trusted, "c": liberal}, "n/2": {"a": trusted, "b": open_.close("not needed"),
                                                                    "c": trusted}}
    table = _tests_table({"a": 0, "b": 0, "c": 14, "oracle_rho": 1}, 100, {"a": 0.2, "b": 0.6, "c": 0.9})
    rec = recommend(table, table, 0.05, states=states)
    assert rec.procedure == "a" and rec.trusted and rec.rule == "sequential"
    verdict = rec.table.set_index("procedure")
    assert verdict["verdict"].to_dict() == {"a": "trusted", "b": "undecided", "c": "liberal"}
    assert verdict.loc["b", "how_half"] == "not needed" and verdict.loc["a", "stopped_n"] == 100
    assert "sequential rule showed its size to be at most 6% in both settings, after 100 and 100" in rec.text


def test_rounds_give_the_records_of_a_fixed_run(tmp_path):
    """The rounds extend each setting's run directory look by look (two chunks per worker and look); the final
    records, summary and tests are those of an in-memory run of the same length with the same seed (the engine's
    extension mechanism) and nested CV on the replicates the rounds gave it, and the verdicts follow."""
    from simstudy import run_study
    from simstudy.audit.data import user_population, without_replacement
    from simstudy.audit.rounds import look_chunk_size, run_rounds
    from simstudy.learners import build_learner
    from conftest import make_letter_like

    assert (look_chunk_size(100, 2), look_chunk_size(50, 2), look_chunk_size(50, 1), look_chunk_size(12, 2)) == \
        (25, 13, 25, 5)

    X, y = make_letter_like(200, seed=3)
    pop = user_population(None, X, (y < "N").astype(int), "classification", "auto", None)
    params = dict(learner=build_learner("tree", population=pop), K=5, splits=1, nested_cv_replicates=60,
                  alpha=0.05, seed=4, loss="zero_one", n_jobs=2, progress=False)
    designs = {"main": design(60, LIMIT, ERROR, (0.05, 0.07), looks=(30, 60)),
               "nested_cv": design(60, LIMIT, ERROR, (0.05, 0.07), looks=(30, 60))}
    settings = {"n/2": (without_replacement(pop), 100), "n": (pop, 200)}
    run = run_rounds(settings, params, designs, tmp_path)
    # nested CV's question closed at the first look in both settings, which ran on to 60: its later replicates
    # skipped it, and the records are those of a fixed run with nested CV on the first 30
    assert run.nested_cv_replicates == {"n/2": 30, "n": 30}
    assert {name: int(r.tests["replicates"].max()) for name, r in run.results.items()} == {"n/2": 60, "n": 60}
    for name, (population, size) in settings.items():
        result = run.results[name]
        length = int(result.tests["replicates"].max())
        assert length in (30, 60) and (tmp_path / f"setting_{list(settings).index(name)}" / "shards").is_dir()
        fixed = run_study("rho_hat", population=population, sizes=[size], replicates=length,
                          **{**params, "n_jobs": 1, "nested_cv_replicates": run.nested_cv_replicates[name]})
        timing = [c for c in fixed.records.columns if "time" in c]
        pd.testing.assert_frame_equal(result.records.drop(columns=timing).reset_index(drop=True),
                                      fixed.records.drop(columns=timing).reset_index(drop=True))
        pd.testing.assert_frame_equal(result.tests, fixed.tests)      # the looks' lean aggregation: the same tables
        pd.testing.assert_frame_equal(result.summary, fixed.summary)
        assert set(run.states[name]) == set(fixed.tests["procedure"]) - {"oracle_rho"}
        assert all(s.settled for s in run.states[name].values())
