"""Issue 56 item 2: the tier a record gives is the tier of the text given. Through `mentor diagnose` with earlier
hints: a math reference with no worked solution has only tier-1 text, so an escalation records tier 1, not 2 or 3."""

import json

from mentor.cli import main

PROMPT = "What is 21 times 25? Put the final answer in \\boxed{}."
CONCEPT = "Split one factor into tens and units and multiply each part."
WRONG = [{"completion": "21*25 = 505. \\boxed{505}", "reward": 0.0},
         {"completion": "It is \\boxed{500}", "reward": 0.0}]
SOLUTION = "Write 21 as 20 + 1.\nThen 20 * 25 = 500.\nAnd 1 * 25 = 25.\nSo the product is 500 + 25 = 525."


def group(pid, reference, previous):
    return {"problem_id": pid, "task": "math", "prompt": PROMPT, "reference": {"answer": "525", **reference},
            "attempts": WRONG, "previous_hints": [{"tier": t, "hint": h} for t, h in previous]}


def diagnose(tmp_path, rows, capsys) -> dict[str, dict]:
    failures, out = tmp_path / "failures.jsonl", tmp_path / "out.jsonl"
    failures.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["diagnose", str(failures), "-o", str(out)]) == 0, capsys.readouterr().err
    return {r["problem_id"]: r for r in map(json.loads, out.read_text().splitlines())}


def test_an_escalation_with_nothing_of_a_higher_tier_records_the_tier_it_gives(tmp_path, capsys):
    concept_only = {"concepts": [CONCEPT]}
    written = diagnose(tmp_path, [
        group("first", concept_only, []),
        group("after_tier_1", concept_only, [(1, f"Key idea: {CONCEPT}")]),
        group("after_tier_2", concept_only, [(1, f"Key idea: {CONCEPT}"), (2, "an earlier mentor's hint")]),
        group("worked", {**concept_only, "solution": SOLUTION}, [(1, f"Key idea: {CONCEPT}")]),
        group("worked_later", {**concept_only, "solution": SOLUTION}, [(2, "Start like this: ...")]),
    ], capsys)
    tiers = {pid: (r["tier"], r["hint"]) for pid, r in written.items()}
    for pid in ("first", "after_tier_1", "after_tier_2"):  # the same text each time, and so the same tier
        assert tiers[pid] == (1, f"Key idea: {CONCEPT}"), (pid, tiers[pid])
    assert tiers["worked"][0] == 2 and "Start like this: Write 21 as 20 + 1." in tiers["worked"][1]
    assert tiers["worked_later"][0] == 3 and "A correct solution starts like this: (1)" in tiers["worked_later"][1]
    assert not any("525" in hint for _, hint in tiers.values())
