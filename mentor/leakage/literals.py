"""Number literals and numeric expressions in a normalised hint, each a `Hit` with its value and place."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from mentor.mathtext.cost import MAX_EXPR_CHARS
from mentor.mathtext.value import FUNCTION_NAMES, MATH_FN, expression_value

MAX_DIGITS = 1000  # longer digit strings are not read as numbers (Python caps int() at 4300 digits)
_LITERAL = re.compile(r"(?<![\w.^])(?:(?P<grp>\d{1,3}(?:(?P<sep>[,'_ ])\d{3})(?:(?P=sep)\d{3})*(?!\d))|(?P<num>\d+\.?\d*|\.\d+))"
                      r"(?:\s*(?:[eE](?P<e1>[-+]?\d+)|\*\s*10\s*\^\s*\(?(?P<e2>[-+]?\d+)\)?))?(?P<pct>\s*%)?")
_SPELLED = re.compile(r"(?<![\w.])\d(?: \d)+(?!\w|\.\d)")
_EXPR_SPAN = re.compile(r"(?:C\(|binom\(|sqrt\(|%s\s*_?|\.(?=\d)|[\d+\-*/^()! ,])+" % MATH_FN)
_IDENT = re.compile(r"(?<![A-Za-z])(?!(?:C|binom|sqrt)\(|(?<=\\)(?:%s)(?![A-Za-z])|(?:%s)\s*[(^_])[A-Za-z_][A-Za-z_]*"
                    r"(?:_?\(?\d+\)?)?" % (FUNCTION_NAMES, FUNCTION_NAMES))


@dataclass(frozen=True)
class Hit:
    value: Fraction
    start: int
    end: int
    kind: str  # answer_digits | answer_words | answer_math_equiv
    text: str
    precision: int | None = None  # decimals shown, for approximations


def literals(t: str) -> list[Hit]:
    hits = []
    for m in _LITERAL.finditer(t):
        if len(m.group()) > MAX_DIGITS:
            continue
        if m.group("grp"):
            raw = re.sub(r"[,'_ ]", "", m.group("grp"))
            hits += [Hit(Fraction(int(g)), m.start(), m.end(), "answer_digits", g)
                     for g in re.split(r"[,'_ ]", m.group("grp"))]  # "1, 234" may also be a list
            value, prec = Fraction(int(raw)), None
        else:
            raw = m.group("num")
            value = Fraction(raw.rstrip(".") or "0")
            prec = len(raw.split(".")[1]) if "." in raw.rstrip(".") else None
        neg = m.start() > 0 and t[m.start() - 1] == "-" and (m.start() < 2 or not re.match(r"[\w)\]]", t[m.start() - 2]))
        value, start = (-value if neg else value), m.start() - neg
        exp = m.group("e1") or m.group("e2")
        if exp is not None and abs(int(exp)) <= 400:
            hits.append(Hit(value * Fraction(10) ** int(exp), start, m.end(), "answer_digits", m.group()))
        if m.group("pct"):
            hits.append(Hit(value / 100, start, m.end(), "answer_digits", m.group(), prec and prec + 2))
        hits.append(Hit(value, start, m.end(), "answer_digits", m.group(), prec))
    for m in _SPELLED.finditer(t):
        if len(m.group()) <= 2 * MAX_DIGITS:
            hits.append(Hit(Fraction(int(m.group().replace(" ", ""))), m.start(), m.end(), "answer_digits", m.group()))
    return hits


def expressions(t: str, operands: set[Fraction]) -> list[Hit]:
    """Numeric sub-expressions with at least two numbers or a function (`70+99+70`, `((1)/(2))`, `5!`)."""
    masked = _IDENT.sub(lambda m: "§" * len(m.group()), t)
    hits = []
    for m in _EXPR_SPAN.finditer(masked):
        for piece in _top_level_split(m.group()):
            text = piece.strip(" ,")
            nums = re.findall(r"\d+\.?\d*|\.\d+", text)
            if len(nums) < 2 and not re.search(r"[!(^]", text) or len(text) > MAX_EXPR_CHARS:
                continue
            for cand in [text] + ([text[1:-1]] if text[:1] == "(" and text[-1:] == ")" else []):
                v = expression_value(cand)
                if v is not None and not (operands and {Fraction(n) for n in nums} <= operands):
                    start = m.start() + m.group().find(text)
                    hits.append(Hit(v, start, start + len(text), "answer_math_equiv", text))
                    break
    return hits


def _top_level_split(span: str) -> list[str]:
    """Split at commas outside parentheses (`(1, 1, 1), 2+3` -> `(1, 1, 1)`, `2+3`)."""
    parts, depth, cur = [], 0, ""
    for ch in span:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth <= 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]
