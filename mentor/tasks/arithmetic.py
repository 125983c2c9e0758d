"""The arithmetic lab's task: fixed-width addition, `Q: 123+456=? A:` answered `0579`."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from mentor.tasks.base import Task, usable
from mentor.types import Attempt, Diagnosis, FailedGroup, LeakVerdict

COLUMNS = ("thousands", "hundreds", "tens", "units")  # answer digit positions, left to right
WIDTH = len(COLUMNS)
HINT_MARKER = "Hint: "
ANSWER_MARKER = " A:"
_ANSWER_RE = re.compile(r"\s*(\d{4})(?!\d)")


# --------------------------------------------------------------------------------------------------
# Formats: the prompt, the answer, the hint placements, and scoring. The lab builds its data with them.
# --------------------------------------------------------------------------------------------------
def format_prompt(a: int, b: int) -> str:
    return f"Q: {a:03d}+{b:03d}=?{ANSWER_MARKER}"


def format_answer(a: int, b: int) -> str:
    return f"{a + b:04d}"


def hint_prompt(prompt: str, hint_text: str) -> str:
    r"""The single place that formats a prompt-placement hint: a `Hint: ...` line before the question,
    `Q: 123+456=? A:` + `05` -> `Hint: 05\nQ: 123+456=? A:`. Putting the hint first keeps the question and
    the answer at the same relative positions as without a hint, so the arithmetic the policy learned is
    undisturbed and the hint only adds information."""
    hint_text = " ".join(hint_text.split())
    if not hint_text:
        return prompt
    return f"{HINT_MARKER}{hint_text}\n{prompt}"


def remove_hint(prompt: str) -> str:
    """Inverse of `hint_prompt`."""
    if prompt.startswith(HINT_MARKER) and "\n" in prompt:
        return prompt.split("\n", 1)[1]
    return prompt


def partial_answer_hint(answer: str, k: int) -> str:
    """Hint text giving the first `k` answer digits (the lab's partial-solution hint), e.g. `05`."""
    if not 0 <= k < len(answer):
        raise ValueError(f"a partial answer gives 0..{len(answer) - 1} digits, not {k} (that would be the whole answer)")
    return answer[:k]


def prefix_prompt(prompt: str, digits: str) -> str:
    """Prefix placement: the text the policy continues when the response starts with `digits`
    (`Q: 123+456=? A:` + `05` -> `Q: 123+456=? A: 05`)."""
    return f"{prompt} {digits}" if digits else prompt


def extract_answer(completion: str) -> str | None:
    """The 4-digit answer at the start of a completion (leading whitespace allowed), else None."""
    m = _ANSWER_RE.match(completion)
    return m.group(1) if m else None


def reward(completion: str, answer: str) -> float:
    """1.0 when the completion starts with the right 4 digits, else 0.0."""
    return 1.0 if extract_answer(completion) == answer else 0.0


# --------------------------------------------------------------------------------------------------
# The task adapter.
# --------------------------------------------------------------------------------------------------
def carries_into(a: int, b: int) -> list[int]:
    """Carry (0 or 1) into each answer column, left to right."""
    carry, into = 0, []
    for p in range(WIDTH):  # p = 0 is the units column
        into.append(carry)
        carry = (a // 10**p % 10 + b // 10**p % 10 + carry) >= 10
    return [int(c) for c in reversed(into)]


class ArithmeticTask(Task):
    """Fixed-width addition. Reference: `answer` (4 zero-padded digits) and `operands` ([a, b]).

    Args:
        prefix_digits: answer digits a tier-3 hint reveals (the partial solution); None (the default) lets the
            composer choose them from the diagnosis. Never the whole answer.
    """

    name = "arithmetic"
    reference_fields = ("answer", "operands")
    optional_reference_fields = ()
    score_fields = ("answer",)  # the reward compares the answer; the operands serve the mentor's diagnosis
    taxonomy = {
        "no_answer": "the completion does not start with a 4-digit answer",
        "missed_carry": "a column's digit is right except for the carry coming into it",
        "wrong_thousands": "the thousands digit (the carry out of the hundreds) is wrong",
        "wrong_hundreds": "the hundreds digit is wrong for another reason than a dropped carry",
        "wrong_tens": "the tens digit is wrong for another reason than a dropped carry",
        "wrong_units": "the units digit is wrong",
    }

    def __init__(self, prefix_digits: int | None = None):
        if prefix_digits is not None and not 1 <= prefix_digits < WIDTH:
            raise ValueError(f"prefix_digits must be between 1 and {WIDTH - 1}, got {prefix_digits}")
        self.prefix_digits_fixed = prefix_digits

    def hinted_prompt(self, prompt: str, hint: str) -> str:
        return hint_prompt(prompt, hint)

    def response_prefix(self, hint: str) -> str:
        return " " + hint.strip()  # the lab's answers start with a space: ` 0579`

    def score(self, completion: str, reference: dict[str, Any]) -> float:
        return reward(completion, str(reference["answer"])) if usable(reference.get("answer")) else 0.0

    def feedback(self, completion: str, reference: dict[str, Any]) -> dict[str, Any]:
        answer, (a, b) = str(reference["answer"]), reference["operands"]
        got = extract_answer(completion)
        if got is None:
            return {"extracted_answer": None, "correct": False, "wrong_columns": [], "dropped_carry_columns": [],
                    "format_problems": ["no 4-digit answer at the start of the completion"]}
        carry = carries_into(a, b)
        wrong = [i for i in range(WIDTH) if got[i] != answer[i]]
        dropped = [i for i in wrong if carry[i] and int(got[i]) == (int(answer[i]) - 1) % 10]
        return {"extracted_answer": got, "correct": got == answer, "format_problems": [],
                "wrong_columns": [COLUMNS[i] for i in wrong], "dropped_carry_columns": [COLUMNS[i] for i in dropped]}

    def classify(self, attempt: Attempt, reference: dict[str, Any]) -> str:
        fb = attempt.feedback or self.feedback(attempt.completion, reference)
        if fb["extracted_answer"] is None:
            return "no_answer"
        if fb["dropped_carry_columns"]:
            return "missed_carry"
        return f"wrong_{fb['wrong_columns'][0]}" if fb["wrong_columns"] else "wrong_units"

    def analyse(self, group: FailedGroup, classes: list[str]) -> tuple[str, int | None]:
        a, b = group.reference["operands"]
        wrong = Counter(col for att in group.attempts for col in (att.feedback or {}).get("wrong_columns", []))
        n = len(group.attempts)
        if not wrong:
            return f"{classes.count('no_answer')} of {n} attempts give no 4-digit answer: the format is lost.", None
        # Ties go to the leftmost (most significant) wrong column: the rule by which the classifier names an
        # attempt's leftmost wrong column and the analyst node's majority class prefers the earlier taxonomy
        # entry, so the root cause names the column of a `wrong_<column>` error class; a wrong higher digit is
        # also what the lab's hints (the answer's leading digits) address first.
        column, count = max(wrong.items(), key=lambda kv: (kv[1], -COLUMNS.index(kv[0])))
        i = COLUMNS.index(column)
        digits = f"{a // 10**(WIDTH - 1 - i) % 10} + {b // 10**(WIDTH - 1 - i) % 10}" if i > 0 else "the carry"
        carry = carries_into(a, b)[i]
        why = (f"{count} of {n} attempts get the {column} digit wrong: the {column} column ({digits}"
               f"{' plus a carry of 1' if carry else ''}) is not added correctly")
        if classes.count("missed_carry") * 2 >= n:
            why += "; most attempts drop the carry coming into a column"
        # The procedure runs right to left: step 1 is the units column, step 4 the thousands.
        first_step = min(WIDTH - COLUMNS.index(col) for col in wrong)
        return why + ".", first_step

    def choose_tier(self, group: FailedGroup, diagnosis: Diagnosis) -> int:
        # The lab's policy reads no words: only a partial solution (tier 3) changes what it can do.
        return 3

    def compose(self, group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
        a, b = group.reference["operands"]
        if tier == 1:
            return "Add column by column from the right; a column that reaches 10 carries 1 to the next column."
        if tier == 2:
            return f"Add the hundreds digits {a // 100 % 10} and {b // 100 % 10}, plus any carry from the tens."
        digits = self.prefix_length(group) - (1 if feedback else 0)
        return partial_answer_hint(str(group.reference["answer"]), max(1, digits))

    def prefix_length(self, group: FailedGroup) -> int:
        """Answer digits to reveal: enough to cover the columns most attempts get wrong, and one more digit than
        any earlier hint of this problem; never all of them.

        With `prefix` placement and `train_prefix`, the revealed digits are trained after the unhinted prompt,
        so revealing exactly the columns the policy gets wrong is what teaches it those columns.
        """
        if self.prefix_digits_fixed is not None:
            return self.prefix_digits_fixed
        reach = sorted(max((COLUMNS.index(c) + 1 for c in (att.feedback or {}).get("wrong_columns", [])), default=1)
                       for att in group.attempts)
        k = reach[(3 * len(reach)) // 4] if reach else 1  # covers three attempts in four
        earlier = [len(h["hint"]) for h in group.previous_hints if str(h.get("hint", "")).isdigit()]
        if earlier:
            k = max(k, max(earlier) + 1)
        return min(k, WIDTH - 1)

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict:
        answer = str(reference["answer"])
        numbers = (re.sub(r"[ ,]", "", n) for n in re.findall(r"\d[\d ,]*\d|\d", hint))
        # Compared as digit strings, not int(): a hint of 15,000 digits would raise past Python's 4,300-digit limit.
        if any(n.lstrip("0") == answer.lstrip("0") for n in numbers):
            return LeakVerdict(True, ["whole_answer"], f"the hint contains the whole answer {answer}")
        return LeakVerdict(False)

