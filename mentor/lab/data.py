r"""The lab's problems: fixed-width addition (this module), or the composed lab's chains (`lab="composed"`, whose
rows mentor.lab.composed writes).

Easy level: operands 0..99; hard level: operands 100..999. Every prompt has the same shape,
`Q: 023+045=? A:`, and the reference completion is ` 0068` (a space, then the sum as 4 digits).
Operand pairs are split into train and held-out by a hash of the pair, so a held-out problem is never
a training problem at any level or seed.

The prompt, answer and hint formats belong to the task (`mentor.tasks.arithmetic`). Hints have two placements:

- ``prompt``: the hint text goes into the prompt, formatted only by `hint_prompt`:
  `Hint: 05\n` + `Q: 123+456=? A:`. Pre-training shows the policy a share of hinted easy problems in exactly
  this format, so it has learned that a hint of digits is the start of the answer.
- ``prefix``: the partial answer starts the response: prompt `Q: 123+456=? A:` and the completion
  begins ` 05` (see `prefix_prompt`).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from mentor.tasks.arithmetic import format_answer, format_prompt

LABS = ("addition", "composed")
LEVELS = {"easy": (0, 99), "hard": (100, 999)}
SPLITS = ("train", "heldout", "all")
HELDOUT_BUCKETS = 10  # 1 pair in 10 is held out


def pair_id(a: int, b: int) -> str:
    return f"add-{a:03d}-{b:03d}"


def split_of(a: int, b: int) -> str:
    """`heldout` for about 1 pair in 10 (by a hash of the pair), else `train`. Same at every level."""
    h = hashlib.sha256(f"{a}+{b}".encode()).digest()
    return "heldout" if int.from_bytes(h[:4], "big") % HELDOUT_BUCKETS == 0 else "train"


def make_row(a: int, b: int, level: str | None = None) -> dict[str, Any]:
    if level is None:
        level = "easy" if max(a, b) <= LEVELS["easy"][1] else "hard"
    return {"prompt": format_prompt(a, b), "answer": format_answer(a, b), "operands": [a, b],
            "problem_id": pair_id(a, b), "level": level}


def _check(level: str, split: str) -> tuple[int, int]:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {sorted(LEVELS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {SPLITS}")
    return LEVELS[level]


def all_pairs(level: str, split: str = "all") -> list[tuple[int, int]]:
    """Every operand pair of a level and split, in a fixed order."""
    lo, hi = _check(level, split)
    return [(a, b) for a in range(lo, hi + 1) for b in range(lo, hi + 1)
            if split == "all" or split_of(a, b) == split]


def generate_problems(level: str, n: int, seed: int = 0, split: str = "train", lab: str = "addition"
                      ) -> list[dict[str, Any]]:
    """`n` distinct problems of a level and split, deterministic for the seed; `lab`: `addition` or `composed`."""
    if lab == "composed":
        from mentor.lab.composed import chain_problems

        return chain_problems(level, n, seed, split)
    if lab != "addition":
        raise ValueError(f"unknown lab {lab!r}; use one of {LABS}")
    lo, hi = _check(level, split)
    rng = random.Random(f"mentor-lab/{level}/{split}/{seed}")
    size = (hi - lo + 1) ** 2
    if n > size // 2:  # dense: sample from the full list
        pairs = all_pairs(level, split)
        if n > len(pairs):
            raise ValueError(f"level {level!r} split {split!r} has only {len(pairs)} problems, asked for {n}")
        return [make_row(a, b, level) for a, b in rng.sample(pairs, n)]
    seen: set[tuple[int, int]] = set()
    rows = []
    while len(rows) < n:
        a, b = rng.randint(lo, hi), rng.randint(lo, hi)
        if (a, b) in seen or (split != "all" and split_of(a, b) != split):
            continue
        seen.add((a, b))
        rows.append(make_row(a, b, level))
    return rows


def make_dataset(level: str = "hard", n: int | None = None, seed: int = 0, split: str = "train",
                 lab: str = "addition"):
    """A `datasets.Dataset` of `generate_problems` (plain-text prompts, so TRL applies no chat template): `n`
    problems, by default 1000 of the addition lab, 4000 of the composed lab. Columns: prompt, answer, problem_id,
    level, and the addition lab's operands or the composed lab's digits and ops."""
    from datasets import Dataset

    n = n if n is not None else 4000 if lab == "composed" else 1000
    return Dataset.from_list(generate_problems(level, n, seed, split, lab))
