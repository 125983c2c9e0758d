r"""Free-form math answers (CHAMP, GSM8K, MATH...): scoring, verifier feedback, error classes, and hints.

Scoring. The final answer is taken from the last `\boxed{}`, else `#### x`, else "the answer is x", else
the last number. It is compared with the reference `answer` (and `answer_aliases` when given):
1. without sympy where that decides it: exact values for numbers (`0.5` = `\frac{1}{2}`), values at fixed
   points for expressions (`\frac{2^n}{2}` = `2^(n-1)`), words for non-numeric answers (`No`,
   `No integer solutions`); this is fast and also right on CHAMP's plain-text answers (`2^(n-1)`,
   `sqrt(3)/3`), which math-verify's LaTeX parser reads differently;
2. else, for boxed answers, TRL's own `trl.rewards.accuracy_reward` (math-verify), our `answer` passed as
   its gold `solution` column;
3. else math-verify's parse/verify on the extracted answer.
Expressions that could stall sympy (exponent towers, huge factorials, powers and binomials: see
`mentor.mathtext.cost.expression_cost`) score 0 without reaching it, in any thread; feedback marks them
`answer_too_costly`. A row whose `answer` is None, NaN or blank scores 0, and `mentor.rewards.math_reward` gives it None.
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from functools import lru_cache
from typing import Any

from mentor.leakage import check_leak
from mentor.mathtext.answer import STOP_WORDS, analyse_answer
from mentor.mathtext.ascii import to_ascii_math
from mentor.mathtext.cost import expression_cost, safe_expression
from mentor.mathtext.steps import split_steps, word_list
from mentor.mathtext.value import at_points, close_enough, expression_value
from mentor.mathtext.verify import mv_equal, mv_parse
from mentor.tasks.base import Task, completion_text, usable
from mentor.types import Attempt, Diagnosis, FailedGroup

MAX_COMPLETION_CHARS = 6000  # scored from the end: the answer is there, and math-verify's cost stays bounded
MAX_FEEDBACK_CHARS = 20_000  # feedback reads the worked steps from the start, up to this length
MAX_FEEDBACK_STEPS = 200
_STOP = STOP_WORDS | {"text", "mathrm", "textbf", "final", "answer"}  # and the words of a boxed answer's markup


# --------------------------------------------------------------------------------------------------
# Extraction and scoring.
# --------------------------------------------------------------------------------------------------
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")


def boxed_contents(text: str) -> list[str]:
    r"""Contents of every `\boxed{...}` / `\fbox{...}` in `text` (balanced braces), in order; an
    unclosed one (a truncated completion) is skipped.

    Every brace is matched in one pass (a stack), so a run of unclosed boxes costs linear time; scanning on from
    each box to its closing brace was quadratic."""
    opens = [m.end() - 1 for m in _BOX.finditer(text)]  # the index of each box's `{`
    if not opens:
        return []
    closing, stack = {}, []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            closing[stack.pop()] = m.start()
    return [text[i + 1:closing[i]].strip() for i in opens if i in closing]


_HASH = re.compile(r"####\s*([^\n]+)")
# Possessive `\s*+`: with `\s*:?\s*`, a phrase followed by a run of newlines tried every split of the run (quadratic).
_PHRASE = re.compile(r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*+:?\s*+([^\n]+)", re.I)
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:\s*/\s*\d+)?")


def _clean(ans: str) -> str:
    r"""The answer without a leading math opener (`$`, `\(`, `\[`), a trailing closer and end punctuation.

    Written with str methods, not one regex: the pattern `(?:\$+|...)?\s*[.;,]?\s*$` tried every split of a run of
    spaces from every start, cubic in the run's length (3,000 spaces took 70 s)."""
    ans = ans.strip()
    ans = ans[2:] if ans.startswith(("\\(", "\\[")) else ans.lstrip("$")
    ans = ans.rstrip()
    ans = ans[:-1].rstrip() if ans.endswith((".", ";", ",")) else ans
    ans = ans[:-2] if ans.endswith(("\\)", "\\]")) else ans.rstrip("$")
    return ans.strip().rstrip(".").strip()


