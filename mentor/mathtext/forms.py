r"""The written forms of a final answer (MATH, GSM8K), read the same way for the reference and for a completion.

    answer_body(r"\$1,200")              -> "1200"      currency, units, degree marks dropped; separators joined
    answer_body(r"20\text{ cm}^2")       -> "20"
    answer_values("x=6, y=5")            -> ((6, 5), False)
    answer_values("25%")                 -> ((1/4,), True)
    lists_options(r"\text{Yes or No}", r"\text{Yes}") -> True

Read: `\$` and `$`, units as text or words after a value (`\text{ cm}`, `\mbox{ minutes}`, `dollars`,
`square units`, `cm^2`, `(x+1)\text{ cm}`), and after each item of a list (`5\text{ cm and }7\text{ cm}`), degree marks
(`^\circ`, `°`, `\degree`), percent, thousands separators (`1,200`, `10{,}080`, `10,\!080`, `1\,000`), `x =` before a
value, and lists (`,`, `;`, `and`, `or`, `±`). Measures of several units or dimensions (`5 ft 3 in`, `4 cm by 6 cm`):
`mentor.mathtext.measures`. Not read: numbers in other languages' conventions (`1.200,50`), Roman numerals, other
bases, unit conversions (`2 m` is not `200 cm`).
"""

from __future__ import annotations

import re
from fractions import Fraction

from mentor.mathtext.ascii import to_ascii_math
from mentor.mathtext.steps import word_list
from mentor.mathtext.value import expression_value, variables

_BOXED = re.compile(r"^\\boxed\s*\{(.*)\}$")
_UNIT_GROUP = re.compile(r"\\(?:text|textrm|textnormal|mbox|mathrm|rm)\s*\{([^{}]*)\}")
_UNIT_POWER = re.compile(r"\^\s*\{?\s*[23]\s*\}?")
_UNIT_WORD = re.compile(r"[A-Za-z]{2,}(?:\^\(?[23]\)?)?")
_NOT_UNITS = {"pi", "oo", "or", "and", "by", "sqrt", "sin", "cos", "tan", "log", "ln", "exp", "floor", "ceil", "binom"}
MAX_UNIT_WORDS = 4  # `miles per hour`, `square units`
_GROUPED = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d])")  # `1,200`: a comma then three digits, no space
_SPACED = re.compile(r"-?\d{1,3}(?: \d{3})+(?:\.\d+)?")  # `1 000`, from `1\,000`: only as the whole answer
_SEPARATOR = re.compile(r"[()\[\]{}]|[,;]|\b(?:and|or)\b")
_NAME = re.compile(r"^\s*(?:[A-Za-z]\w*(?:\([^()]*\))?\s*=\s*)+")  # `x=`, `f(x)=`, `x=y=`
HEDGE_WORDS = {"or", "either", "maybe", "perhaps", "possibly"}


def _drop_unit_text(latex: str) -> str:
    r"""`latex` without a last unit written as text after a number (`20\text{ cm}`, `12\pi \text{ square units}`,
    `5\,\mathrm{cm}^2`). Checked with str methods: an anchored pattern would rescan the text from every start."""
    last = None
    for last in _UNIT_GROUP.finditer(latex):
        pass
    if last is None:
        return latex
    unit, tail = last.group(1), latex[last.end():].strip(" .")
    head = latex[:last.start()].rstrip(" ~\\,;")
    if (all(c.isalpha() or c in " .~" for c in unit) and any(c.isalpha() for c in unit)
            and not set(word_list(unit)) & _NOT_UNITS and (not tail or _UNIT_POWER.fullmatch(tail))
            and (head[-1:].isdigit() or head.endswith(("}", ")", "\\pi", "%")))):
        return head
    return latex


def is_unit_word(word: str) -> bool:
    """Whether an ASCII word can name a unit (`cm`, `dollars`, `cm^2`): two letters or more, not a function, a
    constant or a list word."""
    return bool(_UNIT_WORD.fullmatch(word)) and word.split("^")[0].lower() not in _NOT_UNITS


def _drop_unit_words(body: str) -> str:
    r"""ASCII `body` without up to `MAX_UNIT_WORDS` unit words after a number (`42 dollars`, `9pi square units`).
    Not after an expression in letters: in `x^2 + 3 xy` the last word is a product, not a unit (a unit written as
    `\text{}` after one is dropped before, by `_drop_unit_text`)."""
    words = body.split()
    kept = len(words)
    while kept > 1 and len(words) - kept < MAX_UNIT_WORDS and is_unit_word(words[kept - 1]):
        kept -= 1
    if kept == len(words) or not (words[kept - 1][-1:].isdigit() or words[kept - 1].endswith((")", "pi", "%"))):
        return body
    if variables(unnamed(" ".join(words[:kept]))) != frozenset():  # `3 xy`, `(x+1) cm`: letters are variables
        return body
    return " ".join(words[:kept])


