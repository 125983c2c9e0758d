"""The checker: the detectors over every form of the answer, the solution overlap, then the task's own detector."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

from mentor.leakage.context import answer_context, normalise_hint
from mentor.leakage.fold import fold_for_detectors
from mentor.leakage.literals import Hit, expressions, literals
from mentor.leakage.number_words import UNIT_WORDS, word_numbers
from mentor.leakage.overlap import DEFAULT_MIN_RUN, solution_overlap
from mentor.leakage.statements import stated_answers
from mentor.leakage.symbolic import problem_states_answer, symbolic_leak
from mentor.mathtext.answer import STOP_WORDS, YES_NO, Answer, analyse_answer, stems
from mentor.mathtext.ascii import compact, to_ascii_math
from mentor.types import LeakVerdict, listed

DETECTORS = ("answer_digits", "answer_words", "answer_math_equiv", "answer_verbatim", "answer_text", "solution_overlap",
             "task_error", "hint_too_long")  # described in docs/leakage.md, which a test keeps in step
DEFAULT_MAX_FRACTION = 0.5
class TaskLeakCheck(Protocol):
    """What the checker needs of a task adapter (`mentor.tasks.base.Task`): its own leak detectors."""

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict: ...


MAX_HINT_CHARS = 4000  # a longer "hint" is a solution, not a hint: flagged as `hint_too_long`


def _standalone(t: str, h: Hit) -> bool:
    """Whether a number stands alone (`is 2.`, `get 2 at the end`), not inside a larger expression or word
    (`2^n`, `1/x`, `x^2`, `2n`, `2 * 3`)."""
    if h.kind != "answer_digits":
        return True
    before, after, spaced = t[:h.start].rstrip()[-1:], t[h.end:h.end + 1], t[h.end:].lstrip()[:1]
    return before not in ("^", "/", "*") and not (after.isalnum() or after and after in "_+-/*^(=<>") \
        and not (spaced and spaced in "/*^(=<>")


def _short(v: Fraction) -> bool:
    return v.denominator == 1 and abs(v) < 10


def _answer_hits(t: str, ans: Answer, operands: set[Fraction], problem: str, problem_compact: str) -> dict[str, str]:
    """Detector name -> evidence, for one form of the answer, in the normalised hint `t`."""
    found: dict[str, str] = {}
    if ans.values or ans.approx is not None:
        targets = set(ans.values) | {-v for v in ans.values if v.denominator == 1 and abs(v) >= 10}
        targets |= {v * 100 for v in ans.values} if ans.percent else set()  # `25` for 25%, as the reward pays
        hits = literals(t) + [Hit(v, s, e, "answer_words", t[s:e]) for v, s, e in word_numbers(t)]
        hits += expressions(t, operands)
        for h in hits:
            if h.kind in found or (h.start > 0 and t[h.start - 1] == "_"):
                continue
            if h.kind == "answer_math_equiv" and problem and compact(h.text) in problem_compact:
                continue  # the problem's own expression, restated
            exact = h.value in targets
            approx = (h.precision is not None and h.value != 0 and _significant(h.text) >= 3 and any(
                abs(float(h.value) - float(x)) <= 10 ** -h.precision for x in
                ([ans.approx] if ans.approx is not None else [v for v in ans.values if v.denominator != 1]))) 
            if not (exact or approx):
                continue
            if exact and _short(h.value) and not (answer_context(t, h.start, h.end) and _standalone(t, h)):
                continue
            if h.kind == "answer_math_equiv" and operands and h.value in operands:
                continue
            found[h.kind] = f"'{h.text.strip()}' in the hint equals the answer {ans.text}"
    if ans.symbolic:
        literal_only = bool(problem) and problem_states_answer(problem, ans.text)
        cand = symbolic_leak(t, ans, literal_only)
        if cand:
            found["answer_math_equiv"] = f"'{cand}' in the hint is equivalent to the answer {ans.text}"
    if ans.text and not ans.phrase and len(compact(ans.text)) >= 4 and not re.fullmatch(r"[-\d.,/ ]+", ans.text):
        if _verbatim(ans.text).search(t):
            found["answer_verbatim"] = f"the hint contains the answer {ans.text} as written"
    if ans.phrase:
        words = " ".join(stems(t))
        content = [w for w in ans.phrase.split() if w not in STOP_WORDS]
        word = ans.phrase.split()[0] if ans.phrase.split()[0] in YES_NO and len(ans.phrase.split()) <= 2 else \
            content[0] if len(set(content)) == 1 else None  # one word: `no`, `Monday`, `even`
        if word:
            for m in re.finditer(rf"\b{re.escape(word)}s?\b", t, re.I):
                if answer_context(t, m.start(), m.end()) and not _an_option(t, m.start(), m.end()):
                    found["answer_text"] = f"the hint states the answer '{ans.text}'"
                    break
        elif len([w for w in ans.phrase.split() if w not in STOP_WORDS and w not in UNIT_WORDS]) >= 2 \
                and f" {ans.phrase} " in f" {words} ":
            found["answer_text"] = f"the hint quotes the answer '{ans.text}'"
    return found


def _an_option(t: str, start: int, end: int) -> bool:
    """Whether the word at t[start:end] is one of options the hint lists (`even or odd`, `yes or no`), not stated."""
    return t[end:end + 4].lower() == " or " or t[max(0, start - 4):start].lower() == " or "


@lru_cache(maxsize=1024)
def _verbatim(answer: str) -> re.Pattern:
    """The answer as written, spaces anywhere, not glued to a preceding letter or digit."""
    return re.compile(r"(?<![A-Za-z0-9])" + r"\s*".join(map(re.escape, re.sub(r"\s+", "", to_ascii_math(answer)))), re.I)


def _significant(text: str) -> int:
    return len(re.sub(r"^[0.]+", "", re.sub(r"[^\d.]", "", text)).replace(".", ""))


def check_leak(hint: str, reference: dict[str, Any], task: TaskLeakCheck | None = None, *, problem: str | None = None,
               min_run: int = DEFAULT_MIN_RUN, max_fraction: float = DEFAULT_MAX_FRACTION) -> LeakVerdict:
    """Whether `hint` reveals the answer or the worked solution of a problem.

    Args:
        hint: the hint draft.
        reference: the problem's reference: `answer` (any string or number), optional `answer_aliases`
            (other forms of the answer), optional `solution` (worked solution, steps on separate lines),
            optional `operands` (numbers of the problem whose combinations are not leaks).
        task: the task adapter (`mentor.tasks.get_task(name)`), whose `leak_check` runs after the generic
            detectors, on the hint and then on each answer it states (see `_task_verdict`); None: the generic
            detectors alone.
        problem: the problem text (default: `reference["problem"]`, else None). When given, expressions
            copied from it are restatements, not leaks; pass the failed group's prompt.
        min_run: words in a verbatim run that counts as copied from the solution (default 12).
        max_fraction: fraction of the solution's words that may be copied in such runs (default 0.5).

    Returns:
        LeakVerdict with `leaked`, the names of the detectors that fired, and a reason naming the evidence.
    """
    if isinstance(task, str):  # the name, as before the adapter was passed: every hint would fail closed
        raise TypeError(f"check_leak: task must be the task adapter (mentor.tasks.get_task({task!r})) or None, "
                        f"not its name")
    hint = str(hint or "")
    if len(hint) > MAX_HINT_CHARS:  # fail closed rather than check only part of it
        return LeakVerdict(True, ["hint_too_long"], f"the hint has {len(hint)} characters, more than "
                                                    f"{MAX_HINT_CHARS}: a hint must be short")
    hint = fold_for_detectors(hint)  # every detector, the task's too, reads the folded text
    found: dict[str, str] = {}
    t = normalise_hint(hint)
    operands = set()
    for x in reference.get("operands") or []:
        try:
            operands.add(Fraction(str(x)))
        except (ValueError, TypeError):
            pass
    problem = str(problem if problem is not None else reference.get("problem") or "")[:MAX_HINT_CHARS]
    problem_compact = compact(problem) if problem else ""
    forms = [reference.get("answer")] + listed(reference.get("answer_aliases"))
    for form in forms:
        if form is None or str(form).strip() == "":
            continue
        for k, v in _answer_hits(t, analyse_answer(fold_for_detectors(str(form))), operands, problem, problem_compact).items():
            found.setdefault(k, v)
    solution = reference.get("solution")
    if isinstance(solution, str) and solution.strip():
        frac, final = solution_overlap(hint, solution, min_run)
        if frac >= max_fraction or final:
            found["solution_overlap"] = (f"the hint copies {frac:.0%} of the reference solution verbatim"
                                         + (", including its final step" if final else ""))
    verdict = LeakVerdict(bool(found), list(found), "; ".join(f"{k}: {v}" for k, v in found.items()))
    task_verdict = _task_verdict(hint, reference, task, each_statement=not verdict.leaked)
    if task_verdict is not None and task_verdict.leaked:
        for d in task_verdict.detectors or ["task"]:
            if d not in verdict.detectors:
                verdict.detectors.append(d)
        verdict.leaked = True
        verdict.reason = "; ".join(r for r in (verdict.reason, task_verdict.reason) if r)
    return verdict


def _task_verdict(hint: str, reference: dict[str, Any], task: TaskLeakCheck | None,
                  each_statement: bool) -> LeakVerdict | None:
    r"""The task's verdict on the hint and, when that passes and `each_statement`, on each answer the hint states
    (`stated_answers`), boxed alone: a task detector that reads only the first statements, or one line of each,
    still sees them all. The statements' total length is at most the hint's, so the cost stays bounded."""
    if task is None:
        return None
    try:
        verdict = task.leak_check(hint, reference)
        for stated in stated_answers(hint) if each_statement and not verdict.leaked else ():
            verdict = task.leak_check(f"\\boxed{{{stated}}}", reference)
            if verdict.leaked:
                break
        return verdict
    except Exception as exc:  # a broken detector must not let a hint through
        name = getattr(task, "name", type(task).__name__)
        return LeakVerdict(True, ["task_error"], f"task '{name}' leak_check raised {type(exc).__name__}: {exc}")
