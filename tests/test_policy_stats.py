"""The blocked run's primary analysis over policies (mentor.evaluation.policy_stats, mentor.lab.blocks.paired): t-intervals,
exact sign-flip p-values and Holm's correction against hand-computed values (scipy is not a dependency), the decision
rule on the t-interval, and the harm counts."""

import math

import pytest

from mentor.evaluation.policy_stats import holm, sign_flip_p, t_quantile, t_sf2, t_test
from mentor.lab import blocks
from mentor.lab.blocks import decide_t, harm, paired


def test_t_quantiles_match_the_printed_table():
    # Student's t, 0.975 and 0.95 quantiles (any printed table, to 4 decimals).
    for df, q975, q95 in [(1, 12.7062, 6.3138), (2, 4.3027, 2.9200), (5, 2.5706, 2.0150), (23, 2.0687, 1.7139),
                          (100, 1.9840, 1.6602)]:
        assert t_quantile(0.975, df) == pytest.approx(q975, abs=1e-4)
        assert t_quantile(0.95, df) == pytest.approx(q95, abs=1e-4)
    # With 2 degrees of freedom the two-sided p has a closed form: 1 - t / sqrt(t^2 + 2).
    for t in (0.3, 1.0, 3.4641):
        assert t_sf2(t, 2) == pytest.approx(1 - t / math.sqrt(t * t + 2), abs=1e-12)


def test_the_t_interval_is_mean_plus_minus_t_times_the_standard_error_over_policies():
    # 0.1, 0.2, 0.3: mean 0.2, SD 0.1, SE 0.1 / sqrt(3), t(0.975, 2) = 4.302653, t(0.95, 2) = 2.919986.
    r = t_test([0.1, 0.2, 0.3])
    se = 0.1 / math.sqrt(3)
    assert r["t_ci"] == pytest.approx([0.2 - 4.302653 * se, 0.2 + 4.302653 * se], abs=1e-6)
    assert r["t_ci90"] == pytest.approx([0.2 - 2.919986 * se, 0.2 + 2.919986 * se], abs=1e-6)
    assert r["t_p"] == pytest.approx(1 - 3.464102 / math.sqrt(3.464102 ** 2 + 2), abs=1e-6)
    # One policy: no interval (not a zero-width one); equal differences: a zero-width interval at their value.
    assert t_test([0.04]) == {"t_ci": None, "t_ci90": None, "t_p": None}
    assert t_test([0.04, 0.04])["t_ci"] == [0.04, 0.04]


def test_the_sign_flip_p_is_exact():
    # Six positive differences: only all-plus and all-minus are as extreme: 2 of 2^6.
    assert sign_flip_p([0.1, 0.2, 0.3, 0.1, 0.2, 0.3]) == 2 / 64
    # 1, 2, 3, -1 (sum 5): the patterns with |sum| >= 5 are +7, +5 (either 1 flipped) and their mirrors: 6 of 16.
    assert sign_flip_p([1.0, 2.0, 3.0, -1.0]) == 6 / 16
    # A sum of 0 is no evidence; ties with the observed sum count (rounding must not hide them).
    assert sign_flip_p([0.1, -0.1]) == 1.0
    assert sign_flip_p([0.1, 0.2, 0.3]) == 2 / 8 == sign_flip_p([0.3, 0.2, 0.1])
    # 24 policies (the confirmatory run) are enumerated exactly: all positive gives 2 / 2^24.
    assert sign_flip_p([0.01 * (i + 1) for i in range(24)]) == 2 / 2 ** 24


def test_holm_steps_down_and_keeps_the_order():
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03}) == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    assert holm({"a": 0.01, "b": 0.5, "c": 0.02}) == pytest.approx({"a": 0.03, "c": 0.04, "b": 0.5})
    assert holm({"a": 0.6, "b": 0.7}) == {"a": 1.0, "b": 1.0}


def stats(**kw):
    return {"policy_mean": 0.05, "t_ci": [0.01, 0.09], "t_ci90": [0.02, 0.08], "t_p": 0.01, "holm_p": None,
            "policies": 24, **kw}


