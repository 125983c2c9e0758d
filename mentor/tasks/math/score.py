"""The verifier's score: a completion's final answer against the reference `answer` and its aliases."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from mentor.mathtext.answer import STOP_WORDS, YES_NO, Answer, analyse_answer, stems
from mentor.mathtext.ascii import compact
from mentor.mathtext.cost import expression_cost, safe_expression
from mentor.mathtext.forms import (
    HEDGE_WORDS,
    answer_body,
    answer_parts,
    answer_values,
    is_tuple,
    lists_options,
    unnamed,
)
from mentor.mathtext.measures import same_measures
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


_NEGATIONS = {"no", "not", "none", "never", "cannot", "impossible", "nor"}


def _text_match(got: str, answer: str) -> bool:
    """Word-level match for non-numeric answers: yes/no by the first word, without its opposite; one word exactly
    (`Monday`, `even`); phrases by containment, with the same negation. A choice word (`or`, `either`, `maybe`)
    that the answer lacks is a hedge (`Yes or No`, `even or odd`)."""
    e = [w for w in stems(got) if w not in _STOP]
    a = [w for w in stems(answer) if w not in _STOP]
    if not e or not a or HEDGE_WORDS & set(word_list(got)) - set(word_list(answer)):
        return False
    if a[0] in YES_NO:
        return (e[0] == a[0] or (a[0] == "no" and e[0] in ("none", "impossible"))) and ({"yes", "no"} - {a[0]}).isdisjoint(e)
    if len(set(a)) == 1:
        return set(e) == set(a)
    if _NEGATIONS & set(e) != _NEGATIONS & set(a):
        return False
    return set(a) <= set(e) or (len(e) >= 2 and set(e) <= set(a))


def _same_number(got: Fraction, got_percent: bool, ans: Answer) -> bool:
    """One value against a one-value answer; a percentage matches its number or its fraction (`25%`: 25 or 0.25)."""
    want = ans.values[0]
    if got_percent == ans.percent:
        return got == want
    return got in (want, want * 100) if ans.percent else want in (got, got * 100)


_INFINITY = {"oo": math.inf, "+oo": math.inf, "-oo": -math.inf}


def _items(body: str) -> list | None:
    """The values of a point's, tuple's or interval's items (`(-oo, 5]`: [-inf, 5]); None if one is not a number."""
    items = []
    for part in answer_parts(body[1:-1]):
        v = _INFINITY.get(part.replace(" ", ""))
        v = expression_value(part, allow_float=True) if v is None else v
        if v is None:
            return None
        items.append(v)
    return items


def _same_items(got: str, answer: str) -> bool | None:
    """A point, tuple or interval against the answer's: the same brackets and the same items in order. None when
    either has an item that is not a number, or `got` is not bracketed (math-verify decides)."""
    if not is_tuple(got):
        return None
    g, a = _items(got), _items(answer)
    if g is None or a is None:
        return None
    return (got[0], got[-1]) == (answer[0], answer[-1]) and len(g) == len(a) and all(
        x == y or close_enough(x, y) for x, y in zip(g, a))


def _fast_equal(got: str, answer: str) -> bool | None:
    """Whether an extracted answer equals the reference answer, decided without sympy when possible:
    words for non-numeric answers, exact values for numbers, values at fixed points for expressions; a hedge
    (`mentor.mathtext.forms.lists_options`) is never equal; measures (`5 ft 3 in`, `4 cm by 6 cm`) by
    `mentor.mathtext.measures.same_measures`, when either side is one. None when undecided (math-verify decides
    then)."""
    measures = same_measures(got, answer)  # before math-verify, which reads only the first measure of each
    if measures is not None:
        return measures
    ans = analyse_answer(answer)
    if ans.phrase and not ans.values and not ans.symbolic:
        return _text_match(got, answer)
    if lists_options(got, answer):
        return False
    g = answer_body(got)
    if ans.ordered:
        return _same_items(g, answer_body(answer)) if "\\{" not in got + answer else None  # sets: math-verify
    if ans.symbolic and re.fullmatch(r"\(?[A-Z]\)?", ans.symbolic.strip()):  # a choice: `(C)`, `\\text{C}`
        return compact(g).strip("()") == compact(ans.symbolic).strip("()")
    if ans.values:
        read = answer_values(g)
        if read is None:
            return None
        values, percent = read
        if len(ans.values) == 1:
            return len(values) == 1 and _same_number(values[0], percent, ans)
        if "=" in answer_body(answer):
            return None  # named parts (`x=6, y=5`): names and values together, which math-verify compares
        same = set(values) == set(ans.values)  # in any order; a value repeated in the answer may be given once
        return same and (sorted(values) == sorted(ans.values) or len(values) == len(set(ans.values)))
    if ans.samples is not None:
        got_vals = at_points(unnamed(g), ans.symbols)
        return None if got_vals is None else all(close_enough(x, y) for x, y in zip(ans.samples, got_vals))
    if ans.symbolic and compact(g) == compact(ans.symbolic):
        return True
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
    trl = _trl_accuracy(got, forms[0]) if how == "boxed" else None
    if trl is not None:  # TRL's verdict on a boxed answer stands: its own math-verify reading pays `42|43` for 42
        return float(trl == 1.0 or any(_equal(got, f) for f in forms[1:]))
    return float(any(_equal(got, f) for f in forms))