def answer_and_extraction(completion: str) -> tuple[str | None, str | None]:
    r"""(final answer, how it was found) of a completion: the last `\boxed{}` ("boxed"), else `#### x`
    ("hash"), else "the answer is x" ("phrase"), else the last number ("last_number"); (None, None)."""
    boxed = boxed_contents(completion)
    if boxed:
        return boxed[-1], "boxed"
    for pattern, how in ((_HASH, "hash"), (_PHRASE, "phrase")):
        found = pattern.findall(completion)
        if found and _clean(found[-1])[:200]:
            return _clean(found[-1])[:200], how
    numbers = _NUMBER.findall(completion)
    return (numbers[-1].replace(",", "").replace(" ", ""), "last_number") if numbers else (None, None)


def _gold_latex(answer: str) -> str:
    return answer if "$" in answer or "\\boxed" in answer else f"${answer}$"


def _text_match(got: str, answer: str) -> bool:
    """Word-level match for non-numeric answers: yes/no by the first word, phrases by containment."""
    e = [w for w in word_list(got) if w not in _STOP]
    a = [w for w in word_list(answer) if w not in _STOP]
    if not e or not a:
        return False
    if a[0] in ("yes", "no"):
        return e[0] == a[0] or (a[0] == "no" and e[0] in ("none", "impossible"))
    return set(a) <= set(e) or (len(e) >= 2 and set(e) <= set(a))


