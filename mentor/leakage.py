"""The leakage checker: does a hint give away the final answer or the worked solution?

`check_leak(hint, reference, task, problem=None)` runs deterministic detectors, then the task adapter's
own `leak_check`, and returns a `LeakVerdict`. Detector names are stable strings:

- `answer_digits`: a number literal in the hint equals the answer: with or without zero padding,
  thousands separators (`1,234`, `1 234`), spelled digit by digit (`5 7 9`), decimals (`0.5`, `.50`),
  scientific notation (`5.79e2`, `5.79 \\times 10^{2}`), percentages (`50%` for 1/2), or a decimal
  approximation of a non-integer answer to its shown precision (at least 3 significant digits).
- `answer_words`: number words (`five hundred seventy-nine`, `twelve`, `two thirds`, `five seven nine`).
- `answer_math_equiv`: an expression equal to the answer. Numeric expressions (`\\frac{1}{2}`, `2^{10}`,
  `70+99+70`, `C(10, 5)`) are evaluated exactly; symbolic ones (`\\frac{2^n}{2}` for `2^(n-1)`) are
  compared by exact values at fixed points (`1-2\\sin^2(x)` for `\\cos(2x)`), and with math-verify for
  answers outside that evaluator.
- `answer_verbatim`: the answer as written (`x=6, y=5`, `f(x)=0`), spaces aside, at least 4 characters.
- `answer_text`: a non-numeric answer (`No integer solutions`, plurals aside) quoted, or a yes/no answer
  stated in an answer context (`the answer is no`, `\\boxed{No}`, `No is the final answer`).
- `solution_overlap`: runs of at least `min_run` words copied from `reference["solution"]` that cover at
  least `max_fraction` of it, or that come from its final step (the one that reaches the answer), or a
  final step of 5 to `min_run` words copied whole. Copying the first steps is allowed: that is what a
  partial-step (tier 3) hint is.
- `task_error`: the task adapter's own detector raised; the hint is treated as leaked (fail closed).
- `hint_too_long`: the hint is longer than `MAX_HINT_CHARS` (4000); not checked, treated as leaked.

The short-answer rule. Single-digit integers (-9..9, 0 included) and single-letter answers (`n`) occur in
almost every hint as indices, counts and coefficients ("step 2", "x_1", "2 digits", "for all n"), so such a
value is flagged only when it is (a) stated as the answer: inside `\\boxed{}`, after a cue ("the answer
is", "the minimum value is", "equals", "we get", "you should end up with", "therefore/thus/so ... is"),
or before one ("is the answer", "is the only value"); and (b) standalone: not inside an expression (`2n`,
`1/x`, `x^2`, `2(a+b)`, `=0=`). A bare `x = 2` or `so b=0` is not enough. Numbers right after `_`
(subscripts) are never read as the answer. Numbers of two digits or more are flagged wherever they stand.

Not leaks: numeric expressions made only of `reference["operands"]` (the problem restated, e.g.
`123+456` in the arithmetic lab), and expressions copied from the problem text (`problem`). When the
problem itself states an expression equivalent to a symbolic answer (`factor x^9+x^4-x-1`), rewriting
it is not a leak either: only the answer's own text counts then.

Answers with several parts (`376 and 625`, `x=6, y=5`) leak when any part does.
`reference["answer_aliases"]` (optional list) gives other forms of the answer, checked the same way.

math-verify bounds its work with `signal.alarm`, which only works in the main thread. Here it is the
fallback only, called on short expressions (at most `MAX_EXPR_CHARS` characters, at most `MAX_MV_CANDIDATES`
per hint) that pass the cost screen `expression_cost` (no towers, huge powers, factorials, binomials or
expansions), with its timeouts on in the main thread and off elsewhere, and every exception caught. The
math task screens its comparisons with the same `safe_expression`. The exact evaluator caps exponents and
factorials too.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from mentor.types import LeakVerdict

DEFAULT_MIN_RUN = 12
DEFAULT_MAX_FRACTION = 0.5
MIN_FINAL_WORDS = 5  # a final step shorter than min_run but at least this long counts when copied whole
MAX_EXPR_CHARS = 80
MAX_MV_CANDIDATES = 6
MAX_HINT_CHARS = 4000  # a longer "hint" is a solution, not a hint: flagged as `hint_too_long`
MAX_DIGITS = 1000  # longer digit strings are not read as numbers (Python caps int() at 4300 digits)

# --------------------------------------------------------------------------------------------------
# Text normalisation: LaTeX and unicode math to plain ASCII math.
# --------------------------------------------------------------------------------------------------
_UNICODE = {"−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "²": "^2", "³": "^3", "√": "sqrt",
            "\u2009": " ", "\u202f": " ", "\u00a0": " ", "≤": "<=", "≥": ">=", "’": "'"}
_LATEX_SIMPLE = [(r"\\(?:left|right|displaystyle|big|Big|bigg|Bigg)\b\.?", ""), (r"\\[,;:! ]", " "),
                 (r"\{,\}", ","), (r"\\(?:cdot|times|ast)\b", "*"), (r"\\div\b", "/"), (r"\\%", "%"),
                 (r"\\(?:text|mathrm|mathbf|textbf|operatorname|mbox)\s*\{([^{}]*)\}", r" \1 "),
                 (r"\\pm\b", "±"), (r"\\(?:le|leq)\b", "<="), (r"\\(?:ge|geq)\b", ">="), (r"\\neq?\b", "!="),
                 (r"\\infty\b", "oo"), (r"\\pi\b", "pi"), (r"\$+|\\\(|\\\)|\\\[|\\\]", " ")]
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\w)\s*(\w)")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SQRT_SHORT = re.compile(r"\\sqrt\s*(\d+|[A-Za-z](?![A-Za-z]))")
_BINOM = re.compile(r"\\[dt]?binom\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def to_ascii_math(text: str) -> str:
    """Plain ASCII math for `text`: `\\frac{a}{b}` -> `((a)/(b))`, `\\sqrt{x}` -> `sqrt(x)`,
    `\\binom{a}{b}` -> `C(a,b)`, `\\cdot` -> `*`, braces -> parentheses, `$` dropped, unicode minus and
    times replaced. Lengths change; use it for values, not for positions."""
    for k, v in _UNICODE.items():
        text = text.replace(k, v)
    for pat, rep in _LATEX_SIMPLE:
        text = re.sub(pat, rep, text)
    for _ in range(6):  # innermost first, so nested fractions unwind
        new = re.sub(r"([\^_])\s*\{([^{}]*)\}", r"\1(\2)", text)  # x^{2} -> x^(2), so \frac{x^{2}}{4} unwinds
        new = _BINOM.sub(r"C(\1,\2)", _SQRT.sub(r"sqrt(\1)", _FRAC.sub(r"((\1)/(\2))", new)))
        if new == text:
            break
        text = new
    text = _SQRT_SHORT.sub(r"sqrt(\1)", _FRAC_SHORT.sub(r"(\1/\2)", text))
    text = re.sub(r"\\boxed|\\fbox", "", text)
    return text.replace("{", "(").replace("}", ")")


def _normalise(hint: str) -> str:
    """The hint with LaTeX/unicode math made ASCII (see `to_ascii_math`); `\\boxed{` kept as `[[` ... `]]`."""
    out, i = [], 0
    for m in _BOXED.finditer(hint):  # mark boxed spans so answer contexts survive normalisation
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while j < len(hint) and depth:
            depth += {"{": 1, "}": -1}.get(hint[j], 0)
            j += 1
        out += [hint[i:m.start()], " [[", hint[m.end():j - 1], "]] "]
        i = j
    out.append(hint[i:])
    return to_ascii_math("".join(out))


# --------------------------------------------------------------------------------------------------
# Arithmetic on short expressions, without sympy: numbers, + - * / ^ ( ) ! %, C(a,b), sqrt, floor, ceil,
# sin, cos, tan, log, ln, exp (`\sin^2 x`, `\log_2 8`), single-letter variables bound by `env`,
# implicit multiplication (`2n`, `n(n-3)`, `xy`).
# --------------------------------------------------------------------------------------------------
_NAMES = "sin|cos|tan|log|ln|exp"
# `\sin` anywhere; a bare `sin` only when applied, so that words are not read as functions
_MATH_FN = rf"(?:\\(?:{_NAMES})(?![A-Za-z])|(?:{_NAMES})(?=\s*[(^_]))"
_TOK = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(C|binom|sqrt|floor|ceil)\s*\(|(%s)|([A-Za-z])|(\*\*|[-+*/^()!,%%_]))"
                  % _MATH_FN)
_FUNCS = ("C", "binom", "sqrt", "floor", "ceil")
_MATH = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "exp": math.exp}
MAX_EXPONENT = 10_000
Number = Fraction | float


def _pow(a: Number, b: Number) -> Number:
    if isinstance(a, float) or isinstance(b, float) or b.denominator != 1:
        if a < 0 and not (isinstance(b, Fraction) and b.denominator == 1) or abs(b) > 1000:
            raise ValueError("power")  # a negative float to an integer power is real: sin(x)^2
        return float(a) ** float(b)  # irrational: only kept when evaluate(allow_float=True)
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
            tok = ("n", Fraction(m.group(1)))
        elif m.group(2):
            tok = ("f", m.group(2))
        elif m.group(3):
            tok = ("g", m.group(3).lstrip("\\"))
        elif m.group(4):
            if env is None or m.group(4) not in env:
                raise ValueError("unbound letter")
            tok = ("n", env[m.group(4)])
        else:
            tok = ("o", "^" if m.group(5) == "**" else m.group(5))
        if toks and (toks[-1][0] == "n" or toks[-1] in (("o", ")"), ("o", "!"))) and (tok[0] in "nfg" or tok == ("o", "(")):
            toks.append(("i", "*"))  # implicit product, marked: `\sin 2x` takes 2x as its argument
        toks.append(tok)
        pos = m.end()
    return toks


def evaluate(expr: str, env: dict[str, Number] | None = None, allow_float: bool = False) -> Number | None:
    """Value of a short expression, or None when it is malformed, has unbound letters or is too large.

    Args:
        expr: ASCII math (`70+99+70`, `((1)/(2))`, `2^(10)`, `C(10,5)`, `5!`, `n(n-3)/2`).
        env: values of single-letter variables (default None: letters are not allowed).
        allow_float: give a float for irrational results such as `sqrt(3)/3` (default False: None).
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
    """Single-letter variables of an ASCII expression (function names excluded); None if it has other words
    or subscripts (`x_n`)."""
    expr = re.sub(_MATH_FN + r"\s*_?", " ", expr)  # function names, and the `_` of a log base (`\log_2 x`)
    if "_" in expr:
        return None
    names = re.sub(r"\b(?:%s)\s*\(" % "|".join(_FUNCS), "(", expr)
    words = re.findall(r"[A-Za-z]+", names)
    return frozenset("".join(words))


