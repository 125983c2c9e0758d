"""LaTeX and unicode math to plain ASCII math, for values (lengths change)."""

from __future__ import annotations

import re

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


def to_ascii_math(text: str) -> str:
    r"""Plain ASCII math for `text`: `\frac{a}{b}` -> `((a)/(b))`, `\sqrt{x}` -> `sqrt(x)`,
    `\binom{a}{b}` -> `C(a,b)`, `\cdot` -> `*`, braces -> parentheses, `$` dropped, unicode minus and
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


def compact(s: str) -> str:
    """`s` as ASCII math without spaces, `*`, doubled parentheses or boxed markers, lower-cased: for
    comparing expressions as text."""
    return re.sub(r"[\s*]|\[\[|\]\]", "", to_ascii_math(s)).replace("((", "(").replace("))", ")").lower()
