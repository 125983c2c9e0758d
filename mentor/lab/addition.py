r"""The addition lab's own parts (`lab="addition"`, the default lab behind `make demo`): its problems, its pre-training
rows and what it adds to a pre-training cache key. The machinery both labs share is mentor.lab.data (problems and
datasets of any lab), mentor.lab.pretrain and mentor.lab.sampling; the record that names this module is in
mentor.lab.labs.

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
from typing import Any, Callable, Protocol

from mentor.tasks import arithmetic
from mentor.tasks.arithmetic import format_answer, format_prompt

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


def problems(level: str, n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
    """`n` distinct addition problems of a level and split, deterministic for the seed."""
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


# --- pre-training ------------------------------------------------------------------------------------------

# Bump when a code change alters the trained weights (data mixture, loss, schedule, model code).
LAB_VERSION = 3

PRETRAIN_DEFAULTS: dict[str, Any] = {
    "steps": 1200,
    "batch_size": 64,
    "lr": 2e-3,
    "warmup_steps": 50,
    "weight_decay": 0.01,
    "hint_share": 0.3,       # share of training rows shown with a prompt-placement partial-answer hint
    "hint_digits": [1, 2, 3],
    "hint_copy_share": 0.5,  # share of hinted rows that only teach copying: see training_rows
    "tail_share": 0.35,      # share of rows (from tail_start on) that are hard problems trained on their last digits
    "tail_given": [2, 3],    # how many leading answer digits such a row is given, untrained
    "tail_start": 700,       # first step with tail rows: the easy level's carry is learned first
    "level": "easy",
    "model": {},             # overrides of mentor.lab.model.MODEL_DEFAULTS
}

Row = tuple[str, str, bool, int]  # (prompt, completion, ends with EOS, leading completion characters given, no loss)


class ExtraRows(Protocol):
    """An experiment's own pre-training rows (experiments/, docs/lab.md), mixed into `training_rows`' without a knob
    in the lab: `hparams` join the cache key's, so the experiment's policy is cached apart from the default one."""

    hparams: dict[str, Any]

    def row(self, rng, easy_pairs: list[tuple[int, int]], random_hard_sum: Callable[[], str]) -> Row | None:
        """A row of the experiment's own, drawn before each default row, or None for a default row."""

    def tail_prompt(self, rng, prompt: str, shown: str, given: int) -> str:
        """The prompt of a tail row whose response `shown` has `given` leading digits given."""


def hparams(hp: dict[str, Any]) -> dict[str, Any]:
    """The addition lab's hyper-parameters checked: its lists as lists, and tail rows that give 2 or 3 digits."""
    hp["hint_digits"], hp["tail_given"] = list(hp["hint_digits"]), list(hp["tail_given"])
    if not set(hp["tail_given"]) <= {2, 3}:
        raise ValueError(f"tail_given must list 2 and/or 3 given digits, got {hp['tail_given']}: with fewer, a tail "
                         "row would train the hundreds digit of a hard sum and break the collapse")
    return hp


def key_data() -> dict[str, Any]:
    """What the addition lab adds to a cache key: its version and its formats, by example."""
    return {"lab_version": LAB_VERSION,
            "data": {"levels": LEVELS,
                     "example": arithmetic.format_prompt(23, 45) + " " + arithmetic.format_answer(23, 45),
                     "hint_example": arithmetic.hint_prompt(arithmetic.format_prompt(23, 45), "00")}}


def training_rows(hp: dict[str, Any], rng, extra: ExtraRows | None = None) -> Callable[[int, int], tuple[list[str], list[str], list[bool], list[int]]]:
    """A sampler `sample(n, step)` of `(prompts, completions, ends, given)` batches (`given`: leading
    completion characters that are context only, with no loss).

    Rows are easy problems; a share `hint_share` of them carry a prompt-placement partial-answer hint
    (`hint_prompt`). On easy problems a hint is redundant, so those rows alone do not teach the policy to
    use it. Of the hinted rows, a share `hint_copy_share` are therefore *copy-only* rows: an easy
    problem with a hint of random digits (the start of a random sum of the hard range), and a completion
    cut right after those digits (no loss on anything else, no EOS). They teach the hint format, "the
    answer starts with the hinted digits", and never a hard sum: no hard problem is ever shown, so
    unhinted hard problems stay collapsed. (An earlier variant used hard train problems with their true
    hint digits; the policy then learned hard sums from those digits and the collapse broke: 11.6% greedy.)

    A share `tail_share` of rows are *tail* rows: a hard train problem whose response starts with
    `tail_given` (2 or 3) given digits, untrained, and only the rest (tens and units, then EOS) carries
    loss. Those digits need only easy-level skills. The given thousands and hundreds digits are random, so
    the hard level's new skill (the hundreds column and its carry) is never shown, let alone a target, and
    unhinted hard problems stay collapsed while the policy learns to continue a partial answer on a hard
    problem (the prefix hint).

    `extra` (an experiment's, see `ExtraRows`) may draw a row of its own before each row, and rewrite tail prompts.
    """
    pairs = all_pairs(hp["level"], "all")
    hard_pairs = all_pairs("hard", "train") if hp["tail_share"] else []
    lo, hi = LEVELS["hard"]

    def random_hard_sum() -> str:  # 4 digits that look like a hard answer and belong to no problem shown
        return f"{rng.randint(2 * lo, 2 * hi):04d}"

    def sample(n: int, step: int):
        prompts, completions, ends, given = [], [], [], []
        for _ in range(n):
            row = extra.row(rng, pairs, random_hard_sum) if extra else None
            if row:
                for column, value in zip((prompts, completions, ends, given), row):
                    column.append(value)
                continue
            if hp["tail_share"] and step >= hp["tail_start"] and rng.random() < hp["tail_share"]:
                a, b = hard_pairs[rng.randrange(len(hard_pairs))]
                # The leading two digits are random: the true thousands and hundreds are never shown.
                shown = random_hard_sum()[:2] + arithmetic.format_answer(a, b)[2:]
                k = rng.choice(hp["tail_given"])
                prompt = arithmetic.format_prompt(a, b)
                if extra:
                    prompt = extra.tail_prompt(rng, prompt, shown, k)
                prompts.append(prompt)
                completions.append(" " + shown)
                ends.append(True)
                given.append(1 + k)
                continue
            hinted = bool(hp["hint_share"]) and rng.random() < hp["hint_share"]
            copy_only = hinted and bool(hp["hint_copy_share"]) and rng.random() < hp["hint_copy_share"]
            a, b = pairs[rng.randrange(len(pairs))]
            prompt, answer = arithmetic.format_prompt(a, b), arithmetic.format_answer(a, b)
            if hinted:
                k = rng.choice(hp["hint_digits"])
                if copy_only:
                    answer = random_hard_sum()
                prompt = arithmetic.hint_prompt(prompt, arithmetic.partial_answer_hint(answer, k))
            prompts.append(prompt)
            completions.append(" " + (answer[:k] if copy_only else answer))
            ends.append(not copy_only)
            given.append(0)
        return prompts, completions, ends, given

    return sample
