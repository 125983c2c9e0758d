r"""Issue 56 item 1: TRL's math datasets on a real GRPOTrainer. NuminaMath-TIR's shape (`problem`, a worked
`solution` ending in \boxed{}, `messages`; no `answer`) with TRL's own `accuracy_reward`, which reads `solution` as
the gold answer, beside a format reward: the mentor takes the answer from the solution's last box."""

from datasets import Dataset
from trl.rewards import accuracy_reward

from mentor import Mentor
from mentor.leakage import check_leak
from mentor.tasks import get_task
from mentor.traces import TraceStore
from tiny_grpo import make_trainer

PROBLEMS = [  # (problem, worked solution): each step a line, the answer boxed at the end, as NuminaMath-TIR writes
    ("What is 21 times 25?", "Write 21 as 20 + 1.\nThen 20 * 25 = 500 and 1 * 25 = 25.\n"
                             "So the product is 500 + 25 = $\\boxed{525}$."),
    ("What is 13 plus 29?", "Add the tens: 10 + 20 = 30.\nAdd the units: 3 + 9 = 12.\n"
                            "So the sum is 30 + 12 = $\\boxed{42}$."),
]


def numina_shaped() -> Dataset:
    return Dataset.from_list([{"problem": p, "solution": s, "prompt": [{"role": "user", "content": p}],
                               "messages": [{"role": "user", "content": p}, {"role": "assistant", "content": s}]}
                              for p, s in PROBLEMS])


def format_reward(completions, **kwargs):
    """Pays every completion that is an assistant message, as a format reward pays well-formed answers."""
    return [1.0 if c[0]["role"] == "assistant" else 0.0 for c in completions]


def test_a_numina_shaped_dataset_collapses_under_success_reward_and_gets_right_tier_hints(tmp_path, capsys):
    trainer = make_trainer(tmp_path, [accuracy_reward, format_reward], dataset=numina_shaped(), max_steps=2)
    Mentor.from_config({"success_reward": "accuracy_reward"}).attach(trainer)
    said = capsys.readouterr().err
    assert "mentor references: no `answer` column: the answer is read from `solution` (its last \\boxed{})" in said
    assert ("mentor references: accuracy_reward reads `solution` as the gold answer; the mentor reads it as a worked "
            "solution") in said and "columns: {solution: YOUR_COLUMN}" in said
    assert "format_reward reads" not in said  # it reads no reference column
    trainer.train()
    first, second = trainer.state.log_history[:2]
    assert first["reward"] == 1.0  # the format reward pays every row, accuracy none: the total hides the collapse
    assert first["mentor/collapse_rate_before"] == 1.0 and second["mentor/collapse_rate_before"] == 1.0
    records = list(TraceStore(tmp_path, readonly=True))
    task = get_task("math")
    answers = {p: s.rsplit("boxed{", 1)[1].split("}")[0] for p, s in PROBLEMS}
    assert {r["reference"]["answer"] for r in records} == set(answers.values())  # each from its solution's box
    by_round = {}
    for r in records:
        assert r["hint"] and answers[r["prompt"].strip()] not in r["hint"], r["hint"]
        assert not check_leak(r["hint"], r["reference"], task, problem=r["prompt"]).leaked
        by_round.setdefault(r["step"], []).append(r)
    # Step 0: a first hint, tier 1. Step 1: the same problems again, escalated to tier 2, the solution's first step.
    assert {r["tier"] for r in by_round[0]} == {1}
    assert {r["tier"] for r in by_round[1]} == {2}
    assert all("Start like this: " in r["hint"] for r in by_round[1])
    assert first["mentor/escalation_exhausted"] == second["mentor/escalation_exhausted"] == 0


def test_an_escalation_with_nothing_new_is_counted(tmp_path):
    """Answers and no worked solution: the second step's hints are tier 1 again, and the metric counts both."""
    rows = [{"prompt": [{"role": "user", "content": p}], "solution": s.rsplit("boxed{", 1)[1].split("}")[0]}
            for p, s in PROBLEMS]
    trainer = make_trainer(tmp_path, [accuracy_reward, format_reward], dataset=Dataset.from_list(rows), max_steps=2)
    Mentor.from_config({"success_reward": "accuracy_reward"}).attach(trainer)
    trainer.train()
    first, second = trainer.state.log_history[:2]
    assert (first["mentor/interventions"], second["mentor/interventions"]) == (2, 2)
    assert (first["mentor/escalation_exhausted"], second["mentor/escalation_exhausted"]) == (0, 2)
    assert {r["tier"] for r in TraceStore(tmp_path, readonly=True)} == {1}


def test_a_solution_that_is_only_an_answer_is_read_as_the_answer_not_a_worked_solution(tmp_path, capsys):
    """TRL's convention (`solution: "525"`, no `answer`): no "reference step 1 of 1", no "Start like this: 525"."""
    import json

    from mentor.cli import main

    rows = [{"problem_id": f"p{i}", "task": "math", "prompt": "What is 21 times 25?", "reference": reference,
             "attempts": [{"completion": "It is \\boxed{505}", "reward": 0.0}] * 2,
             "previous_hints": [{"tier": 1, "hint": "Multiply carefully."}]}
            for i, reference in enumerate([{"solution": "525"}, {"solution": "$525$"},
                                           {"answer": "525", "solution": "525"}])]
    failures, out = tmp_path / "failures.jsonl", tmp_path / "out.jsonl"
    failures.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["diagnose", str(failures), "-o", str(out)]) == 0, capsys.readouterr().err
    for written in map(json.loads, out.read_text().splitlines()):
        assert "reference step" not in written["diagnosis"]["root_cause"], written["diagnosis"]
        assert written["tier"] == 1 and "Start like this" not in written["hint"] and "525" not in written["hint"]