def _drop_part_units(body: str) -> str:
    """ASCII `body` without the unit words after each value of a list (`5 cm and 7 cm` -> `5 and 7`): each part
    between separators outside brackets is read alone, once."""
    out, depth, start = [], 0, 0
    for m in _SEPARATOR.finditer(body):
        s = m.group()
        if s in "([{":
            depth += 1
        elif s in ")]}":
            depth -= 1
        elif depth == 0:
            out += [_drop_unit_words(body[start:m.start()]), f" {s} " if s.isalpha() else s]
            start = m.end()
    return "".join(out + [_drop_unit_words(body[start:])])


def ascii_answer(text: str) -> str:
    r"""The ASCII math of an answer without its `\boxed{}`, thousands separators joined, units kept
    (`\boxed{5 \text{ ft }3 \text{ in}}` -> `5  ft 3  in`, up to spaces)."""
    body = to_ascii_math(_BOXED.sub(r"\1", str(text).strip())).strip().rstrip(".").strip()
    return _GROUPED.sub(lambda m: m.group().replace(",", ""), body)


def answer_body(text: str) -> str:
    r"""The ASCII math of an answer, as its value is read: the `\boxed{}` around it, currency signs, trailing units
    and degree marks dropped, thousands separators joined (`\$1,200` -> `1200`, `42^\circ` -> `42`).

    >>> answer_body(r"\$1,200"), answer_body(r"42^\circ"), answer_body(r"\text{Yes}")
    ('1200', '42', 'Yes')
    """
    body = to_ascii_math(_drop_unit_text(_BOXED.sub(r"\1", str(text).strip()))).strip().rstrip(".").strip()
    body = _GROUPED.sub(lambda m: m.group().replace(",", ""), _drop_part_units(body))
    return body.replace(" ", "") if _SPACED.fullmatch(body) else body


def _split(body: str) -> tuple[list[str], bool]:
    """(parts of `body` split at `,`, `;`, `and`, `or` outside brackets; whether `body` is one bracketed group: its
    first bracket closes at its end)."""
    parts, depth, start, closed_at = [], 0, 0, None
    for m in _SEPARATOR.finditer(body):
        s = m.group()
        if s in "([{":
            depth += 1
        elif s in ")]}":
            depth -= 1
            closed_at = m.end() if depth == 0 and closed_at is None else closed_at
        elif depth == 0:
            parts.append(body[start:m.start()])
            start = m.end()
    parts = [p.strip() for p in parts + [body[start:]] if p.strip()]
    return parts, len(parts) == 1 and body[:1] in "([{" and closed_at == len(body) and depth == 0


def answer_parts(body: str) -> list[str]:
    r"""The parts of an answer's ASCII `body`, split at `,`, `;`, `and`, `or` outside brackets (`(0,1)` is one).

    >>> answer_parts("376 and 625"), answer_parts("(0,1)")
    (['376', '625'], ['(0,1)'])
    """
    return _split(body)[0]


def elements(body: str) -> int:
    """How many items an answer lists: its parts, or the items inside one bracketed group (`(1, 2)`: 2)."""
    parts, bracketed = _split(body)
    return len(_split(body[1:-1])[0]) if bracketed else len(parts)


def is_tuple(body: str) -> bool:
    """Whether an answer's ASCII `body` is one bracketed group of several items: a point, a tuple or an interval,
    where order and brackets matter."""
    bracketed = _split(body)[1]
    return bracketed and len(_split(body[1:-1])[0]) > 1


def unnamed(body: str) -> str:
    """`body` without the names before its value (`x = 3` -> `3`, `y = 2x+1` -> `2x+1`, `f(x)=0` -> `0`)."""
    return _NAME.sub("", body) or body


def answer_values(body: str) -> tuple[tuple[Fraction, ...], bool] | None:
    r"""(exact values, whether the answer is one percentage) of an answer's ASCII `body` (`answer_body`): one value,
    or one per part (`376 and 625`, `x=6, y=5`, `x=±1, ±2`, `f(x)=0 or f(x)=1`); a percentage's value is its
    fraction (`25%`: 1/4). None when a part is not a number.

    >>> answer_values("25%"), answer_values("x=6, y=5")
    (((Fraction(1, 4),), True), ((Fraction(6, 1), Fraction(5, 1)), False))
    """
    whole = expression_value(unnamed(body).replace("±", ""))
    if whole is not None:
        return ((whole, -whole) if "±" in body else (whole,)), body.endswith("%")
    values: list[Fraction] = []
    for part in answer_parts(body):
        v = expression_value(unnamed(part).replace("±", "").strip())
        if v is None:
            return None
        values += [v, -v] if "±" in part else [v]
    return (tuple(values), False) if values else None


def lists_options(got: str, answer: str) -> bool:
    r"""Whether a final answer `got` hedges against the reference `answer`: it has a word of choice (`or`, `either`,
    `maybe`) that the answer lacks, lists more items than the answer (`Monday, Tuesday, ...` for `Monday`,
    `\boxed{200, 1}` for `1,200`), or a `±` where the answer is one item.

    >>> lists_options(r"\boxed{200, 1}", "1,200"), lists_options("even or odd", "even"), lists_options("1200", "1,200")
    (True, True, False)
    """
    g, a = answer_body(got), answer_body(answer)
    if HEDGE_WORDS & set(word_list(g)) - set(word_list(a)):
        return True
    return elements(g) > elements(a) or "±" in g and "±" not in a and elements(a) == 1
