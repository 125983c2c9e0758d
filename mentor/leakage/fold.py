"""Unicode folding: the text every leak detector reads, and the text the policy is shown.

A hint can hide a number from a detector without hiding it from the policy's tokenizer: invisible characters
inside it (`4\u200b2`), compatibility forms (full-width `４２`, `𝟒𝟐`) and fraction characters (`½`, `1⁄2`, `1∕2`).
`fold_for_detectors` undoes all three before any detector runs; `visible_text` drops the invisible ones from the
hint the policy sees, so what the policy reads is what was checked."""

from __future__ import annotations

import re
import unicodedata

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾ⁿ", "0123456789+-()n")
_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉₊₋₍₎", "0123456789+-()")
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾ⁿ]+")
_SUBSCRIPT_RUN = re.compile("[₀₁₂₃₄₅₆₇₈₉₊₋₍₎]+")
_DIGITS_ONLY = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]+|[₀₁₂₃₄₅₆₇₈₉]+")
_BASE_CLOSERS = ")]}|!'′″"  # besides letters and digits, what a power or an index can follow: `(a+b)²`, `f′²`
_FRACTION_SLASH = str.maketrans({"\u2044": "/", "\u2215": "/"})  # FRACTION SLASH, DIVISION SLASH
_DROPPED = ("Cf", "Mn", "Me")  # format characters (zero-width, soft hyphen, BOM, tags), combining marks left over


def _vulgar_fraction(m: re.Match) -> str:
    """`½` -> `(1/2)`; after a digit `3½` -> `3+(1/2)`, the mixed number it writes."""
    n, d = unicodedata.normalize("NFKC", m.group(2)).split("\u2044")
    return f"{m.group(1)}{'+' if m.group(1) else ''}({n or 0}/{d})"


# The precomposed fractions (½ ¾ ⅓ ... ↉ ⅟ is a prefix, not a fraction): NFKC writes each as n U+2044 d.
_VULGAR = re.compile(r"(\d?)([%s])" % "".join(
    c for c in map(chr, range(0xA0, 0x2190)) if "\u2044" in unicodedata.normalize("NFKC", c)
    and unicodedata.normalize("NFKC", c).split("\u2044")[1]))


def _script(m: re.Match, mark: str, table: dict) -> str:
    """A superscript or subscript run as `^n` / `_n` after a base (`x²`, `x₁`, `(a+b)²`); digits alone with no base
    before them are the number they show (`is ⁴²` is `is 42`, `₁₂ apples`), as the policy reads them."""
    before = m.string[m.start() - 1:m.start()]
    if not (before.isalnum() or before and before in _BASE_CLOSERS) and _DIGITS_ONLY.fullmatch(m.group()):
        return m.group().translate(table)
    return mark + m.group().translate(table)


def visible_text(text: str) -> str:
    r"""`text` without its format characters (Unicode category Cf: zero-width spaces and joiners, word joiners,
    soft hyphens, byte-order marks), which show nothing yet split a number for a detector.

    >>> visible_text("4\u200b2")
    '42'
    """
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def fold_for_detectors(text: str) -> str:
    r"""`text` as the detectors read it: superscripts and subscripts as `^n` and `_n` (digits with no base before them
    as plain digits), fraction characters as `(n/d)`, NFKC (full-width and mathematical digits as ASCII), the fraction
    and division slashes as `/`, and format characters and stray combining marks dropped. Idempotent.

    >>> fold_for_detectors("½")
    '(1/2)'
    """
    text = visible_text(text)
    text = _SUPERSCRIPT_RUN.sub(lambda m: _script(m, "^", _SUPERSCRIPT), text)
    text = _SUBSCRIPT_RUN.sub(lambda m: _script(m, "_", _SUBSCRIPT), text)
    text = _VULGAR.sub(_vulgar_fraction, text)
    text = unicodedata.normalize("NFKC", text).translate(_FRACTION_SLASH)
    return "".join(c for c in text if unicodedata.category(c) not in _DROPPED)
