"""The answer, analysed once per distinct answer string: what the leakage detectors and the math task compare
against."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from mentor.mathtext.ascii import compact, to_ascii_math
from mentor.mathtext.cost import MAX_EXPR_CHARS
from mentor.mathtext.forms import answer_body, answer_parts, answer_values, is_tuple, unnamed
from mentor.mathtext.measures import measure
from mentor.mathtext.steps import word_list
from mentor.mathtext.value import MATH_FN, POINTS, at_points, expression_value, variables

YES_NO = {"yes", "no"}
STOP_WORDS = {"the", "a", "an", "is", "are", "of", "to", "and", "or", "for", "all", "it", "in", "there", "such", "that"}


@dataclass(frozen=True)
class Answer:
    """What the detectors compare against.

    Attributes:
        text: the answer as given.
        values: exact values of the answer (one per part for multi-part answers); a percentage's is its fraction.
        percent: the answer is one percentage (`25%`): its number (25) is paid and leaks too.
        ordered: the answer is a point, tuple or interval (`(0,1]`): its values are its items, in order.
        approx: float value of a numeric but irrational answer (`sqrt(2)`, `9pi`), else None.
        short: the short-answer rule applies (every value a single-digit integer, or a single letter or constant).
        symbolic: ASCII form of a symbolic or irrational answer (`2^(n-1)`, `sqrt(3)/3`, `oo`), else None.
        symbols: variable names of the symbolic answer.
        samples: values of the symbolic answer at fixed points (`POINTS`), None if not computable here.
        phrase: normalised words of a non-numeric answer (`no integer solutions`), else None.
    """

    text: str
    values: tuple[Fraction, ...] = ()
    percent: bool = False
    ordered: bool = False
    approx: float | None = None
    short: bool = False
    symbolic: str | None = None
    symbols: frozenset[str] = frozenset()
    samples: tuple | None = None
    phrase: str | None = None


def _short(values: tuple[Fraction, ...]) -> bool:
    return all(x.denominator == 1 and abs(x) < 10 for x in values)


@lru_cache(maxsize=4096)
def analyse_answer(answer: str) -> Answer:
    """Parse `answer` once (cached): its numeric values, symbolic form or words (`mentor.mathtext.forms` reads the
    written forms: units, currency, separators, parts)."""
    text = str(answer).strip()
    body = answer_body(text)  # the value's text: units, currency, separators read, as a completion's are
    raw = to_ascii_math(re.sub(r"^\\boxed\s*\{(.*)\}$", r"\1", text)).strip().rstrip(".")  # the words' text
    measures = measure(text)  # `5 ft 3 in`, `4 cm by 6 cm`: the reward compares them as measures
    if measures is not None and all(isinstance(v, Fraction) for v, _ in measures.items):
        values = tuple(v for v, _ in measures.items)
        return Answer(text, values, short=_short(values))
    read = answer_values(body)
    if read is not None:  # "42", "$1,200", "25%", "376 and 625", "x=6, y=5", "x=±1, ±2", "f(x)=0 or f(x)=1"
        values, percent = read
        return Answer(text, values, percent=percent, short=_short(values))
    parts = answer_parts(body)
    if any(is_tuple(p) for p in parts):  # "(0,1]", "(2, 3)", "(x=8, y=2), (x=2, y=8)": items in order
        items = [answer_values(p[1:-1] if is_tuple(p) else p) for p in parts]
        values = tuple(v for item in items if item for v in item[0]) if None not in items else ()
        return Answer(text, values, ordered=True, short=bool(values) and _short(values))
    approx = expression_value(body, allow_float=True)
    constant = len(re.sub(r"pi|oo", "c", compact(body)).lstrip("-")) == 1  # `pi`, `oo`, `-oo`, a letter
    if approx is not None:  # irrational number: sqrt(3)/3, 9pi
        return Answer(text, approx=float(approx), symbolic=body, samples=(approx,) * len(POINTS), short=constant)
    if re.fullmatch(r"[-+]?\s*oo", body):  # infinity: math-verify compares it
        return Answer(text, symbolic=body, short=True)
    symbolic = _symbolic(text, body)
    if symbolic is not None:
        return symbolic
    words = re.findall(r"[a-z]+", raw.lower())
    if re.search(r"\\[A-Za-z]", raw):  # LaTeX left over (matrices, `\\cup`): math, not words
        return Answer(text)
    if [w for w in words if w not in STOP_WORDS]:
        return Answer(text, phrase=" ".join(stems(raw)))
    return Answer(text)


def _symbolic(text: str, body: str) -> Answer | None:
    r"""The answer as an expression, read from `body` (`answer_body`: `(x+1)\text{ cm}` -> `(x+1)`) as a
    completion's is; None when it is no expression."""
    symbols = variables(body)
    if not symbols or len(body) > MAX_EXPR_CHARS:
        return None
    if not (re.search(r"[\d^/*()+\-=!]|" + MATH_FN, body) or len(body) == 1):
        return None
    expr = unnamed(body)  # `y = 2x + 1`: the expression is compared, its name is not
    samples = at_points(expr, variables(expr) or frozenset())
    if samples is not None:
        return Answer(text, symbolic=expr, symbols=variables(expr), samples=samples, short=len(compact(expr)) == 1)
    if re.search(r"[\d^/*()+=]", body) and len([w for w in re.findall(r"[a-z]+", body.lower()) if len(w) > 1]) <= 2:
        return Answer(text, symbolic=body, symbols=symbols, short=len(compact(body)) == 1)
    return None


def stems(text: str) -> list[str]:
    """Lower-case words with a plural `s` dropped (`solutions` -> `solution`)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in word_list(text)]
