"""Numbers written in words: `five hundred and seventy-nine`, `minus three`, `two thirds`, `five seven nine`, and digits
with scale or place words: `1 million`, `2.5 thousand`, `5 hundred 79`, `5 hundreds, 7 tens and 9 ones`."""

from __future__ import annotations

import re
from fractions import Fraction

UNIT_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# Place words count units of a place and add up in any order: `5 hundreds, 7 tens and 9 ones` is 579.
_PLACES = {"ones": 1, "units": 1, "tens": 10, **{w + "s": v for w, v in _SCALES.items()}}
_FRACS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
          **{w + s: d for d, w in enumerate("fifth sixth seventh eighth ninth tenth".split(), start=5) for s in ("", "s")}}
_TOKEN = re.compile(r"(?<![\d.])\d{1,15}(?:\.\d{1,15})?(?!\d|\.\d)|[a-z]+")  # longer digit runs are literals, never scaled
_MULTIPLIERS = {**_SCALES, **_PLACES}
MAX_DIGITS = 1000  # digits read one by one, at most (as `mentor.leakage.literals.MAX_DIGITS`)


def _is_numeral(w: str) -> bool:
    return w[0].isdigit()


def word_numbers(text: str) -> list[tuple[Fraction, int, int]]:
    r"""(value, start, end) of each number written in words in `text`: `five hundred and seventy-nine`,
    `minus three`, `two thirds`, `a half`, digits read one by one (`five seven nine` -> 579), and digits with a
    scale or place word (`1 million`, `5 hundred 79`, `5 hundreds, 7 tens and 9 ones`). A numeral alone is not one:
    `mentor.leakage.literals` reads those.

    >>> word_numbers("forty two apples")
    [(Fraction(42, 1), 0, 9)]
    """
    words = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text.lower())]
    found, k = [], 0

    def scaled(j: int) -> bool:  # a numeral at j followed by a scale or place word
        return j + 1 < len(words) and words[j + 1][0] in _MULTIPLIERS and re.fullmatch(r"[\s-]*", text[words[j][2]:words[j + 1][1]])

    while k < len(words):
        w, s, _ = words[k]
        if w not in UNIT_WORDS and w not in _TENS and not (w == "a" and k + 1 < len(words)
                                                           and words[k + 1][0] in {**_SCALES, **_FRACS}) \
                and not (_is_numeral(w) and scaled(k)):
            k += 1
            continue
        total, cur, units_only, digits, j, end, after_place = 0, 0, True, "", k, s, False
        while j < len(words):
            w, ws, we = words[j]
            gap = text[end:ws] if j > k else ""
            if j > k and not re.fullmatch(r"[\s,]*" if after_place else r"[\s-]*", gap):
                break
            prev = words[j - 1][0] if j > k else None
            if _is_numeral(w):  # a numeral starts a number, or follows a scale word (`5 hundred 79`)
                if not (j == k or prev in _MULTIPLIERS or prev == "and" and after_place) or cur and prev not in _SCALES:
                    break
                cur, units_only = cur + Fraction(w), False
            elif w in UNIT_WORDS:
                cur += UNIT_WORDS[w]
                digits += str(UNIT_WORDS[w]) if UNIT_WORDS[w] < 10 else "x"
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
            elif w in _PLACES and cur:
                total, cur, units_only = total + cur * _PLACES[w], 0, False
            elif (w == "and" and j + 1 < len(words) and (words[j + 1][0] in UNIT_WORDS or words[j + 1][0] in _TENS
                                                         or _is_numeral(words[j + 1][0]) and after_place)
                  and not units_only):
                pass
            else:
                break
            after_place = w in _PLACES or w == "and" and after_place
            end = we
            j += 1
        value = Fraction(total + cur)
        if units_only and 1 < len(digits) <= MAX_DIGITS and "x" not in digits:
            value = Fraction(int(digits))  # "five seven nine": digits read one by one
        if j < len(words) and words[j][0] in _FRACS and re.fullmatch(r"[\s-]*", text[end:words[j][1]]):
            value, end = value / _FRACS[words[j][0]], words[j][2]
            j += 1
        sign = re.search(r"\b(?:minus|negative)\s+$", text[max(0, s - 10):s].lower())
        found.append((-value, s - len(sign.group()), end) if sign else (value, s, end))
        k = max(j, k + 1)
    return found
