"""`mentor eval --lookahead K`: the learning figure's splice, its update on a copy of the policy, and the command."""

import json
from pathlib import Path

import pytest

from mentor.cli import main
from mentor.config import MentorConfig
from mentor.evaluation.inputs import Inputs
from mentor.evaluation.lookahead import lookahead, split, targets, training_rows

CONFIGS = Path(__file__).resolve().parent.parent / "benchmarks" / "eval_configs"


def test_the_splice_follows_the_strategy_and_strip_hint():
    x = Inputs(plain=[1, 2], hinted=[9, 1, 2], prefix=[])
    responses = [[("a", [5]), ("b", [6]), ("c", [7]), ("d", [8])]]
    rewards = [[1.0, 0.0, 0.0, 0.0]]
    originals = [[[30], [31], [32], [33]]]
    mixed = MentorConfig.load({"strategy": "mixed", "mixed_share": 0.5, "strip_hint": True})
    rows = training_rows(mixed, [x], responses, rewards, originals, [0])
    # Two re-attempts in the first slots, after the unhinted prompt (strip_hint); the originals fill the rest.
    assert [(c, y) for c, y, _ in rows] == [([1, 2], [5]), ([1, 2], [6]), ([1, 2], [32]), ([1, 2], [33])]
    adv = [a for *_, a in rows]
    assert adv[0] > 0 > adv[1] and adv[1] == adv[2] == adv[3] and abs(sum(adv)) < 1e-9
    on_policy = MentorConfig.load({"strategy": "replace_group", "strip_hint": False})
    rows = training_rows(on_policy, [x], responses, rewards, originals, [0])
    assert [c for c, *_ in rows] == [[9, 1, 2]] * 4 and [y for _, y, _ in rows] == [[5], [6], [7], [8]]
    # A group still collapsed teaches nothing (no advantage).
    assert training_rows(mixed, [x], responses, [[0.0] * 4], originals, [0]) == []


def test_targets_are_the_distinct_correct_responses_of_any_row_on_held_out_groups():
    x = Inputs(plain=[1], hinted=[1], prefix=[])
    hinted = Inputs(plain=[1], hinted=[4, 1], prefix=[])
    inputs = {"none": [x, x], "lib": [hinted, hinted]}
    responses = {"none": [[("", [5])], [("", [6])]], "lib": [[("", [5])], [("", [6])]]}
    rewards = {"none": [[1.0], [1.0]], "lib": [[1.0], [1.0]]}
    train, held = split(2)
    assert (train, held) == ([0], [1])
    assert targets(inputs, responses, rewards, held) == [([1], [6])]  # group 1 only, once, after the plain prompt


@pytest.fixture(scope="module")
def composed_failures(tmp_path_factory):
    from mentor.lab import composed as lab
    from mentor.lab.composed_eval import composed_failure_rows
    from mentor.lab.data import generate_problems

    rows = composed_failure_rows(str(lab.COMMITTED_POLICY), generate_problems("hard", 40, seed=0, split="train", lab="composed"))
    path = tmp_path_factory.mktemp("lookahead") / "failures.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_training_on_the_targets_raises_them_and_leaves_the_policy_as_it_was(composed_failures):
    import torch

    from mentor.evaluation import load_policy
    from mentor.lab import composed as lab

    policy = load_policy(str(lab.COMMITTED_POLICY))
    before = [p.detach().clone() for p in policy.model.parameters()]
    _, rows = composed_failures
    pairs = [(policy.encode(r["prompt"]), policy.encode(" " + " ".join(r["reference"]["answer"]))) for r in rows[:8]]
    up = lookahead(policy, [(c, y, 1.0) for c, y in pairs], pairs, steps=3, lr=1e-3)
    down = lookahead(policy, [(c, y, -1.0) for c, y in pairs], pairs, steps=3, lr=1e-3)
    assert up > 0.05 and down < -0.05
    assert all(torch.equal(a, b) for a, b in zip(before, policy.model.parameters()))
    assert lookahead(policy, [], pairs, steps=3) == 0.0 and lookahead(policy, [], [], steps=3) is None


def test_the_command_reports_a_lookahead_per_row(composed_failures, tmp_path, capsys):
    path, _ = composed_failures
    policy = "mentor/lab/composed_policy"
    out = tmp_path / "r.json"
    assert main(["eval", str(path), "--policy", policy, "--max-new-tokens", "8", "--samples", "4", "--config",
                 f"step1={CONFIGS / 'composed_step1.yaml'}", "--config", f"mentor={CONFIGS / 'composed_mentor.yaml'}",
                 "--lookahead", "2", "--lookahead-lr", "1e-3", "-o", str(out), "--threads", "1"]) == 0
    report = json.loads(out.read_text())
    assert report["lookahead"]["steps"] == 2 and report["lookahead"]["lr"] == 1e-3
    assert report["lookahead"]["best"] in report["configs"]
    for name in ("none", "step1", "mentor"):
        row = report["configs"][name]
        assert row["lookahead"] is None or isinstance(row["lookahead"], float)
        assert 0 <= row["lookahead_train_groups"] <= (row["groups"] + 1) // 2
    assert "lookahead (2 steps" in capsys.readouterr().out
    assert main(["eval", str(path), "--policy", policy, "--lookahead", "-1", "-o", str(out)]) == 2
    # Without --lookahead the report is as before.
    assert main(["eval", str(path), "--policy", policy, "--max-new-tokens", "8", "--samples", "2", "-o", str(out),
                 "--threads", "1"]) == 0
    assert "lookahead" not in json.loads(out.read_text()) and "lookahead" not in json.loads(out.read_text())["configs"]["none"]
