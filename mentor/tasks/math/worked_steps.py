"""Steps, numbers and arithmetic in a worked attempt, and the intermediate results of a reference solution."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from mentor.mathtext.ascii import to_ascii_math
from mentor.mathtext.steps import split_steps
from mentor.mathtext.value import expression_value


def numbers_in(text: str) -> set[Fraction]:
    """Numbers written in `text` (not subscripts such as the 1 of x_1)."""
    found = re.findall(r"(?<![\w.^])\d+(?:\.\d+)?(?!\w)", to_ascii_math(text))
    return {Fraction(m) for m in found if len(m) <= 1000}  # Python's int() refuses over 4300 digits


@lru_cache(maxsize=512)
def reference_results(solution: str) -> tuple[tuple[frozenset[Fraction], ...], frozenset[Fraction]]:
    """The numbers each step of a worked `solution` introduces (its intermediate results: not seen in an
    earlier step, and above 10 or not whole), and all of them together. Cached: every attempt of a group
    is compared with the same solution."""
    seen: set[Fraction] = set()
    key = []
    for step in split_steps(solution):
        found = numbers_in(step)
        key.append(frozenset(n for n in found - seen if n > 10 or n.denominator != 1))
        seen |= found
    return tuple(key), frozenset().union(*key)


_EQ_SPAN = re.compile(r"[\d.+\-*/^() =]+")  # one character class: linear time on any input


def arithmetic_slips(step: str) -> list[str]:
    """Written calculations in `step` that are false (`7*8=54`, `70+99+70=249`); decimals are compared at
    the precision shown."""
    masked = re.sub(r"[A-Za-z_][\w]*(?:_\(?\w+\)?)?", lambda m: "§" * len(m.group()), to_ascii_math(step))
    slips = []
    for m in _EQ_SPAN.finditer(masked):
        if "=" not in m.group() or len(m.group()) > 200:
            continue
        sides = [s.strip() for s in m.group().split("=")]
        vals = [expression_value(s) for s in sides if s]
        if len(vals) < 2 or None in vals or not any(re.search(r"[-+*/^]", s[1:]) for s in sides if s):
            continue
        decimals = max((len(x.split(".")[1]) for s in sides for x in re.findall(r"\d+\.\d+", s)), default=None)
        tol = Fraction(1, 10 ** decimals) if decimals is not None else 0
        if any(abs(v - vals[0]) > tol for v in vals[1:]):
            slips.append(m.group().strip(" =."))
    return slips