# --------------------------------------------------------------------------------------------------
# Number words.
# --------------------------------------------------------------------------------------------------
_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_FRACS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
          **{w + s: d for d, w in enumerate("fifth sixth seventh eighth ninth tenth".split(), start=5) for s in ("", "s")}}
_WORD = re.compile(r"[a-z]+")


def word_numbers(text: str) -> list[tuple[Fraction, int, int]]:
    """(value, start, end) of each number written in words in `text`: `five hundred and seventy-nine`,
    `minus three`, `two thirds`, `a half`, and digits read one by one (`five seven nine` -> 579)."""
    words = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text.lower())]
    found, k = [], 0
    while k < len(words):
        w, s, _ = words[k]
        if w not in _UNITS and w not in _TENS and not (w == "a" and k + 1 < len(words) and words[k + 1][0] in {**_SCALES, **_FRACS}):
            k += 1
            continue
        total, cur, units_only, digits, j, end = 0, 0, True, "", k, s
        while j < len(words):
            w, ws, we = words[j]
            gap = text[end:ws] if j > k else ""
            if j > k and not re.fullmatch(r"[\s-]*", gap):
                break
            if w in _UNITS:
                cur += _UNITS[w]
                digits += str(_UNITS[w]) if _UNITS[w] < 10 else "x"
            elif w in _TENS:
                cur += _TENS[w]
                units_only = False
            elif w == "a" and j == k:
                cur = 1
                units_only = False
            elif w in _SCALES and (cur or j == k):
                cur, units_only = max(cur, 1) * _SCALES[w], False
                if _SCALES[w] > 100:
                    total, cur = total + cur, 0
            elif w == "and" and j + 1 < len(words) and (words[j + 1][0] in _UNITS or words[j + 1][0] in _TENS) and not units_only:
                pass
            else:
                break
            end = we
            j += 1
        value = Fraction(total + cur)
        if units_only and len(digits) > 1 and "x" not in digits:
            value = Fraction(int(digits))  # "five seven nine": digits read one by one
        if j < len(words) and words[j][0] in _FRACS and re.fullmatch(r"[\s-]*", text[end:words[j][1]]):
            value, end = value / _FRACS[words[j][0]], words[j][2]
            j += 1
        sign = re.search(r"\b(?:minus|negative)\s+$", text[max(0, s - 10):s].lower())
        found.append((-value, s - len(sign.group()), end) if sign else (value, s, end))
        k = max(j, k + 1)
    return found


