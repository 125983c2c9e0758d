"""Problems and datasets of any lab (no torch import): each lab's own module writes its rows (mentor.lab.addition's
fixed-width sums, mentor.lab.composed's chains), found through its record in mentor.lab.labs."""

from __future__ import annotations

from typing import Any

from mentor.lab.labs import get_lab


def generate_problems(level: str, n: int, seed: int = 0, split: str = "train", lab: str = "addition"
                      ) -> list[dict[str, Any]]:
    """`n` distinct problems of a lab's level and split, deterministic for the seed."""
    return get_lab(lab).problems(level, n, seed, split)


def make_dataset(level: str = "hard", n: int | None = None, seed: int = 0, split: str = "train",
                 lab: str = "addition"):
    """A `datasets.Dataset` of `generate_problems` (plain-text prompts, so TRL applies no chat template): `n`
    problems, by default the lab's `train_problems` (1000 of the addition lab, 4000 of the composed lab). Columns:
    prompt, answer, problem_id, level, and the addition lab's operands or the composed lab's digits and ops."""
    from datasets import Dataset

    n = n if n is not None else get_lab(lab).train_problems
    return Dataset.from_list(generate_problems(level, n, seed, split, lab))
