r"""The composed-skills lab (`mentor demo --lab composed`): chains of one-digit facts, with gaps that belong to the policy.

- Problems (formats in `mentor.tasks.composed`): the easy level chains 2 facts (`Q: 3*4-2=? A:` -> ` 2 0`), the hard
  level 3 (`Q: 3*4-2+4=? A:` -> ` 2 0 4`); a fact is `x op y` modulo 5, op in + - *, 75 in all. The response writes
  every step, so a verifier sees which step went wrong.
- Gaps: each pre-training seed mis-learns its own random share (`gap_share`) of the 75 facts: pre-training teaches
  such a fact a wrong value (seeded), everywhere it appears. Which step of a hard problem fails is then a property of
  the policy, not of the problem.
- Pre-training (`pretrain_rows`): easy chains; *hint rows* on the easy level only (a one-step mask hint of a random
  digit, `Hint: _ 4\n`, and the chain continued from it: "that step is the hint's value"); and hard chains worked with
  the seed's own facts, so the policy writes hard chains as well as its facts allow (a first version gave hard rows a
  random first step, untrained, as the addition lab's tail rows: the policy then wrote 55% of hard chains in the format
  and 16% of their first steps right, so no one-step hint could rescue anything). Every value a row reads in its hint
  line on a hard row is the one it writes anyway: the policy learns to *read* a hint on the easy level only.

This module holds what is the composed lab's own: its facts, gaps, chains and pre-training rows. The lab's machinery
is shared with the addition lab, with `lab="composed"`: problems and datasets (mentor.lab.data), pre-training and its
cache (mentor.lab.pretrain), sampling and accuracy (mentor.lab.sampling).
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any, Callable

from mentor.tasks.composed import BASE, OPS, apply, format_prompt, hint_prompt, response, step_hint, steps_of

LEVELS = {"easy": 2, "hard": 3}  # steps per problem
HELDOUT_BUCKETS = 10
FACTS = [(x, op, y) for x in range(BASE) for op in OPS for y in range(BASE)]
LAB_VERSION = 2
MAX_NEW_TOKENS = 8  # ` 1 7 6` and EOS, with a token to spare
# Seed 0's policy, committed so that tests and a first demo need not pre-train it: `python -m mentor.lab.composed_eval
# --commit` copies it from the cache.
COMMITTED_POLICY = Path(__file__).resolve().parent / "composed_policy"

# Both hinted arms: 6 of 8 rows hinted, the hint a line of the prompt, and a successful re-attempt trained after the
# unhinted prompt (`strip_hint`): the step the hint gave becomes a trained token of the unhinted chain.
COMPOSED_STRATEGY: dict[str, Any] = {"task": "composed", "strategy": "mixed", "mixed_share": 0.75,
                                     "hint_placement": "prompt", "strip_hint": True, "reliance_every": 10}
# The demo's budget in this lab (the rest of DemoSettings as in the default lab): a full 3-arm run of a new seed,
# pre-training included, fits in 15 minutes on 2 cores (docs/benchmarks.md).
COMPOSED_DEFAULTS: dict[str, Any] = {"steps": 200, "learning_rate": 1e-3, "train_problems": 4000,
                                     "heldout_problems": 500, "eval_every": 25}
PRETRAIN_DEFAULTS: dict[str, Any] = {
    "steps": 1600,
    "batch_size": 64,
    "lr": 3e-3,
    "warmup_steps": 50,
    "weight_decay": 0.01,
    "gap_share": 1 / 3,      # share of the 75 facts this seed mis-learns
    "hint_share": 0.25,      # easy rows with a one-step hint of a random digit
    "hard_share": 0.45,      # hard chains, worked with the seed's facts (its gaps included)
    "hard_hint_share": 0.5,  # hard rows with a hint line of a step they write anyway (nothing to read there)
    "model": {"hidden_size": 96, "intermediate_size": 384, "num_hidden_layers": 2},
}


def gaps(seed: int, share: float = PRETRAIN_DEFAULTS["gap_share"]) -> dict[tuple[int, str, int], int]:
    """The facts seed `seed` mis-learns, each with its wrong value (deterministic for the seed)."""
    rng = random.Random(f"mentor-lab/composed/gaps/{seed}")
    chosen = rng.sample(FACTS, round(share * len(FACTS)))
    return {f: (apply(*f) + rng.randint(1, BASE - 1)) % BASE for f in chosen}


def problem_id(digits: list[int], ops: list[str]) -> str:
    return "chain-" + str(digits[0]) + "".join(f"{op}{d}" for op, d in zip(ops, digits[1:]))


def split_of(digits: list[int], ops: list[str]) -> str:
    h = hashlib.sha256(problem_id(digits, ops).encode()).digest()
    return "heldout" if int.from_bytes(h[:4], "big") % HELDOUT_BUCKETS == 0 else "train"


def make_row(digits: list[int], ops: list[str]) -> dict[str, Any]:
    steps = steps_of(digits, ops)
    return {"prompt": format_prompt(digits, ops), "answer": "".join(map(str, steps)), "digits": list(digits),
            "ops": "".join(ops), "problem_id": problem_id(digits, ops),
            "level": {n: level for level, n in LEVELS.items()}[len(ops)]}


def random_problem(rng: random.Random, level: str) -> tuple[list[int], list[str]]:
    n = LEVELS[level]
    return [rng.randrange(BASE) for _ in range(n + 1)], [rng.choice(OPS) for _ in range(n)]


def chain_problems(level: str, n: int, seed: int = 0, split: str = "train") -> list[dict[str, Any]]:
    """`n` distinct chains of a level and split (`train`, `heldout`, `all`), deterministic for the seed: what
    `mentor.lab.data.generate_problems(..., lab="composed")` returns."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {sorted(LEVELS)}")
    if split not in ("train", "heldout", "all"):
        raise ValueError(f"unknown split {split!r}; use train, heldout or all")
    size = BASE ** (LEVELS[level] + 1) * len(OPS) ** LEVELS[level]
    if n > size // (HELDOUT_BUCKETS if split == "heldout" else 2):
        raise ValueError(f"level {level!r} split {split!r} has too few problems for {n}")
    rng = random.Random(f"mentor-lab/composed/{level}/{split}/{seed}")
    seen, rows = set(), []
    while len(rows) < n:
        digits, ops = random_problem(rng, level)
        pid = problem_id(digits, ops)
        if pid in seen or (split != "all" and split_of(digits, ops) != split):
            continue
        seen.add(pid)
        rows.append(make_row(digits, ops))
    return rows


