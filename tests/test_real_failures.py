"""The easy-arithmetic generator and the chat policy's failures writer (`mentor failures --source policy`)."""

from __future__ import annotations

import json

import pytest

from mentor.cli import main
from mentor.data.easy_arithmetic import CHAT_MATH_COLUMNS, FAMILIES, make_rows, products
from mentor.data.policy_failures import TIERS, policy_failure_rows, reference_with_tiers
from mentor.leakage import check_leak
from mentor.tasks import get_task
from mentor.types import FailedGroup


@pytest.mark.parametrize("family", FAMILIES)
def test_rows_are_seeded_distinct_and_solved_by_their_solution(family):
    rows = make_rows(family, 12, seed=3)
    assert rows == make_rows(family, 12, seed=3) and rows != make_rows(family, 12, seed=4)
    assert len({r["problem_id"] for r in rows}) == 12
    math = get_task("math")
    for r in rows:
        a, b = r["operands"]
        assert int(r["answer"]) == (a * b if family == "mul" else a + b)
        assert r["prompt"][0]["role"] == "user" and "\\boxed{...}" in r["prompt"][0]["content"]
        # the worked solution's last step states the answer, and the task's verifier accepts it boxed
        assert r["solution"].splitlines()[-1].endswith(f"= {r['answer']}.")
        assert math.score(f"\\boxed{{{r['answer']}}}", r) == 1.0


def test_products_are_the_mul_family_at_3_x_2_digits_with_the_chat_math_columns():
    # One generator for multiplication: the real-model config's products are mul rows, less `operands` (which would
    # make the mentor infer the arithmetic task) and the library tiers.
    rows, mul = products(8, seed=1), make_rows("mul", 8, seed=1, digits=(3, 2))
    assert rows == [{c: r[c] for c in CHAT_MATH_COLUMNS} for r in mul] and tuple(rows[0]) == CHAT_MATH_COLUMNS
    for r in mul:
        a, b = r["operands"]
        assert 100 < a < 1000 and 10 < b < 100 and int(r["answer"]) == a * b
        steps = r["solution"].splitlines()  # the 2-digit multiplier is split, and each part multiplies a
        assert steps[0] == f"Split {b} into {b - b % 10} + {b % 10}."
        assert steps[1] == f"{a} * {b - b % 10} = {a * (b - b % 10)}."
        assert steps[-1].endswith(f"= {r['answer']}.") and get_task("math").score(f"\\boxed{{{r['answer']}}}", r) == 1.0
        assert r["knowledge"].startswith("To multiply a 3-digit number by a 2-digit number, split the 2-digit number")
    with pytest.raises(ValueError, match="only the mul family takes other operand sizes"):
        make_rows("sum", 2, digits=(3, 2))
    with pytest.raises(ValueError, match="the first at least 2"):
        make_rows("mul", 2, digits=(1, 1))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_tier_present_and_passes_the_leak_check(family):
    for r in make_rows(family, 8, seed=0):
        problem = r["prompt"][0]["content"]
        reference, leaked = reference_with_tiers(r, problem)
        assert leaked == [] and reference["concepts"] == [r["knowledge"]]  # the rules mentor's tier 1
        for tier in TIERS:
            assert reference[tier] and not check_leak(reference[tier], reference, get_task("math"), problem=problem).leaked
        # the partial solution is leading steps of the worked one, never its last
        steps = r["solution"].splitlines()
        assert reference["partial"].startswith(steps[0]) and steps[-1] not in reference["partial"]


def test_a_leaking_tier_is_dropped_and_counted(tmp_path):
    rows = make_rows("sum", 3, seed=0)
    rows[1] = {**rows[1], "plan": f"Add them: the total is {rows[1]['answer']}."}  # states the answer
    reference, leaked = reference_with_tiers(rows[1], rows[1]["prompt"][0]["content"])
    assert leaked == ["plan"] and "plan" not in reference and reference["knowledge"] and reference["partial"]

    # the lab policy writes digits only, so every group collapses; `--all` is not needed to keep them
    kept, counts = policy_failure_rows("lab", rows, samples=2, max_new_tokens=6, seed=0)
    assert counts["problems"] == 3 and counts["kept"] == counts["collapsed"] == len(kept)
    assert counts["leaked_plan"] == sum(r["problem_id"] == rows[1]["problem_id"] for r in kept)
    for row in kept:
        group = FailedGroup.from_dict(row)  # a valid `mentor eval` / `mentor diagnose` row
        assert group.task == "math" and len(group.attempts) == 2
        assert all(a.reward == 0.0 for a in group.attempts)
        assert ("plan" in group.reference) == (row["problem_id"] != rows[1]["problem_id"])


def test_command_writes_the_file_and_prints_the_counts(tmp_path, capsys):
    out = tmp_path / "f.jsonl"
    main(["failures", "--source", "policy", "-o", str(out), "--policy", "lab", "--family", "word", "--n", "2",
          "--samples", "2", "--max-new-tokens", "6", "--all"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(set(TIERS) <= set(r["reference"]) for r in rows)
    assert "of 2 groups collapsed; wrote 2 groups" in capsys.readouterr().out
    assert main(["failures", "--source", "policy", "-o", str(out), "--n", "0"]) == 2  # refused, as before
