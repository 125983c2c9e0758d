"""The verifier's score: a completion's final answer against the reference `answer` and its aliases."""

from __future__ import annotations

import re
from typing import Any

from mentor.mathtext.answer import STOP_WORDS, analyse_answer
from mentor.mathtext.ascii import to_ascii_math
from mentor.mathtext.cost import expression_cost, safe_expression
from mentor.mathtext.steps import word_list
from mentor.mathtext.value import at_points, close_enough, expression_value
from mentor.mathtext.verify import mv_equal, mv_parse
from mentor.tasks.base import completion_text, usable
from mentor.tasks.math.extract import answer_and_extraction
from mentor.types import listed

MAX_COMPLETION_CHARS = 6000  # scored from the end: the answer is there, and math-verify's cost stays bounded
_STOP = STOP_WORDS | {"text", "mathrm", "textbf", "final", "answer"}  # and the words of a boxed answer's markup


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
    forms = [str(reference["answer"])] + [str(a) for a in listed(reference.get("answer_aliases")) if usable(a)]
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