def pretrain_rows(hp: dict[str, Any], seed: int, rng: random.Random) -> Callable:
    """A sampler `sample(n, step)` of `(prompts, completions, ends, given)` batches for `train_loop` (see the module
    doc). Every step a row writes is computed with the seed's facts, its gaps included."""
    table = gaps(seed, hp["gap_share"])

    def sample(n: int, step: int):
        prompts, completions, ends, given = [], [], [], []
        for _ in range(n):
            if rng.random() < hp["hard_share"]:
                digits, ops = random_problem(rng, "hard")
                steps = steps_of(digits, ops, table)  # the seed's facts: a gap keeps its wrong value here too
                prompt = format_prompt(digits, ops)
                if rng.random() < hp["hard_hint_share"]:  # a hint line that says what the policy writes anyway
                    prompt = hint_prompt(prompt, step_hint(steps, rng.randint(1, LEVELS["hard"] - 1)))
                prompts.append(prompt)
                completions.append(response(steps))
                given.append(0)
            else:
                digits, ops = random_problem(rng, "easy")
                prompt = format_prompt(digits, ops)
                if rng.random() < hp["hint_share"]:
                    k, value = rng.randint(1, LEVELS["easy"]), rng.randrange(BASE)
                    before = steps_of(digits[:k], ops[:k - 1], table)
                    steps = before + [value] + steps_of([value, *digits[k + 1:]], ops[k:], table)
                    prompt = hint_prompt(prompt, step_hint(steps, k))
                else:
                    steps = steps_of(digits, ops, table)
                prompts.append(prompt)
                completions.append(response(steps))
                given.append(0)
            ends.append(True)
        return prompts, completions, ends, given

    return sample


def key_data() -> dict[str, Any]:
    """What this lab adds to a pre-training cache key (mentor.lab.pretrain.cache_key): its name, version and an
    example row, so a change of format is a change of key."""
    return {"lab": "composed", "lab_version": LAB_VERSION, "example": make_row([3, 7, 4, 9], ["*", "-", "+"])}
