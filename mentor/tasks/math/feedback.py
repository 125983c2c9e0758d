"""The verifier's feedback on one attempt: its answer, format problems, arithmetic slips and where it goes wrong."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mentor.mathtext.answer import analyse_answer
from mentor.mathtext.cost import expression_cost
from mentor.mathtext.steps import split_steps
from mentor.tasks.base import completion_text
from mentor.tasks.math.extract import answer_and_extraction, boxed_contents
from mentor.tasks.math.score import MAX_COMPLETION_CHARS
from mentor.tasks.math.worked_steps import arithmetic_slips, numbers_in, reference_results

MAX_FEEDBACK_CHARS = 20_000  # feedback reads the worked steps from the start, up to this length
MAX_FEEDBACK_STEPS = 200


def verifier_feedback(completion: str, reference: dict[str, Any],
                      score: Callable[[str, dict[str, Any]], float]) -> dict[str, Any]:
    """Extracted answer, format problems, correctness (by `score(text, reference)`, the task's score), arithmetic
    slips and where the attempt goes wrong.

    Returns:
        `extracted_answer` (str or None), `extraction` (boxed, hash, phrase, last_number or None),
        `format_problems` (no_answer, no_boxed, truncated, multiple_answers), `correct` (bool),
        `partial` (some parts of a multi-part answer right), `steps` (number of steps),
        `arithmetic_slips` ([{step, text}]), `first_wrong_step` (1-based step of the attempt, or None),
        `wrong_step_text`, `reached_reference_steps` (reference steps whose new numbers the attempt
        reaches), `diverges_at_reference_step` (first reference step it does not reach, or None) and
        `answer_too_costly` (the final answer is too costly to evaluate, e.g. `((9!)!)!`: scored as not equal).
    """
    text = completion_text(completion)
    tail = text[-MAX_COMPLETION_CHARS:]
    got, how = answer_and_extraction(tail)
    problems = []
    boxed = boxed_contents(tail)
    last_box = None  # the last `\boxed{`: a box with no `}` after it exists if this one has none
    for last_box in re.finditer(r"\\boxed\s*\{", tail):
        pass
    unclosed_box = last_box is not None and "}" not in tail[last_box.end():]
    ends_mid_sentence = re.search(r"[A-Za-z,;:(\[{=+\-*/]\s*$", text)
    if unclosed_box or how in (None, "last_number") and ends_mid_sentence:
        problems.append("truncated")
    if got is None:
        problems.append("no_answer")
    elif how != "boxed":
        problems.append("no_boxed")
    if len(set(boxed)) > 1:
        problems.append("multiple_answers")
    correct = got is not None and score(tail, reference) == 1.0
    fb: dict[str, Any] = {"extracted_answer": got, "extraction": how, "format_problems": problems,
                          "correct": correct, "partial": False,
                          "answer_too_costly": got is not None and not correct and expression_cost(got) is None}
    ans = analyse_answer(str(reference["answer"]))
    if got is not None and not correct and len(set(ans.values)) > 1:
        fb["partial"] = bool(numbers_in(got) & set(ans.values))
    steps = split_steps(text[:MAX_FEEDBACK_CHARS])[:MAX_FEEDBACK_STEPS]
    slips = [{"step": i + 1, "text": s} for i, st in enumerate(steps) for s in arithmetic_slips(st[:2000])]
    fb.update(steps=len(steps), arithmetic_slips=slips, first_wrong_step=None, wrong_step_text=None,
              reached_reference_steps=[], diverges_at_reference_step=None)
    solution = reference.get("solution")
    if isinstance(solution, str) and solution.strip() and not correct:
        key, known = reference_results(solution)
        mine = numbers_in(text[:MAX_FEEDBACK_CHARS])
        reached = [j + 1 for j, k in enumerate(key) if k and k & mine]
        missed = [j + 1 for j, k in enumerate(key) if k and not k & mine]
        fb["reached_reference_steps"] = reached
        fb["diverges_at_reference_step"] = missed[0] if missed else None
        for i, st in enumerate(steps):  # first attempt step whose results the reference never has
            results = {n for n in numbers_in(st.split("=")[-1]) if n > 10 or n.denominator != 1} if "=" in st else set()
            if results and not results & known:
                fb["first_wrong_step"], fb["wrong_step_text"] = i + 1, st[:300]
                break
    if slips:
        fb["first_wrong_step"] = slips[0]["step"]
        fb["wrong_step_text"] = steps[slips[0]["step"] - 1][:300]
    return fb
