r"""The composed-skills lab's task: a chain of one-digit operations, worked step by step.

`Q: 3*4-2+4=? A:` is worked left to right, modulo 5: step 1 is 3*4 = 2, step 2 is 2-2 = 0, step 3 is 0+4 = 4, and the
response writes every step, ` 2 0 4`. Each step is one *fact* (`x op y` for x, y in 0..4 and op in + - *), a skill of
the easy level (two-step chains); the hard level chains three. A hint reveals one step, in the prompt, as a mask of the
steps: `Hint: _ 0 _\nQ: 3*4-2+4=? A:` says step 2 is 0. The leakage rule caps every hint at one step and never the
last one (the final answer), for every arm alike.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from mentor.tasks.arithmetic import HINT_MARKER, hint_prompt
from mentor.tasks.base import Task, usable
from mentor.types import Attempt, Diagnosis, FailedGroup, LeakVerdict

OPS = "+-*"
BASE = 5  # values are the digits 0..4; 75 facts in all, few enough for a tiny policy to learn in minutes
MASK = "_"
_STEPS_RE = re.compile(r"\s*(\d(?: \d)*)(?![ \d])")


def apply(x: int, op: str, y: int) -> int:
    """One fact: `x op y` modulo `BASE`."""
    return {"+": x + y, "-": x - y, "*": x * y}[op] % BASE


def format_prompt(digits: list[int], ops: list[str]) -> str:
    """`Q: 3*7-4+9=? A:` for digits [3, 7, 4, 9] and ops ['*', '-', '+']."""
    expr = str(digits[0]) + "".join(f"{op}{d}" for op, d in zip(ops, digits[1:]))
    return f"Q: {expr}=? A:"


def steps_of(digits: list[int], ops: list[str], table: dict[tuple[int, str, int], int] | None = None) -> list[int]:
    """The running values, left to right; `table` overrides facts (a policy's mis-learned ones), else the truth."""
    value, out = digits[0], []
    for op, d in zip(ops, digits[1:]):
        value = (table or {}).get((value, op, d), apply(value, op, d))
        out.append(value)
    return out


def format_answer(steps: list[int]) -> str:
    """The steps as the response writes them, without its leading space: `1 7 6`."""
    return " ".join(map(str, steps))


def response(steps: list[int]) -> str:
    """The whole response that writes these steps, its leading space included: ` 1 7 6`."""
    return " " + format_answer(steps)


def step_hint(steps: list[int], k: int) -> str:
    """The hint revealing step `k` (1-based) only: `_ 7 _`."""
    if not 1 <= k <= len(steps):
        raise ValueError(f"step must be 1..{len(steps)}, got {k}")
    return " ".join(str(s) if i == k else MASK for i, s in enumerate(steps, 1))


def extract_steps(completion: str) -> list[int] | None:
    """The step digits at the start of a completion (`" 1 7 6"` -> [1, 7, 6]), else None. Linear in its length."""
    m = _STEPS_RE.match(completion[:64])
    return [int(c) for c in m.group(1).split(" ")] if m else None


def reward(completion: str, answer: str) -> float:
    """1.0 when the completion writes every step right (and nothing more on the line), else 0.0."""
    got = extract_steps(completion)
    return 1.0 if got is not None and format_answer(got) == " ".join(str(answer)) else 0.0


def revealed_steps(hint: str, width: int) -> list[int] | None:
    """Which steps (1-based) a hint of the mask format reveals, or None when the hint is not that format."""
    parts = " ".join(str(hint).split()).split(" ")
    if len(parts) != width or any(p != MASK and not (len(p) == 1 and p.isdigit()) for p in parts):
        return None
    return [i for i, p in enumerate(parts, 1) if p != MASK]


class ComposedTask(Task):
    """Step-by-step chains of one-digit facts. Reference: `answer` (the step digits, `176`), `digits` and `ops`."""

    name = "composed"
    reference_fields = ("answer", "digits", "ops")
    optional_reference_fields = ()
    score_fields = ("answer",)  # the reward reads the step digits only
    taxonomy = {
        "no_answer": "the completion does not start with one digit per step",
        "wrong_step_1": "the first wrong step is step 1",
        "wrong_step_2": "the first wrong step is step 2 (the steps before it are right)",
        "wrong_step_3": "the first wrong step is step 3 (the steps before it are right)",
    }

    def hinted_prompt(self, prompt: str, hint: str) -> str:
        return hint_prompt(prompt, hint)

    def score(self, completion: str, reference: dict[str, Any]) -> float:
        return reward(completion, str(reference["answer"])) if usable(reference.get("answer")) else 0.0

    def feedback(self, completion: str, reference: dict[str, Any]) -> dict[str, Any]:
        answer = [int(c) for c in str(reference["answer"])]
        got = extract_steps(completion)
        if got is None or len(got) != len(answer):
            return {"steps": got, "correct": False, "first_wrong_step": None,
                    "format_problems": [f"no {len(answer)} step digits at the start of the completion"]}
        wrong = [i for i, (g, a) in enumerate(zip(got, answer), 1) if g != a]
        return {"steps": got, "correct": not wrong, "first_wrong_step": wrong[0] if wrong else None,
                "format_problems": []}

    def classify(self, attempt: Attempt, reference: dict[str, Any]) -> str:
        fb = attempt.feedback or self.feedback(attempt.completion, reference)
        step = fb.get("first_wrong_step")
        return f"wrong_step_{min(step, 3)}" if step else "no_answer"

    def first_wrong(self, group: FailedGroup) -> int | None:
        """The step most attempts first get wrong (ties: the earliest), or None when no attempt has the format."""
        steps = Counter((att.feedback or self.feedback(att.completion, group.reference)).get("first_wrong_step")
                        for att in group.attempts)
        steps.pop(None, None)
        return max(steps, key=lambda s: (steps[s], -s)) if steps else None

    def analyse(self, group: FailedGroup, classes: list[str]) -> tuple[str, int | None]:
        step = self.first_wrong(group)
        n = len(group.attempts)
        if step is None:
            return f"{classes.count('no_answer')} of {n} attempts write no steps: the format is lost.", None
        digits, ops = group.reference["digits"], group.reference["ops"]
        count = sum(c == f"wrong_step_{step}" for c in classes)
        return (f"{count} of {n} attempts first go wrong at step {step} (the `{ops[step - 1]} {digits[step]}` step): "
                f"the policy has that fact wrong."), step

    def choose_tier(self, group: FailedGroup, diagnosis: Diagnosis) -> int:
        return 3  # the lab's policy reads only a step mask (a partial step)

    def compose(self, group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
        """Reveals the step the attempts first get wrong; the last step is the answer, so the one before it then."""
        answer = [int(c) for c in str(group.reference["answer"])]
        step = diagnosis.first_error_step or self.first_wrong(group) or 1
        return step_hint(answer, min(step, len(answer) - 1))

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict:
        """The lab's cap, the same for every arm: a hint is a step mask revealing exactly one step, never the last."""
        width = len(str(reference["answer"]))
        shown = revealed_steps(str(hint).removeprefix(HINT_MARKER), width)
        if shown is None:
            return LeakVerdict(True, ["step_cap"], f"the hint is not a mask of the {width} steps (such as "
                                                   f"{step_hint([0] * width, 1)!r})")
        if len(shown) != 1:
            return LeakVerdict(True, ["step_cap"], f"the hint reveals {len(shown)} steps; at most one is allowed")
        if shown[0] == width:
            return LeakVerdict(True, ["whole_answer"], "the hint reveals the last step, the final answer")
        return LeakVerdict(False)
