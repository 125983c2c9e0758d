"""Arithmetic as chat prompts, generated offline: the easy families a 135M instruct model might just manage, and the
products it always fails.

Families (`FAMILIES`): `sum` (2-digit + 2-digit), `mul` (2-digit x 1-digit; other sizes with `digits`) and `word` (a
one-step word problem: a 2-digit sum told as a story). Each row has a conversational `prompt` (one user turn), the
`answer`, a worked `solution` (one step per line, as the math task reads it), the problem's `operands`, `knowledge`
(the family's method, Scaf-GRPO's tier 1: no number of this problem) and `plan` (its steps without their results,
tier 2), and a `problem_id`. Seeded: the same `n`, `seed`, family and digits give the same rows.

`products` are the real-model CPU config's problems: 3-digit x 2-digit `mul` rows, which SmolLM2-135M-Instruct fails at
temperature 1 (0 of 6 groups rescued even with a partial solution), so every group of a GRPO batch collapses.
"""

from __future__ import annotations

import random

FORMAT = " Work it out, then give the final answer as \\boxed{...}."
NAMES = ["Mia", "Ben", "Ana", "Leo", "Zoe", "Sam", "Ivy", "Max"]
THINGS = ["stickers", "apples", "marbles", "books", "shells", "coins", "cards", "stamps"]

KNOWLEDGE = {
    "sum": "To add two 2-digit numbers, add the tens and the ones separately, then add the two results.",
    "mul": "To multiply a {0}-digit number by a {1}-digit number, split the {2}-digit number into tens and ones, "
           "multiply each part, then add the two products.",  # {0}, {1}: the operands' digits; {2}: the split one's
    "word": "Getting more of something means adding: the total is the first amount plus the amount added. Add the "
            "tens and the ones separately, then add the two results.",
}
DIGITS = {"sum": (2, 2), "mul": (2, 1), "word": (2, 2)}  # each family's operand sizes, unless `digits` says
# The columns a chat math training run reads. A dataset of `products` leaves out `operands`, from which the mentor
# would infer the arithmetic task (fixed-width sums) instead of math.
CHAT_MATH_COLUMNS = ("prompt", "answer", "solution", "problem_id")


def _sum_steps(a: int, b: int) -> list[str]:
    return [f"Split {a} into {a - a % 10} + {a % 10}, and {b} into {b - b % 10} + {b % 10}.",
            f"Add the tens: {a - a % 10} + {b - b % 10} = {a - a % 10 + b - b % 10}.",
            f"Add the ones: {a % 10} + {b % 10} = {a % 10 + b % 10}.",
            f"{a - a % 10 + b - b % 10} + {a % 10 + b % 10} = {a + b}."]


def _mul_steps(a: int, b: int) -> tuple[list[str], str]:
    """The worked solution and the plan of `a * b`: a multiplier `b` of two digits or more is split into tens and
    ones, else `a` is; each partial product is written in the problem's order."""
    split, other = (b, a) if b >= 10 else (a, b)
    tens, ones = split - split % 10, split % 10

    def times(part: int) -> str:
        return f"{a} * {part}" if split == b else f"{part} * {b}"

    steps = [f"Split {split} into {tens} + {ones}.", f"{times(tens)} = {other * tens}.",
             f"{times(ones)} = {other * ones}.", f"{other * tens} + {other * ones} = {a * b}."]
    each = f"multiply {a} by each part" if split == b else f"multiply each part by {b}"
    return steps, f"Split {split} into tens and ones, {each}, then add the two products."


