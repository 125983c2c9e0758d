r"""Answers of several measures, read the same way for the reference and for a completion.

    measure(r"5 \text{ ft }3 \text{ in}")            -> ((5, 'ft'), (3, 'in')), a compound measure
    measure(r"2\text{ hours and }30\text{ minutes}") -> ((2, 'h'), (30, 'min')), a compound measure
    measure(r"4\text{ cm by }6\text{ cm}")          -> ((4, 'cm'), (6, 'cm')), dimensions

A compound measure's value-unit pairs are compared (`3 ft 5 in` is not `5 ft 3 in`), dimensions' values in order.
A list with one unit throughout (`5\text{ cm and }7\text{ cm}`) is no measure here: `answer_body` drops its units and
it is read as a list. Units are not converted (`63 in` is not `5 ft 3 in`); their spellings are (`ft`, `foot`, `feet`).
The text is read word by word, with no pattern over the whole of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mentor.mathtext.forms import HEDGE_WORDS, answer_parts, ascii_answer, is_unit_word
from mentor.mathtext.steps import word_list
from mentor.mathtext.value import Number, close_enough, expression_value

MAX_MEASURE_CHARS = 200  # a longer answer is not read as measures
_SPELLINGS = {"ft": ("foot", "feet"), "in": ("inch", "inches"), "yd": ("yard", "yards"), "mi": ("mile", "miles"),
              "mm": ("millimeter", "millimeters", "millimetre", "millimetres"),
              "cm": ("centimeter", "centimeters", "centimetre", "centimetres"),
              "m": ("meter", "meters", "metre", "metres"), "km": ("kilometer", "kilometers", "kilometre", "kilometres"),
              "h": ("hr", "hrs", "hour", "hours"), "min": ("mins", "minute", "minutes"),
              "s": ("sec", "secs", "second", "seconds"), "lb": ("lbs", "pound", "pounds"), "oz": ("ounce", "ounces"),
              "g": ("gram", "grams"), "kg": ("kgs", "kilogram", "kilograms")}
_UNIT_NAME = {spelling: unit for unit, spellings in _SPELLINGS.items() for spelling in spellings}


@dataclass(frozen=True)
class Measure:
    """An answer of several measures.

    Attributes:
        items: (value, unit) of each measure, in the order written; the unit is "" where none is written.
        dimensions: the measures are joined by `by` (`4 cm by 6 cm`): compared in order.
    """

    items: tuple[tuple[Number, str], ...]
    dimensions: bool


def _unit_name(words: list[str]) -> str:
    """One spelling of a unit (`feet` -> `ft`, `square inches` -> `square in`, `cm^(2)` -> `cm^2`)."""
    names = []
    for word in words:
        base, _, power = word.lower().partition("^")
        plural = len(base) > 3 and base.endswith("s") and not base.endswith("ss")
        base = _UNIT_NAME.get(base, base[:-1] if plural else base)
        names.append(base + ("^" + power.strip("()") if power else ""))
    return " ".join(names)


def _joins_dimensions(word: str, value: list[str], unit: list[str]) -> bool:
    """`by` after a value, or `x` after a unit (`4 cm x 6 cm`; `4 x 6` is a product)."""
    return word.lower() == "by" and bool(value) or word.lower() == "x" and bool(unit)


def _part_measures(part: str) -> tuple[list[tuple[Number, str]], bool] | None:
    """(measures, whether joined by `by`) of one part of a list (`5 ft 3 in`, `4 cm by 6 cm`); None when a value
    is not a number."""
    pieces, value, unit, dimensions = [], [], [], False
    for word in part.split():
        if _joins_dimensions(word, value, unit):
            pieces.append((value, unit))
            value, unit, dimensions = [], [], True
        elif value and is_unit_word(word):
            unit.append(word)
        elif unit:  # a value after a unit: the next measure (`5 ft 3 in`)
            pieces.append((value, unit))
            value, unit = [word], []
        else:
            value.append(word)
    pieces.append((value, unit))
    items = []
    for value, unit in pieces:
        number = expression_value(" ".join(value), allow_float=True) if value else None
        if number is None:
            return None
        items.append((number, _unit_name(unit)))
    return items, dimensions


def measure(text: str) -> Measure | None:
    r"""The measures of an answer (LaTeX or ASCII, boxed or not): a compound measure (units that differ:
    `5 \text{ ft }3 \text{ in}`, `2\text{ hours and }30\text{ minutes}`) or dimensions (`4\text{ cm by }6\text{ cm}`,
    `4 by 6`). None for any other answer: one value, a list with one unit throughout, a hedge (`or`), a value that is
    not a number, or more than `MAX_MEASURE_CHARS` characters."""
    body = ascii_answer(text)
    if len(body) > MAX_MEASURE_CHARS or HEDGE_WORDS & set(word_list(body)):
        return None
    items, dimensions, parts = [], False, answer_parts(body)
    for part in parts:
        read = _part_measures(part)
        if read is None:
            return None
        items += read[0]
        dimensions |= read[1]
    if len(items) < 2 or dimensions and len(parts) > 1:  # `4 cm by 6 cm, 2 cm`: not read
        return None
    if not dimensions and len({unit for _, unit in items if unit}) < 2:
        return None
    return Measure(tuple(items), dimensions)


def same_measures(got: str, answer: str) -> bool | None:
    """Whether the answer `got` states the measures of `answer`: dimensions by their values in order (a unit
    compared where both give one), a compound measure by its value-unit pairs in any order. False when only one of
    the two is measures (`63 in` for `5 ft 3 in`: no conversion; `5 ft 3 in` for `5`); None when neither is."""
    a, g = measure(answer), measure(got)
    if a is None and g is None:
        return None
    if a is None or g is None or a.dimensions != g.dimensions or len(a.items) != len(g.items):
        return False
    if a.dimensions:
        return all(close_enough(x, y) and (u == v or not u or not v) for (x, u), (y, v) in zip(a.items, g.items))
    pairs = zip(sorted(a.items, key=_by_unit), sorted(g.items, key=_by_unit))
    return all(u == v and close_enough(x, y) for (x, u), (y, v) in pairs)


def _by_unit(item: tuple[Number, str]) -> tuple[str, Number]:
    return item[1], item[0]
