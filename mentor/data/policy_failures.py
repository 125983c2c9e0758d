"""`mentor failures --source policy -o FILE --policy POLICY --family sum`: a chat policy's own failures on an
easy arithmetic family (`mentor.data.easy_arithmetic`), as a `mentor diagnose` / `mentor eval` input file.

The policy samples G attempts per problem exactly as `mentor eval` samples (its chat template, batches and seed);
the collapsed groups are kept (`--all`: every group). Each reference holds three static hint libraries, Scaf-GRPO's
tiers, chosen per config by `columns: {hint: FIELD}`: `knowledge` (the method, no number of this problem), `plan`
(the steps without their results) and `partial` (the longest run of the worked solution's first steps, never its
last, that passes the leakage check). Each tier goes through the math task's leakage check with the problem as
context; a tier that leaks is left out of the reference (that library withholds the group) and counted. The
command is mentor/failures_command.py.
"""

from __future__ import annotations

from collections import Counter

from mentor.leakage import check_leak
from mentor.mathtext.steps import split_steps
from mentor.tasks import get_task

TIERS = ("knowledge", "plan", "partial")


def leaks(text: str, reference: dict, problem: str) -> bool:
    return check_leak(text, reference, get_task("math"), problem=problem).leaked


def partial_solution(reference: dict, problem: str) -> str | None:
    """The longest leading run of the worked solution's steps, never its last, that passes the leakage check; None
    when even the first step leaks."""
    steps = split_steps(reference["solution"])
    shown = (" ".join(steps[:k]) for k in range(len(steps) - 1, 0, -1))
    return next((text for text in shown if not leaks(text, reference, problem)), None)


def reference_with_tiers(row: dict, problem: str) -> tuple[dict, list[str]]:
    """The row's math reference with each tier that passes the leakage check, and the names of those that leak."""
    # `concepts` is the math task's own tier-1 field: the mentor's rules hint from the knowledge the library gives
    reference = {"answer": row["answer"], "solution": row["solution"], "operands": row["operands"],
                 "concepts": [row["knowledge"]]}
    drafts = {"knowledge": row["knowledge"], "plan": row["plan"], "partial": partial_solution(reference, problem)}
    leaked = [name for name, text in drafts.items() if text is None or leaks(text, reference, problem)]
    return {**reference, **{k: v for k, v in drafts.items() if k not in leaked}}, leaked


def policy_failure_rows(policy_name: str, rows: list[dict], samples: int = 8, temperature: float = 1.0,
                 max_new_tokens: int = 48, seed: int = 0, keep_all: bool = False) -> tuple[list[dict], Counter]:
    """The failure rows of `rows` under the policy (loaded as `mentor eval --policy` loads it), and the counts:
    `problems`, `collapsed`, `kept` and `leaked_<tier>` per tier left out."""
    from mentor.evaluation.inputs import group_inputs
    from mentor.evaluation.policy import load_policy
    from mentor.evaluation.sampling import sample
    from mentor.types import FailedGroup

    policy, task = load_policy(policy_name), get_task("math")
    problems = [r["prompt"][0]["content"] for r in rows]
    refs = [reference_with_tiers(r, p) for r, p in zip(rows, problems)]
    inputs = [group_inputs(policy, FailedGroup(r["problem_id"], "math", p, ref, []), None, "prompt")
              for r, p, (ref, _) in zip(rows, problems, refs)]
    outs = sample(policy, inputs, samples, temperature, max_new_tokens, seed, desc="sampling attempts")
    counts, kept = Counter(problems=len(rows)), []
    for row, problem, (reference, leaked), group in zip(rows, problems, refs, outs):
        attempts = [{"completion": text, "reward": task.score(text, reference)} for text, _ in group]
        collapsed = not any(a["reward"] for a in attempts)
        counts["collapsed"] += collapsed
        if keep_all or collapsed:
            counts["kept"] += 1
            counts.update(f"leaked_{name}" for name in leaked)
            kept.append({"problem_id": row["problem_id"], "task": "math", "prompt": problem,
                         "reference": reference, "attempts": attempts})
    return kept, counts

