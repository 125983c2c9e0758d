"""Easy arithmetic as chat prompts, generated offline: the families a 135M instruct model might just manage.

Families (`FAMILIES`): `sum` (2-digit + 2-digit), `mul` (2-digit x 1-digit) and `word` (a one-step word problem: a
2-digit sum told as a story). Each row has a conversational `prompt` (one user turn), the `answer`, a worked
`solution` (one step per line, as the math task reads it), the problem's `operands`, `knowledge` (the family's method,
Scaf-GRPO's tier 1: no number of this problem) and `plan` (its steps without their results, tier 2), and a
`problem_id`. Seeded: the same `n`, `seed` and family give the same rows.
"""

from __future__ import annotations

import random

FORMAT = " Work it out, then give the final answer as \\boxed{...}."
NAMES = ["Mia", "Ben", "Ana", "Leo", "Zoe", "Sam", "Ivy", "Max"]
THINGS = ["stickers", "apples", "marbles", "books", "shells", "coins", "cards", "stamps"]

KNOWLEDGE = {
    "sum": "To add two 2-digit numbers, add the tens and the ones separately, then add the two results.",
    "mul": "To multiply a 2-digit number by a 1-digit number, split the 2-digit number into tens and ones, multiply "
           "each part, then add the two products.",
    "word": "Getting more of something means adding: the total is the first amount plus the amount added. Add the "
            "tens and the ones separately, then add the two results.",
}


def _sum_steps(a: int, b: int) -> list[str]:
    return [f"Split {a} into {a - a % 10} + {a % 10}, and {b} into {b - b % 10} + {b % 10}.",
            f"Add the tens: {a - a % 10} + {b - b % 10} = {a - a % 10 + b - b % 10}.",
            f"Add the ones: {a % 10} + {b % 10} = {a % 10 + b % 10}.",
            f"{a - a % 10 + b - b % 10} + {a % 10 + b % 10} = {a + b}."]


def _mul_steps(a: int, b: int) -> list[str]:
    tens, ones = a - a % 10, a % 10
    return [f"Split {a} into {tens} + {ones}.", f"{tens} * {b} = {tens * b}.", f"{ones} * {b} = {ones * b}.", f"{tens * b} + {ones * b} = {a * b}."]


def _row(family: str, a: int, b: int, rng: random.Random) -> dict:
    if family == "sum":
        question, steps, answer = f"What is {a} + {b}?", _sum_steps(a, b), a + b
        plan = (f"Split {a} and {b} into tens and ones, add the two tens, add the two ones, then add those two "
                f"results.")
    elif family == "mul":
        question, steps, answer = f"What is {a} * {b}?", _mul_steps(a, b), a * b
        plan = f"Split {a} into tens and ones, multiply each part by {b}, then add the two products."
    else:
        name, thing = rng.choice(NAMES), rng.choice(THINGS)
        question = f"{name} has {a} {thing} and gets {b} more. How many {thing} does {name} have now?"
        steps, answer = [f"{name} gets more, so add: {a} + {b}.", *_sum_steps(a, b)], a + b
        plan = (f"Write the total as {a} + {b}; split both into tens and ones, add the tens, add the ones, then add "
                f"those two results.")
    return {"prompt": [{"role": "user", "content": question + FORMAT}],
            "answer": str(answer), "solution": "\n".join(steps), "operands": [a, b],
            "knowledge": KNOWLEDGE[family], "plan": plan, "problem_id": f"{family}-{a}-{b}"}


FAMILIES = ("sum", "mul", "word")


def make_rows(family: str, n: int = 16, seed: int = 0) -> list[dict]:
    """`n` distinct problems of `family` (one of FAMILIES); operands with a nonzero ones digit, so every step of the
    worked solution does something."""
    if family not in FAMILIES:
        raise ValueError(f"family={family!r}: expected one of {', '.join(FAMILIES)}")
    rng, seen, rows = random.Random(seed), set(), []
    second = (11, 99) if family != "mul" else (2, 9)
    if n > 81 * (81 if family != "mul" else 8):
        raise ValueError(f"n={n} is more than the distinct problems of family {family!r}")
    while len(rows) < n:
        a, b = rng.randint(11, 99), rng.randint(*second)
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