# --------------------------------------------------------------------------------------------------
# Number literals and numeric expressions in a (normalised) hint.
# --------------------------------------------------------------------------------------------------
_LITERAL = re.compile(r"(?<![\w.^])(?:(?P<grp>\d{1,3}(?:(?P<sep>[,'_ ])\d{3})(?:(?P=sep)\d{3})*(?!\d))|(?P<num>\d+\.?\d*|\.\d+))"
                      r"(?:\s*(?:[eE](?P<e1>[-+]?\d+)|\*\s*10\s*\^\s*\(?(?P<e2>[-+]?\d+)\)?))?(?P<pct>\s*%)?")
_SPELLED = re.compile(r"(?<![\w.])\d(?: \d)+(?!\w|\.\d)")
_EXPR_SPAN = re.compile(r"(?:C\(|binom\(|sqrt\(|%s\s*_?|\.(?=\d)|[\d+\-*/^()! ,])+" % _MATH_FN)
_IDENT = re.compile(r"(?<![A-Za-z])(?!(?:C|binom|sqrt)\(|(?<=\\)(?:%s)(?![A-Za-z])|(?:%s)\s*[(^_])[A-Za-z_][A-Za-z_]*"
                    r"(?:_?\(?\d+\)?)?" % (_NAMES, _NAMES))