def _row(family: str, a: int, b: int, rng: random.Random) -> dict:
    knowledge = KNOWLEDGE[family]
    if family == "sum":
        question, steps, answer = f"What is {a} + {b}?", _sum_steps(a, b), a + b
        plan = (f"Split {a} and {b} into tens and ones, add the two tens, add the two ones, then add those two "
                f"results.")
    elif family == "mul":
        (question, answer), (steps, plan) = (f"What is {a} * {b}?", a * b), _mul_steps(a, b)
        knowledge = knowledge.format(len(str(a)), len(str(b)), len(str(b if b >= 10 else a)))
    else:
        name, thing = rng.choice(NAMES), rng.choice(THINGS)
        question = f"{name} has {a} {thing} and gets {b} more. How many {thing} does {name} have now?"
        steps, answer = [f"{name} gets more, so add: {a} + {b}.", *_sum_steps(a, b)], a + b
        plan = (f"Write the total as {a} + {b}; split both into tens and ones, add the tens, add the ones, then add "
                f"those two results.")
    return {"prompt": [{"role": "user", "content": question + FORMAT}],
            "answer": str(answer), "solution": "\n".join(steps), "operands": [a, b],
            "knowledge": knowledge, "plan": plan, "problem_id": f"{family}-{a}-{b}"}


FAMILIES = ("sum", "mul", "word")


def _operand_range(digits: int) -> tuple[int, int]:
    """The operands of `digits` digits a problem draws from: 2 to 9 (x 1 teaches nothing), 11 to 99, 101 to 999..."""
    return 10 ** (digits - 1) + 1, 10 ** digits - 1


def make_rows(family: str, n: int = 16, seed: int = 0, digits: tuple[int, int] | list[int] | None = None) -> list[dict]:
    """`n` distinct problems of `family` (one of FAMILIES); operands with a nonzero ones digit, so every step of the
    worked solution does something. `digits`: the operands' sizes (`mul` only; default `DIGITS[family]`)."""
    if family not in FAMILIES:
        raise ValueError(f"family={family!r}: expected one of {', '.join(FAMILIES)}")
    if digits is not None and family != "mul":
        raise ValueError(f"digits={digits!r}: only the mul family takes other operand sizes")
    digits = tuple(digits or DIGITS[family])
    if len(digits) != 2 or not all(isinstance(d, int) and 1 <= d <= 6 for d in digits) or digits[0] < 2:
        raise ValueError(f"digits={digits!r}: give two sizes from 1 to 6, the first at least 2 (it may be split)")
    (a_low, a_high), (b_low, b_high) = _operand_range(digits[0]), _operand_range(digits[1])
    distinct = sum(a % 10 != 0 for a in range(a_low, a_high + 1)) * sum(b % 10 != 0 for b in range(b_low, b_high + 1))
    if n > distinct:
        raise ValueError(f"n={n} is more than the distinct problems of family {family!r}")
    rng, seen, rows = random.Random(seed), set(), []
    while len(rows) < n:
        a, b = rng.randint(a_low, a_high), rng.randint(b_low, b_high)
        if a % 10 == 0 or b % 10 == 0 or (a, b) in seen:
            continue
        seen.add((a, b))
        rows.append(_row(family, a, b, rng))
    return rows


def make_dataset(family: str = "sum", n: int = 64, seed: int = 0):
    """The rows of `make_rows` as a `datasets.Dataset` (the `dataset_factory` of the SmolLM2 CPU config), less
    `operands`: that column points the mentor at the lab's 4-digit `arithmetic` task, and these are chat problems
    for the `math` task."""
    from datasets import Dataset

    return Dataset.from_list(make_rows(family, n, seed)).remove_columns(["operands"])


def products(n: int = 64, seed: int = 0, digits: tuple[int, int] | list[int] = (3, 2)) -> list[dict]:
    """`n` problems `a * b` the real-model CPU config trains on (3-digit x 2-digit by default), with the
    CHAT_MATH_COLUMNS only."""
    return [{c: row[c] for c in CHAT_MATH_COLUMNS} for row in make_rows("mul", n, seed, digits)]


def products_dataset(n: int = 64, seed: int = 0, digits: tuple[int, int] | list[int] = (3, 2)):
    """`products` as a `datasets.Dataset` (the `dataset_factory` of the real-model CPU config)."""
    from datasets import Dataset

    return Dataset.from_list(products(n, seed, digits))
