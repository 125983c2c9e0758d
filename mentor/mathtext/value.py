r"""Exact values of short expressions, without sympy, and of expressions at fixed points.

The grammar: numbers, pi, + - * / ^ ( ) ! %, C(a,b), sqrt, floor, ceil, sin, cos, tan, log, ln, exp (`\sin^2 x`,
`\log_2 8`), single-letter variables bound by `env`, implicit multiplication (`2n`, `n(n-3)`, `xy`). Exponents and
factorials are capped, so that no value grows without bound.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from mentor.mathtext.numerals import numeral_value

FUNCTION_NAMES = "sin|cos|tan|log|ln|exp"
# `\sin` anywhere; a bare `sin` only when applied, so that words are not read as functions
MATH_FN = rf"(?:\\(?:{FUNCTION_NAMES})(?![A-Za-z])|(?:{FUNCTION_NAMES})(?=\s*[(^_]))"
_TOK = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(C|binom|sqrt|floor|ceil)\s*\(|(%s)|(pi(?![A-Za-z]))|([A-Za-z])"
                  r"|(\*\*|[-+*/^()!,%%_]))" % MATH_FN)
_FUNCS = ("C", "binom", "sqrt", "floor", "ceil")
_MATH = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "exp": math.exp}
MAX_EXPONENT = 10_000
Number = Fraction | float


def _pow(a: Number, b: Number) -> Number:
    if isinstance(a, float) or isinstance(b, float) or b.denominator != 1:
        if a < 0 and not (isinstance(b, Fraction) and b.denominator == 1) or abs(b) > 1000:
            raise ValueError("power")  # a negative float to an integer power is real: sin(x)^2
        return float(a) ** float(b)  # irrational: only kept when expression_value(allow_float=True)
    if abs(b) > MAX_EXPONENT or (a.numerator.bit_length() + a.denominator.bit_length()) * abs(b) > 200_000:
        raise ValueError("power too large")
    if a == 0 and b < 0:
        raise ZeroDivisionError
    return a ** int(b)


def _ln(x: Number) -> float:
    """Natural log; of a fraction's parts, so that `2^2000` does not overflow a float."""
    return math.log(x.numerator) - math.log(x.denominator) if isinstance(x, Fraction) else math.log(x)


def _apply(name: str, a: Number, base: Number | None) -> Number:
    """sin, cos, tan, exp, ln or log of `a` (`log` natural unless `base` is given); exact when the value is
    rational (`log_2 8` = 3, `log_4 2` = 1/2, `ln 1` = 0, `cos 0` = 1), else a float."""
    if name in ("log", "ln"):
        if a <= 0 or base is not None and (base <= 0 or base == 1):
            raise ValueError("log domain")
        if a == 1:
            return Fraction(0)
        if isinstance(a, Fraction) and isinstance(base, Fraction):  # a float guess, confirmed exactly
            r = Fraction(_ln(a) / _ln(base)).limit_denominator(12)
            if _pow(a, Fraction(r.denominator)) == _pow(base, Fraction(r.numerator)):
                return r
        return _ln(a) / (_ln(base) if base is not None else 1)
    if base is not None:
        raise ValueError("subscript")
    return Fraction(int(name in ("cos", "exp"))) if a == 0 else _MATH[name](a)


def _tokens(expr: str, env: dict[str, Number] | None) -> list[tuple[str, Any]]:
    toks, pos = [], 0
    while pos < len(expr):
        m = _TOK.match(expr, pos)
        if not m:
            if expr[pos:].strip():
                raise ValueError("bad character")
            break
        if m.group(1):
            tok = ("n", numeral_value(m.group(1)))
        elif m.group(2):
            tok = ("f", m.group(2))
        elif m.group(3):
            tok = ("g", m.group(3).lstrip("\\"))
        elif m.group(4):
            tok = ("n", math.pi)  # irrational: kept only when expression_value(allow_float=True)
        elif m.group(5):
            if env is None or m.group(5) not in env:
                raise ValueError("unbound letter")
            tok = ("n", env[m.group(5)])
        else:
            tok = ("o", "^" if m.group(6) == "**" else m.group(6))
        if toks and (toks[-1][0] == "n" or toks[-1] in (("o", ")"), ("o", "!"))) and (tok[0] in "nfg" or tok == ("o", "(")):
            toks.append(("i", "*"))  # implicit product, marked: `\sin 2x` takes 2x as its argument
        toks.append(tok)
        pos = m.end()
    return toks