def _fast_equal(got: str, answer: str) -> bool | None:
    """Whether an extracted answer equals the reference answer, decided without sympy when possible:
    words for non-numeric answers, exact values for numbers, values at fixed points for expressions.
    None when undecided (math-verify decides then)."""
    ans = analyse_answer(answer)
    if ans.phrase and not ans.values and not ans.symbolic:
        return _text_match(got, answer)
    g = to_ascii_math(got).strip()
    if ans.values:
        if len(ans.values) == 1:
            v = expression_value(g.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", g) else g)
            return None if v is None else v == ans.values[0]
        parts = [expression_value(re.sub(r"^\(?[A-Za-z]\w*\s*=", "", p).strip(" ()"))
                 for p in re.split(r",|;|\band\b", g) if p.strip()]
        return None if not parts or None in parts else set(parts) == set(ans.values) and len(parts) == len(set(ans.values))
    if ans.samples is not None:
        got_vals = at_points(g, ans.symbols)
        return None if got_vals is None else all(close_enough(x, y) for x, y in zip(ans.samples, got_vals))
    return None


def _equal(got: str, answer: str) -> bool:
    """Whether an extracted answer equals the reference answer (`_fast_equal`, else math-verify)."""
    fast = _fast_equal(got, answer)
    if fast is not None:
        return fast
    return safe_expression(got) and mv_equal(mv_parse(_gold_latex(answer)), mv_parse(got))


def _trl_accuracy(got: str, answer: str) -> float | None:
    r"""TRL's accuracy_reward for one boxed answer against our answer; None when it cannot judge or either side is
    too costly. Only `\boxed{got}` is passed, not the whole completion, so that the screened text is all that
    math-verify parses."""
    if not safe_expression(got) or expression_cost(answer) is None:
        return None
    try:
        from trl.rewards import accuracy_reward

        return accuracy_reward([[{"role": "assistant", "content": f"\\boxed{{{got}}}"}]], [_gold_latex(answer)])[0]
    except Exception:
        return None


def score_answer(completion: str, reference: dict[str, Any]) -> float:
    r"""1.0 if the completion's final answer equals `reference["answer"]` (or one of
    `reference["answer_aliases"]`), else 0.0; 0.0 when the answer is None, NaN or blank (`usable`), which
    `\boxed{None}` or "the answer is nan" would otherwise match."""
    if not usable(reference.get("answer")):
        return 0.0
    text = completion_text(completion)[-MAX_COMPLETION_CHARS:]
    forms = [str(reference["answer"])] + [str(a) for a in reference.get("answer_aliases") or [] if usable(a)]
    got, how = answer_and_extraction(text)
    if got is None:
        return 0.0
    fast = _fast_equal(got, forms[0])  # decisive when the canonical answer can be evaluated here
    if fast is not None:
        return float(fast)
    if any(_fast_equal(got, f) for f in forms[1:]):
        return 1.0
    if how == "boxed" and _trl_accuracy(got, forms[0]) == 1.0:
        return 1.0
    return float(any(_equal(got, f) for f in forms))


# --------------------------------------------------------------------------------------------------
# Steps, numbers and arithmetic in a worked attempt.
# --------------------------------------------------------------------------------------------------
def numbers_in(text: str) -> set[Fraction]:
    """Numbers written in `text` (not subscripts such as the 1 of x_1)."""
    found = re.findall(r"(?<![\w.^])\d+(?:\.\d+)?(?!\w)", to_ascii_math(text))
    return {Fraction(m) for m in found if len(m) <= 1000}  # Python's int() refuses over 4300 digits


@lru_cache(maxsize=512)
def _reference_results(solution: str) -> tuple[tuple[frozenset[Fraction], ...], frozenset[Fraction]]:
    """The numbers each step of a worked `solution` introduces (its intermediate results: not seen in an
    earlier step, and above 10 or not whole), and all of them together. Cached: every attempt of a group
    is compared with the same solution."""
    seen: set[Fraction] = set()
    key = []
    for step in split_steps(solution):
        found = numbers_in(step)
        key.append(frozenset(n for n in found - seen if n > 10 or n.denominator != 1))
        seen |= found
    return tuple(key), frozenset().union(*key)


_EQ_SPAN = re.compile(r"[\d.+\-*/^() =]+")  # one character class: linear time on any input


def arithmetic_slips(step: str) -> list[str]:
    """Written calculations in `step` that are false (`7*8=54`, `70+99+70=249`); decimals are compared at
    the precision shown."""
    masked = re.sub(r"[A-Za-z_][\w]*(?:_\(?\w+\)?)?", lambda m: "§" * len(m.group()), to_ascii_math(step))
    slips = []
    for m in _EQ_SPAN.finditer(masked):
        if "=" not in m.group() or len(m.group()) > 200:
            continue
        sides = [s.strip() for s in m.group().split("=")]
        vals = [expression_value(s) for s in sides if s]
        if len(vals) < 2 or None in vals or not any(re.search(r"[-+*/^]", s[1:]) for s in sides if s):
            continue
        decimals = max((len(x.split(".")[1]) for s in sides for x in re.findall(r"\d+\.\d+", s)), default=None)
        tol = Fraction(1, 10 ** decimals) if decimals is not None else 0
        if any(abs(v - vals[0]) > tol for v in vals[1:]):
            slips.append(m.group().strip(" =."))
    return slips


# --------------------------------------------------------------------------------------------------
# Rules for hints.
# --------------------------------------------------------------------------------------------------
CONCEPTS = [  # (pattern in the reference solution, concept hint)
    (r"x_\(n\+1\)|a_\(n\+1\)|recurren|recursi", "Set up a recurrence: express the count (or term) for size n+1 in terms of smaller sizes."),
    (r"\bmod\b|modulo|≡|divisib|remainder", "Work modulo a well-chosen number: look at remainders and divisibility."),
    (r"induction", "Try induction: prove the statement for a small case, then show each case implies the next."),
    (r"AM-GM|≥2\*sqrt|>=2\*sqrt|arithmetic mean", "Use the AM-GM inequality, and check when equality holds."),
    (r"Cauchy", "Use the Cauchy-Schwarz inequality, and check when equality holds."),
    (r"pigeonhole", "Use the pigeonhole principle."),
    (r"Vieta|roots? of|factor", "Factor the expression, or use the relation between a polynomial's roots and coefficients."),
    (r"telescop|difference of", "Rewrite each term as a difference so that the sum telescopes."),
    (r"even|odd|parity", "Consider parity: what happens with even and odd values?"),
    (r"C\(|choose|binom", "Count with combinations: decide what is being chosen, and from how many."),
    (r"limit|converge|monoton|bounded", "Study monotonicity and bounds of the sequence to find its limit."),
    (r"prime", "Use prime factorisation and properties of primes."),
    (r"substitut|\bLet [a-z]=", "Introduce a substitution that simplifies the expression."),
]
_FORMAT_CLASSES = {"no_answer", "format_error", "truncated"}


class MathTask(Task):
    """Competition-style math with a final answer and, optionally, a worked solution.

    Reference: `answer` (required; LaTeX, plain text such as `2^(n-1)`, a number, or words such as `No`),
    `solution` (optional worked solution, one step per line), and, when present, `answer_aliases` (other
    accepted forms) and `concepts` (concept statements used for tier-1 hints).

    Args:
        tier3_fraction: most of the solution's words a tier-3 hint may show (default 0.4; the leakage
            checker flags 0.5 or more).
    """

    name = "math"
    reference_fields = ("answer",)
    optional_reference_fields = ("solution",)
    taxonomy = {
        "no_answer": "the completion never states a final answer",
        "truncated": "the completion stops mid-way (length limit) before giving an answer",
        "format_error": "the final answer is right but not in the form the reward expects (e.g. no \\boxed{})",
        "arithmetic_slip": "a written calculation is wrong (e.g. 7*8=54), which throws the answer off",
        "partial_answer": "some parts of a multi-part answer are right, others are wrong or missing",
        "wrong_method": "the attempt reaches none of the reference solution's key intermediate results: "
                        "a wrong approach or a missing idea",
        "wrong_final_answer": "the attempt follows the reference part of the way, then ends with a wrong answer",
    }

    def __init__(self, tier3_fraction: float = 0.4):
        self.tier3_fraction = tier3_fraction

    # --- training -------------------------------------------------------------------------------
    def score(self, completion: str, reference: dict[str, Any]) -> float:
        return score_answer(completion, reference)

    # --- verifier feedback ----------------------------------------------------------------------
    def feedback(self, completion: str, reference: dict[str, Any]) -> dict[str, Any]:
        """Extracted answer, format problems, correctness, arithmetic slips and where the attempt goes wrong.

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
        correct = got is not None and self.score(tail, reference) == 1.0
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
            key, known = _reference_results(solution)
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
        return hint if hint is not None else "Re-read the problem and set up the quantities it asks about before computing."

    def drafts(self, reference: dict[str, Any], diagnosis: Diagnosis, tier: int) -> list[str]:
        """Candidate hints, most helpful first; `compose` keeps the first that does not leak."""
        steps = split_steps(reference.get("solution") or "")
        lead = ""
        if diagnosis.error_class in _FORMAT_CLASSES:
            lead = ("Finish with one final answer written as \\boxed{...}"
                    + (", and keep the working short so it fits." if diagnosis.error_class == "truncated" else ".") + " ")
        concept = self.concept(reference)
        out = []
        if tier >= 3 and steps:
            for k in range(self._max_steps(steps, diagnosis), 0, -1):
                shown = " ".join(f"({i + 1}) {s}" for i, s in enumerate(steps[:k]))
                out.append(f"{lead}A correct solution starts like this: {shown} Continue from there.")
        if tier >= 2 and steps:
            first = re.split(r"(?<=[.;])\s", steps[0])[0]
            out.append(f"{lead}{concept} Start like this: {first}")
            masked = re.sub(r"\d+(?:\.\d+)?", "…", first)
            out.append(f"{lead}{concept} Start like this: {masked}")
        out.append(f"{lead}{concept}")
        return out

    def _max_steps(self, steps: list[str], diagnosis: Diagnosis) -> int:
        """Most leading steps a tier-3 hint shows: at most `tier3_fraction` of the words, never the last step,
        and up to the step where the attempts go wrong when that is known."""
        total = sum(len(word_list(s)) for s in steps) or 1
        k, used = 0, 0
        for s in steps[:-1]:
            used += len(word_list(s))
            if used / total > self.tier3_fraction:
                break
            k += 1
        if diagnosis.first_error_step:
            k = min(k, max(1, diagnosis.first_error_step))
        return max(k, 1 if len(steps) > 1 else 0)

    @staticmethod
    def concept(reference: dict[str, Any]) -> str:
        """The tier-1 hint: the problem's concept when the reference lists one, else one inferred from
        keywords of the solution, else a generic prompt to find the structure."""
        concepts = [c for c in reference.get("concepts") or [] if isinstance(c, str) and c.strip()]
        if concepts:
            return f"Key idea: {concepts[0].strip()}"
        solution = reference.get("solution") or ""
        for pattern, text in CONCEPTS:
            if re.search(pattern, solution, re.I):
                return text
        return ("Name the quantities the problem asks about and find a relation between them before "
                "computing anything.")
