"""LaTeX and unicode math to plain ASCII math, for values (lengths change)."""

from __future__ import annotations

import re

_UNICODE = {"−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "²": "^2", "³": "^3", "√": "\\sqrt",
            "π": "\\pi", "∞": "\\infty", "°": " ", "\u2009": " ", "\u202f": " ", "\u00a0": " ", "≤": "<=", "≥": ">=",
            "’": "'"}
_LATEX_SIMPLE = [(r"\\(?:left|right|displaystyle|big|Big|bigg|Bigg)\b\.?", ""), (r"\\\$", " "), (r",\\!", ","),
                 (r"\\[,;:! ]|~", " "), (r"\{,\}", ","), (r"\^\s*\{?\s*\\circ\s*\}?|\\degree\b", " "),
                 (r"\\(?:cdot|times|ast)\b", "*"), (r"\\div\b", "/"), (r"\\%", "%"),
                 (r"\\(?:text|mathrm|mathbf|textbf|operatorname|mbox)\s*\{([^{}]*)\}", r" \1 "),
                 (r"\\pm\b", "±"), (r"\\(?:le|leq)\b", "<="), (r"\\(?:ge|geq)\b", ">="), (r"\\neq?\b", "!="),
                 (r"\\infty\b", "oo"), (r"\\pi\b", "pi"), (r"\\([{}])", r"\1"), (r"\$+|\\\(|\\\)|\\\[|\\\]", " ")]
_ARG = r"\s*(?:\{([^{}]*)\}|(\w))"  # a braced argument, or a single character (`\frac12`, `\frac{3}4`)
_FRAC = re.compile(r"\\[dtc]?frac" + _ARG + _ARG)
_OVER = re.compile(r"\{([^{}]*)\\over\b([^{}]*)\}")  # `{1 \over 2}`
# `2\frac{1}{2}` is the mixed number 2 1/2 (as math-verify reads it), not 2 * 1/2; not after `^`, `_` or a letter
_MIXED = re.compile(r"(?<![\w.^_])(\d+)\s*\\[dtc]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\s*\[([^\[\]{}]*)\]\s*\{([^{}]*)\}")  # `\sqrt[3]{2}`
_SQRT_SHORT = re.compile(r"\\sqrt\s*(\d+|[A-Za-z](?![A-Za-z]))")
_BINOM = re.compile(r"\\[dt]?binom\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def _frac(m: re.Match) -> str:
    return f"(({m.group(1) if m.group(1) is not None else m.group(2)})/" \
           f"({m.group(3) if m.group(3) is not None else m.group(4)}))"


def to_ascii_math(text: str) -> str:
    r"""Plain ASCII math for `text`: `\frac{a}{b}` (`\dfrac`, `\cfrac`, `\frac12`, `{a \over b}`) -> `((a)/(b))`,
    `2\frac{1}{2}` -> `(2+((1)/(2)))`, `\sqrt{x}` and `√x` -> `sqrt(x)`, `\binom{a}{b}` -> `C(a,b)`, `\cdot` -> `*`,
    `\pi` and `π` -> `pi`, `\infty` and `∞` -> `oo`, braces -> parentheses; `$`, `\$`, degree marks (`^\circ`, `°`)
    and LaTeX spacing dropped (`10,\!080` and `10{,}080` -> `10,080`), unicode minus and times replaced. Lengths
    change; use it for values, not for positions.

    >>> to_ascii_math(r"\dfrac{3}{4} \cdot \sqrt{2}")
    '((3)/(4)) * sqrt(2)'
    """
    for k, v in _UNICODE.items():
        text = text.replace(k, v)
    for pat, rep in _LATEX_SIMPLE:
        text = re.sub(pat, rep, text)
    text = _MIXED.sub(r"(\1+((\2)/(\3)))", text)
    for _ in range(6):  # innermost first, so nested fractions unwind
        new = re.sub(r"([\^_])\s*\{([^{}]*)\}", r"\1(\2)", text)  # x^{2} -> x^(2), so \frac{x^{2}}{4} unwinds
        new = _ROOT.sub(r"((\2)^(1/(\1)))", _SQRT.sub(r"sqrt(\1)", new))
        new = _BINOM.sub(r"C(\1,\2)", _OVER.sub(r"((\1)/(\2))", _FRAC.sub(_frac, new)))
        if new == text:
            break
        text = new
    text = re.sub(r"\\sqrt(?=\s*\()", "sqrt", _SQRT_SHORT.sub(r"sqrt(\1)", text))
    text = re.sub(r"\\boxed|\\fbox", "", text)
    return text.replace("{", "(").replace("}", ")")


def compact(s: str) -> str:
    """`s` as ASCII math without spaces, `*`, doubled parentheses or boxed markers, lower-cased: for
    comparing expressions as text."""
    return re.sub(r"[\s*]|\[\[|\]\]", "", to_ascii_math(s)).replace("((", "(").replace("))", ")").lower()