def expression_value(expr: str, env: dict[str, Number] | None = None, allow_float: bool = False) -> Number | None:
    r"""Value of a short expression, or None when it is malformed, has unbound letters or is too large.

    Args:
        expr: ASCII math (`70+99+70`, `((1)/(2))`, `2^(10)`, `C(10,5)`, `5!`, `n(n-3)/2`).
        env: values of single-letter variables (default None: letters are not allowed).
        allow_float: give a float for irrational results such as `sqrt(3)/3` (default False: None).

    >>> expression_value("2^10 - 1"), expression_value("x + 1", {"x": 2})
    (Fraction(1023, 1), Fraction(3, 1))
    """
    try:
        toks = _tokens(expr.strip(), env)
    except (ValueError, ArithmeticError):
        return None
    i = 0

    def peek():
        return toks[i] if i < len(toks) else (None, None)

    def take(kind=None, val=None):
        nonlocal i
        t = peek()
        if (kind and t[0] != kind) or (val and t[1] != val):
            raise ValueError(f"expected {val or kind}")
        i += 1
        return t

    def expr_():
        v = term()
        while peek() in (("o", "+"), ("o", "-")):
            op = take()[1]
            v = v + term() if op == "+" else v - term()
        return v

    def term():
        v = unary()
        while peek() in (("o", "*"), ("o", "/"), ("i", "*")):
            op = take()[1]
            w = unary()
            v = v * w if op == "*" else v / w
        return v

    def unary():
        if peek() in (("o", "-"), ("o", "+")):
            return -unary() if take()[1] == "-" else unary()
        return power()

    def power():
        v = postfix()
        if peek() == ("o", "^"):
            take()
            v = _pow(v, unary())  # right associative
        return v

    def postfix():
        v = atom()
        while peek() in (("o", "!"), ("o", "%")):
            if take()[1] == "%":
                v = v / 100
            else:
                if not isinstance(v, Fraction) or v.denominator != 1 or not 0 <= v <= 1000:
                    raise ValueError("factorial")
                v = Fraction(math.factorial(int(v)))
        return v

    def script():  # `^2`, `_2`, `^(2)` after a function name, and the implicit product the lexer put after it
        v = atom()
        if peek()[0] == "i":
            take()
        return v

    def function(name):  # `\sin^2(x)` = sin(x)^2, `\log_2 8`; `\sin 2x` = sin(2x), `\sin x\cos x` = sin(x)cos(x)
        p = base = None
        while peek() in (("o", "^"), ("o", "_")):
            if take()[1] == "^":
                p = script()
            else:
                base = script()
        if p is not None and not (isinstance(p, Fraction) and p.denominator == 1 and 1 <= p <= 100):
            raise ValueError("function power")  # `\sin^{-1}` is arcsin
        if peek() == ("o", "("):
            a = atom()
        else:
            a = power()
            while peek()[0] == "i" and i + 1 < len(toks) and toks[i + 1][0] != "g":
                take()
                a = a * power()
        v = _apply(name, a, base)
        return v if p is None else _pow(v, p)

    def atom():
        kind, val = peek()
        if kind == "n":
            take()
            return val
        if kind == "g":
            take()
            return function(val)
        if (kind, val) == ("o", "("):
            take()
            v = expr_()
            take("o", ")")
            return v
        if kind != "f":
            raise ValueError("unexpected token")
        take()
        a = expr_()
        if val in ("C", "binom"):
            take("o", ",")
            b = expr_()
            take("o", ")")
            if not all(isinstance(x, Fraction) and x.denominator == 1 for x in (a, b)) or not 0 <= a <= 5000:
                raise ValueError("binomial")
            return Fraction(math.comb(int(a), int(b)) if b >= 0 else 0)
        take("o", ")")
        if val in ("floor", "ceil"):
            return Fraction((math.floor if val == "floor" else math.ceil)(a))
        if a < 0:
            raise ValueError("sqrt of a negative number")
        if isinstance(a, Fraction):
            r = (math.isqrt(a.numerator), math.isqrt(a.denominator))
            if r[0] ** 2 == a.numerator and r[1] ** 2 == a.denominator:
                return Fraction(*r)
        if not allow_float:
            raise ValueError("irrational")
        return math.sqrt(a)

    try:
        v = expr_()
        return v if i == len(toks) and (allow_float or isinstance(v, Fraction)) else None
    except (ValueError, ArithmeticError, RecursionError, TypeError):
        return None


def variables(expr: str) -> frozenset[str] | None:
    """Single-letter variables of an ASCII expression (function names and the constants `pi` and `oo` excluded);
    None if it has other words or subscripts (`x_n`)."""
    expr = re.sub(MATH_FN + r"\s*_?|(?<![A-Za-z])(?:pi|oo)(?![A-Za-z])", " ", expr)  # function names, and the `_` of a log base (`\log_2 x`)
    if "_" in expr:
        return None
    names = re.sub(r"\b(?:%s)\s*\(" % "|".join(_FUNCS), "(", expr)
    words = re.findall(r"[A-Za-z]+", names)
    return frozenset("".join(words))


POINTS = ((7, 11, 13, 17, 19, 23), (5, 3, 2, 13, 11, 7), (10, 6, 9, 4, 8, 3))


def at_points(expr: str, symbols: frozenset[str]) -> tuple | None:
    """Values of `expr` with its variables `symbols` bound to each row of `POINTS`; None if not computable."""
    out = []
    for pts in POINTS:
        v = expression_value(expr, {s: Fraction(p) for s, p in zip(sorted(symbols), pts)}, allow_float=True)
        if v is None:
            return None
        out.append(v)
    return tuple(out)


def close_enough(a: Number, b: Number) -> bool:
    """Exact equality for fractions, relative 1e-9 when either value is a float."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    try:
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))
    except OverflowError:
        return False