@dataclass(frozen=True)
class _Hit:
    value: Fraction
    start: int
    end: int
    kind: str  # answer_digits | answer_words | answer_math_equiv
    text: str
    precision: int | None = None  # decimals shown, for approximations


def _literals(t: str) -> list[_Hit]:
    hits = []
    for m in _LITERAL.finditer(t):
        if len(m.group()) > MAX_DIGITS:
            continue
        if m.group("grp"):
            raw = re.sub(r"[,'_ ]", "", m.group("grp"))
            hits += [_Hit(Fraction(int(g)), m.start(), m.end(), "answer_digits", g)
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
            hits.append(_Hit(value * Fraction(10) ** int(exp), start, m.end(), "answer_digits", m.group()))
        if m.group("pct"):
            hits.append(_Hit(value / 100, start, m.end(), "answer_digits", m.group(), prec and prec + 2))
        hits.append(_Hit(value, start, m.end(), "answer_digits", m.group(), prec))
    for m in _SPELLED.finditer(t):
        if len(m.group()) <= 2 * MAX_DIGITS:
            hits.append(_Hit(Fraction(int(m.group().replace(" ", ""))), m.start(), m.end(), "answer_digits", m.group()))
    return hits


def _expressions(t: str, operands: set[Fraction]) -> list[_Hit]:
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
                v = evaluate(cand)
                if v is not None and not (operands and {Fraction(n) for n in nums} <= operands):
                    start = m.start() + m.group().find(text)
                    hits.append(_Hit(v, start, start + len(text), "answer_math_equiv", text))
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


# --------------------------------------------------------------------------------------------------
# The answer, analysed once per distinct answer string.
# --------------------------------------------------------------------------------------------------
_YESNO = {"yes", "no"}
_STOP = {"the", "a", "an", "is", "are", "of", "to", "and", "or", "for", "all", "it", "in", "there", "such", "that"}


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
        samples: values of the symbolic answer at fixed points (`_POINTS`), None if not computable here.
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


_POINTS = ((7, 11, 13, 17, 19, 23), (5, 3, 2, 13, 11, 7), (10, 6, 9, 4, 8, 3))


def at_points(expr: str, symbols: frozenset[str]) -> tuple | None:
    """Values of `expr` with its variables `symbols` bound to each row of `_POINTS`; None if not computable."""
    out = []
    for pts in _POINTS:
        v = evaluate(expr, {s: Fraction(p) for s, p in zip(sorted(symbols), pts)}, allow_float=True)
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


def compact(s: str) -> str:
    """`s` as ASCII math without spaces, `*`, doubled parentheses or boxed markers, lower-cased: for
    comparing expressions as text."""
    return re.sub(r"[\s*]|\[\[|\]\]", "", to_ascii_math(s)).replace("((", "(").replace("))", ")").lower()


@lru_cache(maxsize=4096)
def analyse_answer(answer: str) -> Answer:
    """Parse `answer` once (cached): its numeric values, symbolic form or words."""
    text = str(answer).strip()
    body = to_ascii_math(re.sub(r"^\\boxed\s*\{(.*)\}$", r"\1", text)).strip().rstrip(".")
    v = evaluate(body.replace("±", ""))
    if v is not None:
        return Answer(text, (v, -v) if "±" in body else (v,), short=v.denominator == 1 and abs(v) < 10)
    parts = [p for p in re.split(r",\s*|;\s*|\s+(?:and|or)\s+", body) if p.strip()]
    vals = []
    for p in parts:  # "376 and 625", "x=6, y=5", "x=±1, ±2", "x=y=0", "f(x)=0 or f(x)=1"
        pv = evaluate(re.sub(r"^\s*\(?\s*(?:[A-Za-z]\w*(?:\([^()]*\))?\s*=\s*)+", "", p).replace("±", "").strip(" ()"))
        if pv is None:
            break
        vals += [pv, -pv] if "±" in p else [pv]
    else:
        if vals:
            return Answer(text, tuple(vals), short=all(x.denominator == 1 and abs(x) < 10 for x in vals))
    approx = evaluate(body, allow_float=True)
    if approx is not None:  # irrational number: sqrt(3)/3
        return Answer(text, approx=float(approx), symbolic=body, samples=(approx,) * len(_POINTS))
    words = re.findall(r"[a-z]+", body.lower())
    symbols = variables(body)
    if symbols and len(body) <= MAX_EXPR_CHARS and (re.search(r"[\d^/*()+\-=!]|" + _MATH_FN, body) or len(body) == 1):
        samples = at_points(body, symbols)
        if samples is not None or re.search(r"[\d^/*()+=]", body) and len([w for w in words if len(w) > 1]) <= 2:
            return Answer(text, symbolic=body, symbols=symbols, samples=samples, short=len(compact(body)) == 1)
    if [w for w in words if w not in _STOP]:
        return Answer(text, phrase=" ".join(_stems(body)))
    return Answer(text)


def _stems(text: str) -> list[str]:
    """Lower-case words with a plural `s` dropped (`solutions` -> `solution`)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in word_list(text)]


# --------------------------------------------------------------------------------------------------
# The cost screen, and math-verify, bounded.
# --------------------------------------------------------------------------------------------------
MAX_BITS = 200_000  # the largest number (numerator and denominator bits) an expression may build
MAX_TERMS = 100  # most terms of its expansion: math-verify took 12 s on (x+1)^{1000}
MAX_DEGREE = 40  # highest total degree: math-verify took 1.7 s on \sin^{40}x\cos^{40}x
_LETTER_BITS = 5  # a letter stands for a value up to 32: `_numeric_screen` substitutes up to 23


class _Refused(Exception):
    pass


@dataclass(frozen=True)
class _Cost:
    """Upper bounds for one subexpression as sympy would build it: the bits of its value (letters bound to 32),
    the terms of its expansion and its total degree in letters and opaque atoms such as `\\sin x`."""

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


_COST_TOK = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|\\([A-Za-z]+)|(C|binom|sqrt|floor|ceil|%s)(?=\s*\()"
                       r"|([^\W\d_]+)|(\*\*|[-+*/^_!%%±()\[\]|'])|(.))" % _NAMES)
_OPAQUE_FN = {"sum", "prod", "int", "lim", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "sec", "csc", "cot"}
_BINDING = {"sep": 1, "choose": 2, "+": 3, "-": 3, "±": 3, "*": 4, "/": 4, "i": 4, "^": 6, "_": 6}


def _cost_tokens(expr: str) -> list[tuple[str, Any]]:
    toks: list[tuple[str, Any]] = []
    for num, cmd, fn, word, op, other in _COST_TOK.findall(expr):
        cmd = cmd.lower()
        if num:
            toks.append(("n", Fraction(num)))
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
    """Upper bounds of what sympy would build from `expr` (LaTeX or ASCII math): the largest of its subexpressions'
    bits, terms and degree. None when one exceeds `MAX_BITS`, `MAX_TERMS` or `MAX_DEGREE`, or `expr` cannot be read.

    Every power, factorial and binomial is sized from its arguments' bounds before anything is computed, and
    numbers are never built, so this costs microseconds: towers (`9^{9^9}`), nested factorials (`((9!)!)!`),
    parenthesised exponents (`9^{(99999999)}`), powers of powers (`(9^{9999})^{9999}`), huge binomials
    (`\\binom{10^9}{5 \\cdot 10^8}`) and large expansions (`(x+1)^{1000}`) are refused."""
    toks = _cost_tokens(to_ascii_math(expr))
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


def _timeout() -> int | None:
    if threading.current_thread() is threading.main_thread():
        return 2
    for name in ("math_verify.parser", "math_verify.grader"):  # as TRL does: silence "timeout disabled"
        logging.getLogger(name).setLevel(logging.ERROR)
    return None


def mv_parse(expr: str) -> list:
    """math-verify's parse of one short expression, wrapped as LaTeX math; [] when unsafe or on any error."""
    if not safe_expression(expr):
        return []
    try:
        from math_verify import parse

        return parse(expr if "$" in expr or "\\boxed" in expr else f"${expr}$", parsing_timeout=_timeout())
    except Exception:
        return []


def mv_equal(gold: list, target: list) -> bool:
    """math-verify's verify, with its timeout on only in the main thread; False on any error."""
    if not gold or not target:
        return False
    try:
        from math_verify import verify

        return bool(verify(gold, target, timeout_seconds=_timeout()))
    except Exception:
        return False


def _numeric_screen(a: Any, b: Any) -> bool:
    """Cheap necessary condition for sympy expressions a == b: equal at a few substituted points."""
    try:
        import sympy

        symbols = sorted(a.free_symbols, key=str)
        for pts in _POINTS:
            point = {s: sympy.Integer(p) for s, p in zip(symbols, pts)}
            x, y = complex(sympy.N(a.subs(point), 20)), complex(sympy.N(b.subs(point), 20))
            if not abs(x - y) <= 1e-9 * max(1.0, abs(x)):
                return False
        return True
    except Exception:
        return False


_RUN = re.compile(r"(?:(?:sqrt|floor|ceil|binom)(?=\s*\()|C(?=\()|%s|(?<![A-Za-z])[A-Za-z](?![A-Za-z])"
                  r"|[\d_^*/+\-()!%%]|\.(?=\d)|,(?!\s)|[ \t])+" % _MATH_FN)


def _math_runs(t: str) -> list[tuple[str, int, int]]:
    """(expression, start, end) of each run of math in a normalised hint, split at `=`, `<`, `>`."""
    out = []
    for m in _RUN.finditer(t):
        for piece in re.finditer(r"[^=<>]+", m.group()):
            text = piece.group()
            stripped = text.strip(" \t.,")
            if stripped and len(stripped) <= MAX_EXPR_CHARS:
                start = m.start() + piece.start() + text.find(stripped)
                out.append((stripped, start, start + len(stripped)))
    return out


def _symbolic_leak(t: str, ans: Answer, literal_only: bool = False) -> str | None:
    """An expression of the normalised hint `t` equivalent to the symbolic or irrational answer, or None.
    Expressions are compared as text, then (unless `literal_only`) by exact values at fixed points;
    math-verify is the fallback for answers this module cannot evaluate."""
    target, fallback = compact(ans.symbolic), []
    for cand, start, end in _math_runs(t):
        if ans.short and not _answer_context(t, start, end):
            continue
        if compact(cand) == target:
            return cand
        if literal_only or variables(cand) != ans.symbols or not re.search(r"[\d^/*+\-(]", cand):
            continue
        if ans.samples is None:
            if not re.search(r"\.\.\.|…|±", ans.symbolic):  # forms math-verify cannot compare either
                fallback.append(cand)
            continue
        got = at_points(cand, ans.symbols)
        if got is not None and all(close_enough(x, y) for x, y in zip(ans.samples, got)):
            return cand
    gold = list(_symbolic_gold(ans.symbolic)) if fallback else []
    for cand in sorted(fallback, key=len, reverse=True)[:MAX_MV_CANDIDATES]:
        got = mv_parse(cand)
        try:
            if gold and got and _numeric_screen(gold[0], got[0]) and mv_equal(gold, got):
                return cand
        except Exception:
            continue
    return None


@lru_cache(maxsize=1024)
def _symbolic_gold(answer: str) -> tuple:
    return tuple(mv_parse(answer))


# --------------------------------------------------------------------------------------------------
# Answer contexts for short answers.
# --------------------------------------------------------------------------------------------------
_CUE_BEFORE = re.compile(
    r"(?:\b(?:answer|result|minimum|maximum|minimal|maximal|smallest|largest|greatest|least|limit|total|final|"
    r"value|count|sum|period)\b[^.;!?\n=\d()]{0,30}?(?:\bis\b|\bare\b|\bequals?\b|\bequal to\b|\bbe\b|(?<![<>!])=|:)|"
    r"\b(?:equals?|is equal to|evaluates to|comes to|comes out to|works out to|amounts to|yields|gives|get|obtain|"
    r"end up with|arrive at)|"
    r"\b(?:therefore|thus|hence|so)\b[^.;!?\n]{0,30}?\bis\b)"
    r"\s*(?:exactly|just|only|precisely|simply|then|therefore|thus|also|indeed)?\s*(?:\[\[\s*)?$", re.I)
_CUE_AFTER = re.compile(
    r"^\s*(?:\]\])?\s*(?:is|are|would be|will be|should be|must be)\s+(?:the\s+|your\s+)?(?:final\s+|correct\s+|right\s+)?"
    r"(?:answer|result|only|minimum|maximum|smallest|largest|limit|value|solution|count|total)\b", re.I)


def _in_boxed(t: str, start: int) -> bool:
    return t.rfind("[[", 0, start) > t.rfind("]]", 0, start)


def _answer_context(t: str, start: int, end: int) -> bool:
    """Whether the number at t[start:end] is stated as the answer (boxed, or after/before an answer cue)."""
    if _in_boxed(t, start):
        return True
    before = re.split(r"[.;!?\n](?!\d)", t[max(0, start - 80):start])[-1]
    return bool(_CUE_BEFORE.search(before) or _CUE_AFTER.match(t[end:end + 60]))


# --------------------------------------------------------------------------------------------------
# Verbatim overlap with the worked solution.
# --------------------------------------------------------------------------------------------------
def word_list(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def split_steps(text: str) -> list[str]:
    """Steps of a worked solution: its non-empty lines, or its sentences when it is one line."""
    lines = [ln.strip() for ln in text.strip().split("\n") if ln.strip()]
    if len(lines) > 1:
        return lines
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip()) if s]


