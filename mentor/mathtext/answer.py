"""The answer, analysed once per distinct answer string: what the leakage detectors and the math task compare
against."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from mentor.mathtext.ascii import compact, to_ascii_math
from mentor.mathtext.cost import MAX_EXPR_CHARS
from mentor.mathtext.steps import word_list
from mentor.mathtext.value import MATH_FN, POINTS, at_points, expression_value, variables

YES_NO = {"yes", "no"}
STOP_WORDS = {"the", "a", "an", "is", "are", "of", "to", "and", "or", "for", "all", "it", "in", "there", "such", "that"}


@dataclass(frozen=True)
class Answer:
    """What the detectors compare against.

    Attributes:
        text: the answer as given.
        values: exact values of the answer (one per part for multi-part answers).
        approx: float value of a numeric but irrational answer (`sqrt(2)`), else None.
        short: the short-answer rule applies (every value a single-digit integer, or a single letter).
        symbolic: ASCII form of a symbolic or irrational answer (`2^(n-1)`, `sqrt(3)/3`), else None.
        symbols: variable names of the symbolic answer.
        samples: values of the symbolic answer at fixed points (`POINTS`), None if not computable here.
        phrase: normalised words of a non-numeric answer (`no integer solutions`), else None.
    """

    text: str
    values: tuple[Fraction, ...] = ()
    approx: float | None = None
    short: bool = False
    symbolic: str | None = None
    symbols: frozenset[str] = frozenset()
    samples: tuple | None = None
    phrase: str | None = None


@lru_cache(maxsize=4096)
def analyse_answer(answer: str) -> Answer:
    """Parse `answer` once (cached): its numeric values, symbolic form or words."""
    text = str(answer).strip()
    body = to_ascii_math(re.sub(r"^\\boxed\s*\{(.*)\}$", r"\1", text)).strip().rstrip(".")
    v = expression_value(body.replace("±", ""))
    if v is not None:
        return Answer(text, (v, -v) if "±" in body else (v,), short=v.denominator == 1 and abs(v) < 10)
    parts = [p for p in re.split(r",\s*|;\s*|\s+(?:and|or)\s+", body) if p.strip()]
    vals = []
    for p in parts:  # "376 and 625", "x=6, y=5", "x=±1, ±2", "x=y=0", "f(x)=0 or f(x)=1"
        unnamed = re.sub(r"^\s*\(?\s*(?:[A-Za-z]\w*(?:\([^()]*\))?\s*=\s*)+", "", p)  # `x=` and `f(x)=` dropped
        pv = expression_value(unnamed.replace("±", "").strip(" ()"))
        if pv is None:
            break
        vals += [pv, -pv] if "±" in p else [pv]
    else:
        if vals:
            return Answer(text, tuple(vals), short=all(x.denominator == 1 and abs(x) < 10 for x in vals))
    approx = expression_value(body, allow_float=True)
    if approx is not None:  # irrational number: sqrt(3)/3
        return Answer(text, approx=float(approx), symbolic=body, samples=(approx,) * len(POINTS))
    words = re.findall(r"[a-z]+", body.lower())
    symbols = variables(body)
    if symbols and len(body) <= MAX_EXPR_CHARS and (re.search(r"[\d^/*()+\-=!]|" + MATH_FN, body) or len(body) == 1):
        samples = at_points(body, symbols)
        if samples is not None or re.search(r"[\d^/*()+=]", body) and len([w for w in words if len(w) > 1]) <= 2:
            return Answer(text, symbolic=body, symbols=symbols, samples=samples, short=len(compact(body)) == 1)
    if [w for w in words if w not in STOP_WORDS]:
        return Answer(text, phrase=" ".join(stems(body)))
    return Answer(text)


def stems(text: str) -> list[str]:
    """Lower-case words with a plural `s` dropped (`solutions` -> `solution`)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in word_list(text)]
