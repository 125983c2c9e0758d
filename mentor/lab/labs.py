"""One record per lab: what the shared machinery (mentor.lab.data, mentor.lab.pretrain, mentor.lab.sampling and the
demo's settings) needs to know of it. Adding a lab is one record here and one module of its own, as
mentor.lab.addition and mentor.lab.composed are: its problems, its pre-training rows and its part of a cache key.
`register` adds one from outside the package (tests/test_lab_registry.py registers a toy lab)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from mentor.lab import addition, composed
from mentor.models.checkpoint import COMMITTED_POLICY
from mentor.tasks import arithmetic
from mentor.tasks import composed as chains

# How the addition lab's hinted arms splice hints into the batch: its best measured setting (docs/lab.md), keep 2
# unhinted rows per collapsed group and train the hinted successes' prefix tokens (off-policy). One file, which
# training/configs/lab_cpu.yaml names as its `mentor:` config too.
LAB_STRATEGY: dict[str, Any] = json.loads((Path(__file__).parent / "strategy.json").read_text())


@dataclass(frozen=True)
class Recipe:
    """What one lab's pre-training is made of, beyond the shared loop and cache."""

    defaults: dict[str, Any]  # its hyper-parameters
    rows: Callable[[dict[str, Any], int, random.Random, Any], Callable]  # (hp, seed, rng, extra) -> sample(n, step)
    key_data: Callable[[], dict[str, Any]]  # its part of the cache key
    folder: str  # a cached policy's folder is `<folder>-<cache key>`
    threads: int  # torch threads by default (the committed policies were trained so)
    stream: str  # the name of the rows' random stream, `{seed}` in it
    desc: str  # the progress bar's, `{seed}` in it
    info: dict[str, Any] = field(default_factory=dict)  # what meta.json says of the lab
    checked: Callable[[dict[str, Any]], dict[str, Any]] = lambda hp: hp  # the hyper-parameters checked


@dataclass(frozen=True)
class Lab:
    """A lab, as the shared machinery reads it."""

    name: str
    task: ModuleType  # its family: `hint_prompt(prompt, hint)`, `reward(completion, answer)`, `prefix_prompt` if prefix
    max_new_tokens: int  # a response's length in tokens, EOS included
    problems: Callable[[str, int, int, str], list[dict[str, Any]]]  # (level, n, seed, split) -> distinct rows
    recipe: Recipe  # its pre-training
    committed: Path  # its committed seed-0 policy
    train_problems: int  # `make_dataset`'s default size
    easy_problems: int  # the easy problems a freshly pre-trained policy is scored on (meta.json's `easy_acc`)
    placements: tuple[str, ...] = ("prompt",)  # where its hints may go
    demo: dict[str, Any] = field(default_factory=dict)  # the `DemoSettings` fields its demo sets (budget, strategy)


LABS: dict[str, Lab] = {}


def register(lab: Lab) -> Lab:
    LABS[lab.name] = lab
    return lab


def get_lab(name: str) -> Lab:
    if name not in LABS:
        raise ValueError(f"unknown lab {name!r}; use one of {sorted(LABS)}")
    return LABS[name]


def _composed_rows(hp, seed, rng, extra):
    if extra is not None:
        raise TypeError("the composed lab takes no `extra` rows")
    return composed.pretrain_rows(hp, seed, rng)


register(Lab(
    "addition", arithmetic, 6, addition.problems,  # the response: a space, 4 digits, EOS
    Recipe(addition.PRETRAIN_DEFAULTS, lambda hp, seed, rng, extra: addition.training_rows(hp, rng, extra),
           addition.key_data, "policy", 2, "mentor-lab/pretrain/{seed}", "pre-training the lab policy",
           checked=addition.hparams),
    COMMITTED_POLICY, train_problems=1000, easy_problems=1000, placements=("prompt", "prefix"),
    demo={"strategy": LAB_STRATEGY}))
register(Lab(
    "composed", chains, composed.MAX_NEW_TOKENS, composed.chain_problems,
    Recipe(composed.PRETRAIN_DEFAULTS, _composed_rows, composed.key_data, "composed", 1,
           "mentor-lab/composed/pretrain/{seed}", "pre-training the composed lab's policy, seed {seed}",
           info={"lab": "composed"}),
    composed.COMMITTED_POLICY, train_problems=4000, easy_problems=500,
    demo={**composed.COMPOSED_DEFAULTS, "strategy": composed.COMPOSED_STRATEGY}))