@lru_cache(maxsize=512)
def _solution_index(solution: str, n: int) -> tuple[int, int, dict, list[str]]:
    """(number of words, first word of the final step, n-gram -> start positions, words of the final step)."""
    steps = split_steps(solution)
    toks = word_list(solution)
    last_start = len(toks) - len(word_list(steps[-1])) if len(steps) > 1 else len(toks)
    index: dict[tuple, list[int]] = {}
    for i in range(len(toks) - n + 1):
        index.setdefault(tuple(toks[i:i + n]), []).append(i)
    return len(toks), last_start, index, toks[last_start:]


def solution_overlap(hint: str, solution: str, min_run: int = DEFAULT_MIN_RUN) -> tuple[float, bool]:
    """(fraction of the solution's words copied in runs of >= `min_run` words, whether a copied run lies in
    the solution's final step)."""
    total, last_start, index, tail = _solution_index(solution, min_run)
    if not total:
        return 0.0, False
    h, covered = word_list(hint), bytearray(total)
    for gram in {tuple(h[i:i + min_run]) for i in range(len(h) - min_run + 1)}:
        for p in index.get(gram, ()):
            covered[p:p + min_run] = b"\x01" * min_run
    final = any(covered[last_start:])
    if not final and MIN_FINAL_WORDS <= len(tail) < min_run:  # a short final step, copied whole
        final = f" {' '.join(tail)} " in f" {' '.join(h)} "
    return sum(covered) / total, final


