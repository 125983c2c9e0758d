"""Decimal numerals of any length as exact fractions.

Python refuses `int()` and `Fraction()` of a string over 4,300 digits (`sys.set_int_max_str_digits`, a process-wide
guard a library must not lift), so a reference answer or a completion with a longer number raised inside TRL's step.
`numeral_value` converts such a numeral in chunks, up to `MAX_NUMERAL_DIGITS`; a longer one is refused."""

from __future__ import annotations

import re
from fractions import Fraction

MAX_NUMERAL_DIGITS = 60_000  # about 200,000 bits, the most `mentor.mathtext.cost` lets an expression build
_CHUNK = 4000  # under Python's 4,300-digit limit
_NUMERAL = re.compile(r"(\d*)(?:\.(\d*))?")


def _digits_value(digits: str) -> int:
    value = 0
    for i in range(0, len(digits), _CHUNK):
        chunk = digits[i:i + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def numeral_value(text: str) -> Fraction:
    r"""The exact value of a decimal numeral without sign or exponent (`579`, `0.50`, `.5`, `5.`).

    Raises:
        ValueError: `text` is not such a numeral, or has more than `MAX_NUMERAL_DIGITS` digits.

    >>> numeral_value("0.50"), numeral_value(".5"), numeral_value("1200")
    (Fraction(1, 2), Fraction(1, 2), Fraction(1200, 1))
    """
    m = _NUMERAL.fullmatch(text)
    if not m or not (m.group(1) or m.group(2)):
        raise ValueError(f"not a decimal numeral: {text[:40]!r}")
    whole, frac = m.group(1), m.group(2) or ""
    if len(whole) + len(frac) > MAX_NUMERAL_DIGITS:
        raise ValueError(f"a numeral of {len(whole) + len(frac)} digits, more than {MAX_NUMERAL_DIGITS}")
    if len(whole) + len(frac) <= _CHUNK:
        return Fraction(text)
    return Fraction(_digits_value(whole + frac or "0"), 10 ** len(frac))