def test_the_decision_is_round_4s_on_the_t_interval_after_holm():
    assert decide_t(stats()) == {"decision": "win"}
    assert decide_t(stats(policy_mean=-0.05)) == {"decision": "loss"}
    # Below 0.05 alone, but not after Holm: not a win.
    assert decide_t(stats(holm_p=0.06))["decision"] == "unresolved"
    assert decide_t(stats(t_p=0.4, t_ci=[-0.03, 0.035], t_ci90=[-0.025, 0.029]))["decision"] == "matches"
    # Unresolved: the policies needed for a 95% t-interval of +-0.03 (half-width 0.06 at 24 policies: 4 x 24).
    assert decide_t(stats(t_p=0.2, t_ci=[-0.04, 0.08], t_ci90=[-0.03, 0.07])) == {"decision": "unresolved",
                                                                                   "n_needed": 96}
    assert decide_t(stats(t_ci=None, t_ci90=None, t_p=None, policies=1)) == {"decision": "too_few_policies"}


def blocks_of(outcomes):
    """Blocks from {seed: [(grpo, static_hints, mentor, learning, two_draws), ...]}."""
    arms = ("grpo", "static_hints", "mentor", "learning", "two_draws")
    return [{"pretrain_seed": seed, "grpo_seed": g, "outcome": dict(zip(arms, row))}
            for seed, rows in outcomes.items() for g, row in enumerate(rows)], list(arms)


def test_paired_analyses_over_policies_with_holm_across_the_three_primary_comparisons():
    done, arms = blocks_of({100 + i: [(0.10, 0.12 + 0.01 * i, 0.15 + 0.01 * i, 0.20 + 0.02 * i, 0.16)]
                            for i in range(6)})
    done.append({"pretrain_seed": 100, "grpo_seed": 1, "outcome": dict(zip(arms, (0.1, 0.1, 0.3, 0.3, 0.3)))})
    out = paired(done, arms)
    lm = out["learning - mentor"]
    # Policy 100's two blocks are averaged before the analysis: (0.05 + 0.0) / 2.
    assert lm["per_policy"]["100"] == pytest.approx(0.025) and lm["policies"] == 6 and lm["n"] == 7
    assert lm["policy_mean"] == pytest.approx(sum(lm["per_policy"].values()) / 6)
    assert lm["t_ci"] == pytest.approx(t_test(list(lm["per_policy"].values()))["t_ci"])
    assert lm["sign_flip_p"] == 2 / 64  # every policy's difference is positive
    primary = {name: out[name]["t_p"] for name in blocks.PRIMARY}
    assert {name: out[name]["holm_p"] for name in blocks.PRIMARY} == pytest.approx(holm(primary))
    assert out["mentor - grpo"]["holm_p"] is None and "bootstrap_decision" in out["mentor - grpo"]


def test_one_policy_is_too_few_for_a_decision_whatever_the_bootstrap_says():
    # The case: --blocks 1 --grpo-seeds 1 printed "mentor - grpo +0.040 [+0.040, +0.040] ... win".
    done, arms = blocks_of({0: [(0.10, 0.12, 0.14, 0.2, 0.15)]})
    out = paired(done, arms)
    assert out["mentor - grpo"]["decision"] == "too_few_policies"
    assert out["mentor - grpo"]["bootstrap_decision"] == "win"  # kept, as the secondary analysis
    assert "too_few_policies" in blocks.table({"paired": out, "harm": harm(done, arms)})


def test_harm_counts_the_policies_where_a_hinted_arm_ends_below_grpo():
    done, arms = blocks_of({0: [(0.3, 0.1, 0.2, 0.4, 0.3), (0.3, 0.5, 0.2, 0.4, 0.3)], 1: [(0.1, 0.2, 0.3, 0.0, 0.1)]})
    assert harm(done, arms) == {
        "static_hints": {"policies_below_grpo": 0, "policies": 2, "below": []},  # policy 0: (0.1 + 0.5) / 2 = 0.3
        "mentor": {"policies_below_grpo": 1, "policies": 2, "below": [0]},
        "learning": {"policies_below_grpo": 1, "policies": 2, "below": [1]},
        "two_draws": {"policies_below_grpo": 0, "policies": 2, "below": []}}
    assert {"static_hints - grpo", "mentor - grpo", "learning - grpo", "two_draws - grpo"} <= set(blocks.COMPARISONS)
    assert harm(done, ["mentor", "learning"]) == {}  # no grpo arm: nothing to compare with