# --------------------------------------------------------------------------------------------------
# The checker.
# --------------------------------------------------------------------------------------------------
def _standalone(t: str, h: _Hit) -> bool:
    """Whether a number stands alone (`is 2.`, `get 2 at the end`), not inside a larger expression or word
    (`2^n`, `1/x`, `x^2`, `2n`, `2 * 3`)."""
    if h.kind != "answer_digits":
        return True
    before, after, spaced = t[:h.start].rstrip()[-1:], t[h.end:h.end + 1], t[h.end:].lstrip()[:1]
    return before not in ("^", "/", "*") and not (after.isalnum() or after and after in "_+-/*^(=<>") \
        and not (spaced and spaced in "/*^(=<>")


def _short(v: Fraction) -> bool:
    return v.denominator == 1 and abs(v) < 10


@lru_cache(maxsize=1024)
def problem_states_answer(problem: str, answer: str) -> bool:
    """Whether the problem text holds an expression equivalent to a symbolic answer (`factor x^9+x^4-x-1`):
    then rewriting the problem's expression is no leak, and only a literal copy of the answer counts."""
    ans = analyse_answer(answer)
    if ans.samples is None:
        return False
    for cand, _, _ in _math_runs(_normalise(problem)):
        if variables(cand) == ans.symbols and re.search(r"[\d^/*+\-(]", cand):
            got = at_points(cand, ans.symbols)
            if got is not None and all(close_enough(x, y) for x, y in zip(ans.samples, got)):
                return True
    return False


