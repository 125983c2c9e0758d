"""The cost screen: what sympy would build from an expression, bounded before anything is computed."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mentor.mathtext.ascii import to_ascii_math
from mentor.mathtext.numerals import numeral_value
from mentor.mathtext.value import FUNCTION_NAMES

MAX_EXPR_CHARS = 80  # longer expressions are not compared by value
MAX_BITS = 200_000  # the largest number (numerator and denominator bits) an expression may build
MAX_TERMS = 100  # most terms of its expansion: math-verify took 12 s on (x+1)^{1000}
MAX_DEGREE = 40  # highest total degree: math-verify took 1.7 s on \sin^{40}x\cos^{40}x
_LETTER_BITS = 5  # a letter stands for a value up to 32: `numeric_screen` substitutes up to 23


class _Refused(Exception):
    pass


@dataclass(frozen=True)
class _Cost:
    r"""Upper bounds for one subexpression as sympy would build it: the bits of its value (letters bound to 32),
    the terms of its expansion and its total degree in letters and opaque atoms such as `\sin x`."""

    bits: float = 1
    terms: float = 1
    degree: float = 0
    exact: Fraction | None = None  # its value, when a small constant (so that `2^{2^{10}}` is sized exactly)

    def magnitude(self) -> float:
        """Upper bound of the larger of |numerator| and denominator of the value."""
        if self.exact is not None:
            return max(abs(self.exact.numerator), self.exact.denominator)
        return 2.0 ** self.bits if self.bits < 1000 else math.inf


def _const(v: Fraction) -> _Cost:
    bits = v.numerator.bit_length() + v.denominator.bit_length()
    return _Cost(bits=max(bits, 1), exact=v if bits <= 64 else None)


def _opaque(bits: float, symbolic: bool) -> _Cost:
    """A value sympy keeps whole (a power with a symbolic exponent, a factorial, a function of its argument)."""
    return _Cost(bits=bits, degree=1 if symbolic else 0)


def _combine(op: str, a: _Cost, b: _Cost) -> _Cost:
    if a.exact is not None and b.exact is not None and not (op == "/" and b.exact == 0):
        return _const({"+": a.exact + b.exact, "-": a.exact - b.exact, "*": a.exact * b.exact,
                       "/": a.exact / b.exact if b.exact else 0}[op])
    symbolic = a.degree or b.degree
    if op in "+-":
        return _Cost(a.bits + b.bits, a.terms + b.terms if symbolic else 1, max(a.degree, b.degree))
    return _Cost(a.bits + b.bits, a.terms * b.terms if symbolic else 1, a.degree + b.degree)


def _power(a: _Cost, b: _Cost) -> _Cost:
    e = b.magnitude()
    if b.degree or b.exact is None or b.exact.denominator != 1:  # `2^n`, `x^{1/2}`: kept as a power
        return _opaque(a.bits * e, bool(a.degree or b.degree))
    if a.exact is not None and a.bits * e <= 64 and (a.exact or b.exact >= 0):
        return _const(a.exact ** int(b.exact))
    terms = 1 if a.terms <= 1 else math.exp(math.lgamma(a.terms + e) - math.lgamma(e + 1) - math.lgamma(a.terms))
    return _Cost(a.bits * e, terms, a.degree * e)  # terms: the monomials of degree e in a's terms


def _factorial(a: _Cost) -> _Cost:
    if a.exact is not None and a.exact.denominator == 1 and 0 <= a.exact <= 20:
        return _const(Fraction(math.factorial(int(a.exact))))
    n = a.magnitude()
    return _opaque(n * math.log2(n + 1) + 1 if n < math.inf else n, bool(a.degree))


def _binomial(a: _Cost, b: _Cost) -> _Cost:  # C(a, b) <= 2^a and <= a^b
    return _opaque(min(a.magnitude(), b.magnitude() * a.bits) + 1, bool(a.degree or b.degree))


def _function(name: str, a: _Cost) -> _Cost:
    if name == "exp":
        return _opaque(1.5 * a.magnitude() + 1, bool(a.degree))
    if name in ("sqrt", "floor", "ceil"):
        return _opaque(a.bits, bool(a.degree) or name == "sqrt")
    return _opaque(64, True)  # sin, log, sum, ...: an atom, a float at most when evaluated


# The last group takes any character, a newline too: with `.`, a run of newlines failed at every start after `\s*`
# had rescanned the rest of it (quadratic); now it ends in one match, a blank `other`, which is skipped.
_COST_TOK = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|\\([A-Za-z]+)|(C|binom|sqrt|floor|ceil|%s)(?=\s*\()"
                       r"|([^\W\d_]+)|(\*\*|[-+*/^_!%%±()\[\]|'])|([\s\S]))" % FUNCTION_NAMES)
_OPAQUE_FN = {"sum", "prod", "int", "lim", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "sec", "csc", "cot"}
_BINDING = {"sep": 1, "choose": 2, "+": 3, "-": 3, "±": 3, "*": 4, "/": 4, "i": 4, "^": 6, "_": 6}


def _cost_tokens(expr: str) -> list[tuple[str, Any]]:
    toks: list[tuple[str, Any]] = []
    for num, cmd, fn, word, op, other in _COST_TOK.findall(expr):
        cmd = cmd.lower()
        if num:
            toks.append(("n", numeral_value(num)))
        elif cmd in ("binom", "dbinom", "tbinom", "sqrt", "exp", "sin", "cos", "tan", "log", "ln") or cmd in _OPAQUE_FN:
            toks.append(("f", "binom" if cmd.endswith("binom") else cmd))
        elif cmd in ("choose", "pm", "mp"):
            toks.append(("o", "choose" if cmd == "choose" else "±"))
        elif cmd and cmd not in ("frac", "dfrac", "tfrac", "left", "right", "cdot", "times"):
            toks.append(("a", cmd))
        elif fn:
            toks.append(("f", fn))
        elif word:
            toks.append(("a", word))  # `xy` is one atom: sizes, not meaning, matter here
        elif op:
            toks.append(("o", {"**": "^", "[": "(", "]": ")"}.get(op, op)))
        elif other.strip() and other != "\\":
            toks.append(("o", "sep"))  # , = < > ; : and anything else: parts sized apart
    return toks


def _has_comma(toks: list[tuple[str, Any]], start: int) -> bool:
    """Whether the group opened at toks[start] has a separator at its own level (`C(a, b)`)."""
    depth = 0
    for t in toks[start:]:
        depth += (t == ("o", "(")) - (t == ("o", ")"))
        if depth == 0 or depth == 1 and t == ("o", "sep"):
            return depth == 1
    return False


def expression_cost(expr: str) -> _Cost | None:
    r"""Upper bounds of what sympy would build from `expr` (LaTeX or ASCII math): the largest of its subexpressions'
    bits, terms and degree. None when one exceeds `MAX_BITS`, `MAX_TERMS` or `MAX_DEGREE`, or `expr` cannot be read.

    Every power, factorial and binomial is sized from its arguments' bounds before anything is computed, and
    numbers are never built, so this costs microseconds: towers (`9^{9^9}`), nested factorials (`((9!)!)!`),
    parenthesised exponents (`9^{(99999999)}`), powers of powers (`(9^{9999})^{9999}`), huge binomials
    (`\binom{10^9}{5 \cdot 10^8}`) and large expansions (`(x+1)^{1000}`) are refused."""
    try:
        toks = _cost_tokens(to_ascii_math(expr))
    except ValueError:  # a numeral past MAX_NUMERAL_DIGITS: too big to build
        return None
    i, abs_depth, worst = 0, 0, _Cost()

    def check(c: _Cost) -> _Cost:
        nonlocal worst
        if not (c.bits <= MAX_BITS and c.terms <= MAX_TERMS and c.degree <= MAX_DEGREE):  # NaN refuses too
            raise _Refused
        worst = _Cost(max(worst.bits, c.bits), max(worst.terms, c.terms), max(worst.degree, c.degree))
        return c

    def peek() -> tuple[str | None, Any]:
        return toks[i] if i < len(toks) else (None, None)

    def parse(min_bp: int) -> _Cost:
        nonlocal i
        left = prefix()
        while True:
            kind, val = peek()
            if kind is None or val == ")" or val == "|" and abs_depth:
                return left
            if val in ("!", "%", "'"):
                i += 1
                left = check(_factorial(left)) if val == "!" else left
                continue
            op = val if kind == "o" and val not in ("(", "|") else "i"  # `2x`, `2(x+1)`, `2|x|`: a product
            bp = _BINDING.get(op)
            if bp is None or bp < min_bp:
                return left
            i += op != "i"
            right = parse(bp if op == "^" else bp + 1)  # `^` is right associative
            if op == "^":
                left = _power(left, right)
            elif op == "choose":
                left = _binomial(left, right)
            elif op in ("sep", "_"):
                left = max(left, right, key=lambda c: (c.bits, c.terms, c.degree))
            else:
                left = _combine({"±": "+", "i": "*"}.get(op, op), left, right)
            check(left)

    def group(close: str) -> _Cost:
        nonlocal i, abs_depth
        i += 1
        abs_depth += close == "|"
        inner = parse(0)
        abs_depth -= close == "|"
        i += peek() == ("o", close)
        return inner

    def function(name: str) -> _Cost:
        nonlocal i
        power = None
        while peek() in (("o", "^"), ("o", "_")):  # `\sin^{40} x` is (sin x)^40; `\log_2 x` has a base
            is_power = toks[i] == ("o", "^")
            i += 1
            script = prefix()
            power = script if is_power else power
        if name == "binom":  # `C(a, b)`, `binom(a, b)`, or `\binom` with two groups when unconverted
            if peek() == ("o", "(") and _has_comma(toks, i):
                i += 1
                a = parse(_BINDING["sep"] + 1)
                i += peek() == ("o", "sep")
                b = parse(_BINDING["sep"] + 1)
                i += peek() == ("o", ")")
            else:
                a, b = prefix(), prefix()
            value = _binomial(a, b)
        else:
            value = _function(name, prefix() if peek() == ("o", "(") else parse(_BINDING["^"]))
        return check(_power(check(value), power) if power is not None else value)

    def prefix() -> _Cost:
        nonlocal i
        while True:
            kind, val = peek()
            if kind is None:
                return _Cost()
            i += 1
            if kind == "n":
                return check(_const(val))
            if kind == "a":
                return _Cost(bits=_LETTER_BITS, degree=1)
            if kind == "f":
                return function("binom" if val == "C" else val)
            if val in ("(", "|"):
                i -= 1
                return group(")" if val == "(" else "|")
            if val in ("-", "+", "±"):
                return parse(_BINDING["*"])
            # a stray operator or `)`: skipped

    try:
        while i < len(toks):
            parse(0)
            i += 1  # past an unmatched `)`
        return worst
    except (_Refused, RecursionError, OverflowError, ValueError, ZeroDivisionError):
        return None


def safe_expression(expr: str) -> bool:
    """Whether `expr` is short (`MAX_EXPR_CHARS`) and passes `expression_cost`, so that sympy finishes it quickly
    even with no timeout (math-verify's timeouts are off outside the main thread, and a big-integer operation
    holds the GIL, so no thread can bound it). Every call into math-verify or TRL's accuracy_reward screens its
    expressions here first."""
    return len(expr) <= MAX_EXPR_CHARS and expression_cost(expr) is not None
