"""The math task adapter: the verifier's score and feedback, and the four nodes' rules."""

from __future__ import annotations

from collections import Counter
from typing import Any

from mentor.leakage import check_leak
from mentor.mathtext.steps import split_steps
from mentor.tasks.base import Task, usable
from mentor.tasks.math.extract import answer_only, boxed_contents, stated_answers
from mentor.tasks.math.feedback import verifier_feedback
from mentor.tasks.math.hints import (
    FORMAT_HINT,
    FORMAT_HINT_TRUNCATED,
    concept_hint,
    format_hint,
    hint_drafts,
    tiered_drafts,
)
from mentor.tasks.math.score import score_answer
from mentor.tasks.math.taxonomy import TAXONOMY
from mentor.types import Attempt, Diagnosis, FailedGroup, LeakVerdict


class MathTask(Task):
    """Competition-style math with a final answer and, optionally, a worked solution.

    Reference: `answer` (required; LaTeX, plain text such as `2^(n-1)`, a number, or words such as `No`),
    and, when present, `solution` (a worked solution, one step per line), `answer_aliases` (other accepted
    forms) and `concepts` (concept statements; the first is the tier-1 hint). Without a concept, from `concepts`
    or the solution's keywords, a tier-1 hint is format-only (`format_only`).

    Args:
        tier3_fraction: most of the solution's words a tier-3 hint may show (default 0.4; the leakage
            checker flags 0.5 or more).
    """

    name = "math"
    reference_fields = ("answer",)
    optional_reference_fields = ("solution", "answer_aliases", "concepts")  # read when present: the run stores them
    stand_ins = {"answer": "solution"}  # TRL's math datasets: a worked solution ending in \boxed{answer}, no `answer`
    field_meanings = {"answer": "the gold answer",
                      "solution": "a worked solution whose steps tiers 2 and 3 show (or the answer, if it is only one)",
                      "concepts": "the concepts the tier-1 hint names", "answer_aliases": "other forms of the answer"}
    taxonomy = TAXONOMY
    concept = staticmethod(concept_hint)  # the tier-1 hint

    def __init__(self, tier3_fraction: float = 0.4):
        self.tier3_fraction = tier3_fraction

    def completed_reference(self, reference: dict[str, Any]) -> dict[str, Any]:
        r"""The reference as this task reads it. A `solution` that is only an answer (`525`, `$525$`: TRL's
        `accuracy_reward` reads the column so) is the answer, not a one-step worked solution; with no `answer`,
        the answer is the last `\boxed{}` of the worked `solution`.

        >>> task = MathTask()
        >>> task.completed_reference({"solution": "$525$"})
        {'answer': '525'}
        >>> task.completed_reference({"solution": "21 = 20 + 1, so 21 * 25 = 500 + 25 = \\boxed{525}."})["answer"]
        '525'
        """
        solution = reference.get("solution")
        if not isinstance(solution, str):
            return reference
        completed = dict(reference)
        alone = answer_only(solution)
        if alone is not None:
            del completed["solution"]
            if not usable(completed.get("answer")):
                completed["answer"] = alone
        elif not usable(completed.get("answer")) and (boxed := boxed_contents(solution)):
            completed["answer"] = boxed[-1]
        return completed

    # --- training -------------------------------------------------------------------------------
    def score(self, completion: str, reference: dict[str, Any]) -> float:
        return score_answer(completion, reference)

    # --- verifier feedback ----------------------------------------------------------------------
    def feedback(self, completion: str, reference: dict[str, Any]) -> dict[str, Any]:
        """Extracted answer, format problems, correctness, arithmetic slips and where the attempt goes wrong
        (`verifier_feedback`, judged by this task's `score`)."""
        return verifier_feedback(completion, reference, self.score)

    # --- the four nodes' rules --------------------------------------------------------------------
    def classify(self, attempt: Attempt, reference: dict[str, Any]) -> str:
        fb = attempt.feedback or self.feedback(attempt.completion, reference)
        if fb.get("correct"):
            return "format_error"  # right by math-verify, yet the trainer's reward gave it nothing
        if "truncated" in fb.get("format_problems", []):
            return "truncated"
        if fb.get("extracted_answer") is None:
            return "no_answer"
        if fb.get("arithmetic_slips"):
            return "arithmetic_slip"
        if fb.get("partial"):
            return "partial_answer"
        if fb.get("diverges_at_reference_step") is not None and not fb.get("reached_reference_steps"):
            return "wrong_method"
        return "wrong_final_answer"

    def analyse(self, group: FailedGroup, classes: list[str]) -> tuple[str, int | None]:
        """Root cause from the dominant error class, the attempts' wrong answers and where they stop matching
        the reference. The step returned is the reference solution's step (1-based) that most attempts never
        reach (the earliest on ties), or None when the reference has no worked solution or no clear point."""
        n = len(group.attempts)
        counts = Counter(classes)
        top = self.dominant_class(counts, default="wrong_final_answer")  # the analyst node's `error_class`
        k = counts[top]
        fbs = [a.feedback or self.feedback(a.completion, group.reference) for a in group.attempts]
        wrong = Counter(fb["extracted_answer"] for fb in fbs if fb.get("extracted_answer") is not None and not fb.get("correct"))
        diverge = Counter(fb["diverges_at_reference_step"] for fb in fbs if fb.get("diverges_at_reference_step"))
        first = min(s for s, c in diverge.items() if c == max(diverge.values())) if diverge else None
        parts = [f"{k} of {n} attempts: {self.taxonomy.get(top, top)}"]
        slips = [s for fb in fbs for s in fb.get("arithmetic_slips", [])]
        if top == "arithmetic_slip" and slips:
            parts.append(f"for example '{slips[0]['text']}' is false")
        if wrong:
            shown = ", ".join(f"{a!r} x{c}" if c > 1 else repr(a) for a, c in wrong.most_common(3))
            parts.append(f"wrong final answers: {shown}")
        steps = split_steps(group.reference.get("solution") or "")
        if first and steps:
            parts.append(f"{diverge[first]} of {n} attempts never reach the result of reference step {first} "
                         f"of {len(steps)}")
        return "; ".join(parts) + ".", first

    def choose_tier(self, group: FailedGroup, diagnosis: Diagnosis) -> int:
        """The escalated tier (`Task.choose_tier`), lowered to the highest whose text this reference can give
        without a leak, so that the recorded tier is the hint's: with no worked `solution`, every hint is tier 1."""
        wanted = super().choose_tier(group, diagnosis)
        for tier, draft in tiered_drafts(group.reference, diagnosis, wanted, self.tier3_fraction):
            if not check_leak(draft, group.reference, self, problem=group.prompt).leaked:
                return tier
        return 1

    def compose(self, group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
        """A hint at `tier` from the reference solution, never containing the answer: each draft is checked
        with `check_leak` and the next safer one is used when it leaks; after a leak `feedback`, the first
        passing draft is skipped too (when another passes). Drafts past the one used are not checked."""
        ref = group.reference
        passing = (d for d in self.drafts(ref, diagnosis, tier)
                   if not check_leak(d, ref, self, problem=group.prompt).leaked)
        hint = next(passing, None)
        if feedback:
            hint = next(passing, hint)
        return hint if hint is not None else format_hint(diagnosis)  # every draft leaked: the format alone

    def format_only(self, hint: str) -> bool:
        """Whether `hint` is the format-only hint, given when the reference says nothing of this problem."""
        return hint in (FORMAT_HINT, FORMAT_HINT_TRUNCATED)

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict:
        r"""`answer_paid`: the hint states (boxed, `#### x` or "the answer is x") an answer this task's reward pays, in
        whatever form: the net under the generic detectors for forms they do not read (a matrix with `0.5` for
        `\frac{1}{2}`, an interval)."""
        for stated in stated_answers(hint):
            if score_answer(f"\\boxed{{{stated}}}", reference) == 1.0:
                return LeakVerdict(True, ["answer_paid"], f"the hint states '{stated[:80]}', which the reward pays")
        return LeakVerdict(False)

    def drafts(self, reference: dict[str, Any], diagnosis: Diagnosis, tier: int) -> list[str]:
        """Candidate hints, most helpful first; `compose` keeps the first that does not leak."""
        return hint_drafts(reference, diagnosis, tier, self.tier3_fraction)