def _answer_hits(t: str, ans: Answer, operands: set[Fraction], problem: str, problem_compact: str) -> dict[str, str]:
    """Detector name -> evidence, for one form of the answer, in the normalised hint `t`."""
    found: dict[str, str] = {}
    if ans.values or ans.approx is not None:
        targets = set(ans.values) | {-v for v in ans.values if v.denominator == 1 and abs(v) >= 10}
        hits = _literals(t) + [_Hit(v, s, e, "answer_words", t[s:e]) for v, s, e in word_numbers(t)]
        hits += _expressions(t, operands)
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
            if exact and _short(h.value) and not (_answer_context(t, h.start, h.end) and _standalone(t, h)):
                continue
            if h.kind == "answer_math_equiv" and operands and h.value in operands:
                continue
            found[h.kind] = f"'{h.text.strip()}' in the hint equals the answer {ans.text}"
    if ans.symbolic:
        literal_only = bool(problem) and problem_states_answer(problem, ans.text)
        cand = _symbolic_leak(t, ans, literal_only)
        if cand:
            found["answer_math_equiv"] = f"'{cand}' in the hint is equivalent to the answer {ans.text}"
    if ans.text and not ans.phrase and len(compact(ans.text)) >= 4 and not re.fullmatch(r"[-\d.,/ ]+", ans.text):
        if _verbatim(ans.text).search(t):
            found["answer_verbatim"] = f"the hint contains the answer {ans.text} as written"
    if ans.phrase:
        words = " ".join(_stems(t))
        first = ans.phrase.split()[0]
        if first in _YESNO and len(ans.phrase.split()) <= 2:
            for m in re.finditer(rf"\b{first}\b", t, re.I):
                if _answer_context(t, m.start(), m.end()):
                    found["answer_text"] = f"the hint states the answer '{ans.text}'"
                    break
        elif len([w for w in ans.phrase.split() if w not in _STOP and w not in _UNITS]) >= 2 \
                and f" {ans.phrase} " in f" {words} ":
            found["answer_text"] = f"the hint quotes the answer '{ans.text}'"
    return found


