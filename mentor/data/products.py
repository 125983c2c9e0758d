"""Multiplication problems as chat prompts, generated offline: a problem set a small instruct model fails.

Each row has a conversational `prompt` (one user turn), the `answer`, a worked `solution` (one step per line, as the
math task's tier-2 and tier-3 hints read it) and a `problem_id`. SmolLM2-135M-Instruct scores 0 on 3-digit x 2-digit
products at temperature 1 (design.md), so every group of a GRPO batch collapses.
"""

from __future__ import annotations

import random

PROMPT = "What is {a} * {b}? Work it out, then give the final answer as \\boxed{{...}}."


def worked_solution(a: int, b: int) -> str:
    """`a * b` by splitting b into tens and ones, one step per line."""
    tens, ones = b - b % 10, b % 10
    return "\n".join([f"Split {b} into {tens} + {ones}, so {a} * {b} = {a} * {tens} + {a} * {ones}.",
                      f"{a} * {tens} = {a * tens}.", f"{a} * {ones} = {a * ones}.",
                      f"{a * tens} + {a * ones} = {a * b}."])


def make_rows(n: int = 64, seed: int = 0, digits: tuple[int, int] = (3, 2)) -> list[dict]:
    """`n` distinct problems `a * b`, `a` with `digits[0]` digits and `b` with `digits[1]` (b not a multiple of 10)."""
    rng, seen, rows = random.Random(seed), set(), []
    low = [10 ** (d - 1) for d in digits]
    if n > 9 * low[0] * 8 * low[1]:
        raise ValueError(f"n={n} is more than the distinct {digits[0]}-digit x {digits[1]}-digit problems")
    while len(rows) < n:
        a, b = rng.randrange(low[0], 10 * low[0]), rng.randrange(low[1], 10 * low[1])
        if b % 10 == 0 or (a, b) in seen:
            continue
        seen.add((a, b))
        rows.append({"prompt": [{"role": "user", "content": PROMPT.format(a=a, b=b)}], "answer": str(a * b),
                     "solution": worked_solution(a, b), "problem_id": f"mul-{a}x{b}"})
    return rows


def make_dataset(n: int = 64, seed: int = 0, digits: tuple[int, int] | list[int] = (3, 2)):
    """The rows of `make_rows` as a `datasets.Dataset` (the `dataset_factory` of the real-model CPU config)."""
    from datasets import Dataset

    return Dataset.from_list(make_rows(n, seed, tuple(digits)))
