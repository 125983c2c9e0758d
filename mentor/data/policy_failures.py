"""`mentor failures --source policy -o FILE --policy POLICY --family sum`: a chat policy's own failures on an
easy arithmetic family (`mentor.data.easy_arithmetic`), or with `--family humaneval` on HumanEval's problems (the
code task, scored in the sandbox by `code_reward`), as a `mentor diagnose` / `mentor eval` input file.

The policy samples G attempts per problem exactly as `mentor eval` samples (its chat template, batches and seed);
the collapsed groups are kept (`--all`: every group). An arithmetic reference holds three static hint libraries, Scaf-GRPO's
tiers, chosen per config by `columns: {hint: FIELD}`: `knowledge` (the method, no number of this problem), `plan`
(the steps without their results) and `partial` (the longest run of the worked solution's first steps, never its
last, that passes the leakage check). Each tier goes through the math task's leakage check with the problem as
context; a tier that leaks is left out of the reference (that library withholds the group) and counted. The
command is mentor/cli/failures.py.
"""

from __future__ import annotations

from collections import Counter

from mentor.leakage import check_leak
from mentor.mathtext.steps import split_steps
from mentor.tasks import get_task
from mentor.types import InputError

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


def sampled_groups(policy_name: str, task: str, groups: list[tuple[str, str, dict]], samples: int,
                   temperature: float, max_new_tokens: int, seed: int, engine: str = "hf") -> list[list[str]]:
    """`samples` responses to each (problem_id, prompt, reference), from the policy loaded as `mentor eval --policy`
    loads it, through its chat template, batched and seeded as `mentor eval` samples (through `engine`)."""
    from mentor.evaluation.inputs import group_inputs
    from mentor.evaluation.policy import load_policy
    from mentor.evaluation.sampling import sample
    from mentor.types import FailedGroup

    policy = load_policy(policy_name, engine)
    inputs = [group_inputs(policy, FailedGroup(pid, task, prompt, ref, []), None, "prompt")
              for pid, prompt, ref in groups]
    outs = sample(policy, inputs, samples, temperature, max_new_tokens, seed, desc="sampling attempts")
    return [[text for text, _ in group] for group in outs]


def collapsed_rows(task: str, groups: list[tuple[str, str, dict]], texts: list[list[str]],
                   rewards: list[list[float]], keep_all: bool) -> tuple[list[dict], list[int], Counter]:
    """The failure rows of the groups with no reward (every group with `keep_all`), the indices of those kept, and
    the counts `problems`, `collapsed`, `kept`, `responses` and `passed` (responses with reward > 0: pass@1's terms)."""
    counts, kept, index = Counter(problems=len(groups)), [], []
    for i, ((pid, prompt, reference), group, scores) in enumerate(zip(groups, texts, rewards)):
        collapsed = not any(scores)
        counts["collapsed"] += collapsed
        counts["responses"] += len(scores)
        counts["passed"] += sum(s > 0 for s in scores)
        if keep_all or collapsed:
            counts["kept"] += 1
            index.append(i)
            kept.append({"problem_id": pid, "task": task, "prompt": prompt, "reference": reference,
                         "attempts": [{"completion": t, "reward": r} for t, r in zip(group, scores)]})
    return kept, index, counts


def policy_failure_rows(policy_name: str, rows: list[dict], samples: int = 8, temperature: float = 1.0,
                 max_new_tokens: int = 48, seed: int = 0, keep_all: bool = False, engine: str = "hf"
                 ) -> tuple[list[dict], Counter]:
    """The failure rows of `rows` under the policy (loaded as `mentor eval --policy` loads it), and the counts:
    `problems`, `collapsed`, `kept` and `leaked_<tier>` per tier left out."""
    task = get_task("math")
    problems = [r["prompt"][0]["content"] for r in rows]
    refs = [reference_with_tiers(r, p) for r, p in zip(rows, problems)]
    groups = [(r["problem_id"], p, ref) for r, p, (ref, _) in zip(rows, problems, refs)]
    texts = sampled_groups(policy_name, "math", groups, samples, temperature, max_new_tokens, seed, engine)
    rewards = [[task.score(t, ref) for t in group] for group, (_, _, ref) in zip(texts, groups)]
    kept, index, counts = collapsed_rows("math", groups, texts, rewards, keep_all)
    counts.update(f"leaked_{name}" for i in index for name in refs[i][1])
    return kept, counts


def humaneval_failure_rows(policy_name: str, n: int = 164, samples: int = 8, temperature: float = 1.0,
                           max_new_tokens: int = 384, seed: int = 0, keep_all: bool = False, engine: str = "hf",
                           problem_ids: list[str] | None = None) -> tuple[list[dict], Counter]:
    """The failure rows of HumanEval's first `n` problems (file order), or of those among them that `problem_ids`
    names (InputError for an id not among them), under the policy, each asked as
    `mentor.data.humaneval.chat_prompt` through its chat template; every response scored in the sandbox by
    `code_reward`. The reference holds the problem's test, entry point, code prompt, canonical solution and task id
    (the code task's fields), and `feedback`: feedback_hint of the first attempt (a static library of execution
    feedback); counts as `collapsed_rows`."""
    from mentor.data.humaneval import chat_prompt, load_humaneval
    from mentor.rewards import code_reward

    problems = load_humaneval(n)
    if problem_ids is not None:
        unknown = sorted(set(problem_ids) - {p["task_id"] for p in problems})
        if unknown:
            raise InputError(f"--problems: {unknown[:5]} not among HumanEval's first {n} problems (ids such as "
                             f"{problems[0]['task_id']!r})")
        problems = [p for p in problems if p["task_id"] in set(problem_ids)]
    groups = [(p["task_id"], chat_prompt(p["prompt"]), dict(p)) for p in problems]
    texts = sampled_groups(policy_name, "code", groups, samples, temperature, max_new_tokens, seed, engine)
    flat = [(t, ref) for group, (_, _, ref) in zip(texts, groups) for t in group]
    scores = code_reward([t for t, _ in flat], [r["test"] for _, r in flat], [r["entry_point"] for _, r in flat],
                         prompt=[r["prompt"] for _, r in flat])
    rewards = [scores[i * samples:(i + 1) * samples] for i in range(len(groups))]
    kept, _, counts = collapsed_rows("code", groups, texts, rewards, keep_all)
    task = get_task("code")
    for row in kept:  # the `feedback` row's library: what the sandbox said of the first attempt (cached: no rerun)
        row["reference"]["feedback"] = feedback_hint(task.feedback(row["attempts"][0]["completion"], row["reference"]))
    return kept, counts


FEEDBACK_CHARS = 400


def feedback_hint(feedback: dict) -> str:
    """Execution feedback as a hint, with no diagnosis: the sandbox's message on one failed attempt (its first
    failing test and what it returned or raised), cut to FEEDBACK_CHARS."""
    return f"Your previous attempt failed: {str(feedback.get('message') or feedback.get('kind'))[:FEEDBACK_CHARS]}."