@lru_cache(maxsize=1024)
def _verbatim(answer: str) -> re.Pattern:
    """The answer as written, spaces anywhere, not glued to a preceding letter or digit."""
    return re.compile(r"(?<![A-Za-z0-9])" + r"\s*".join(map(re.escape, re.sub(r"\s+", "", to_ascii_math(answer)))), re.I)


def _significant(text: str) -> int:
    return len(re.sub(r"^[0.]+", "", re.sub(r"[^\d.]", "", text)).replace(".", ""))


def check_leak(hint: str, reference: dict[str, Any], task: str, *, problem: str | None = None,
               min_run: int = DEFAULT_MIN_RUN, max_fraction: float = DEFAULT_MAX_FRACTION) -> LeakVerdict:
    """Whether `hint` reveals the answer or the worked solution of a problem.

    Args:
        hint: the hint draft.
        reference: the problem's reference: `answer` (any string or number), optional `answer_aliases`
            (other forms of the answer), optional `solution` (worked solution, steps on separate lines),
            optional `operands` (numbers of the problem whose combinations are not leaks).
        task: task adapter name; its `leak_check` runs after the generic detectors (skipped when the
            task is unknown or its module cannot be imported).
        problem: the problem text (default: `reference["problem"]`, else None). When given, expressions
            copied from it are restatements, not leaks; pass the failed group's prompt.
        min_run: words in a verbatim run that counts as copied from the solution (default 12).
        max_fraction: fraction of the solution's words that may be copied in such runs (default 0.5).

    Returns:
        LeakVerdict with `leaked`, the names of the detectors that fired, and a reason naming the evidence.
    """
    hint = str(hint or "")
    if len(hint) > MAX_HINT_CHARS:  # fail closed rather than check only part of it
        return LeakVerdict(True, ["hint_too_long"], f"the hint has {len(hint)} characters, more than "
                                                    f"{MAX_HINT_CHARS}: a hint must be short")
    found: dict[str, str] = {}
    t = _normalise(hint)
    operands = set()
    for x in reference.get("operands") or []:
        try:
            operands.add(Fraction(str(x)))
        except (ValueError, TypeError):
            pass
    problem = str(problem if problem is not None else reference.get("problem") or "")[:MAX_HINT_CHARS]
    problem_compact = compact(problem) if problem else ""
    forms = [reference.get("answer")] + list(reference.get("answer_aliases") or [])
    for form in forms:
        if form is None or str(form).strip() == "":
            continue
        for k, v in _answer_hits(t, analyse_answer(str(form)), operands, problem, problem_compact).items():
            found.setdefault(k, v)
    solution = reference.get("solution")
    if isinstance(solution, str) and solution.strip():
        frac, final = solution_overlap(hint, solution, min_run)
        if frac >= max_fraction or final:
            found["solution_overlap"] = (f"the hint copies {frac:.0%} of the reference solution verbatim"
                                         + (", including its final step" if final else ""))
    verdict = LeakVerdict(bool(found), list(found), "; ".join(f"{k}: {v}" for k, v in found.items()))
    task_verdict = _task_verdict(hint, reference, task)
    if task_verdict is not None and task_verdict.leaked:
        for d in task_verdict.detectors or ["task"]:
            if d not in verdict.detectors:
                verdict.detectors.append(d)
        verdict.leaked = True
        verdict.reason = "; ".join(r for r in (verdict.reason, task_verdict.reason) if r)
    return verdict


def _task_verdict(hint: str, reference: dict[str, Any], task: str) -> LeakVerdict | None:
    try:
        from mentor.tasks import get_task

        adapter = get_task(task)
    except Exception:  # unknown task, or its module is missing: the generic detectors suffice
        return None
    try:
        return adapter.leak_check(hint, reference)
    except Exception as exc:  # a broken detector must not let a hint through
        return LeakVerdict(True, ["task_error"], f"task '{task}' leak_check raised {type(exc).__name__}: {exc}")
