"""Pre-training a lab's policy, cached (sampling and accuracy: mentor.lab.sampling; loading a checkpoint and torch's
threads: mentor.policy). Both labs share the loop, the cache and its keys; `lab="addition"` (the default) trains on
this module's rows (`training_rows`), `lab="composed"` on mentor.lab.composed's.

`pretrained_policy()` trains once per cache key (everything that changes the weights) and returns the
directory of a `save_pretrained` checkpoint (model and tokenizer), loadable with
`AutoModelForCausalLM.from_pretrained` / `AutoTokenizer.from_pretrained` like any real model.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from mentor.lab import composed
from mentor.lab import data as labdata
from mentor.lab.sampling import evaluate
from mentor.lab.tokenizer import encode
from mentor.models.checkpoint import COMMITTED_POLICY
from mentor.policy import torch_threads
from mentor.tasks import arithmetic

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

DEFAULT_CACHE_DIR = ".cache/mentor-lab"

Row = tuple[str, str, bool, int]  # (prompt, completion, ends with EOS, leading completion characters given, no loss)


class ExtraRows(Protocol):
    """An experiment's own pre-training rows (experiments/, docs/lab.md), mixed into `training_rows`' without a knob
    in the lab: `hparams` join the cache key's, so the experiment's policy is cached apart from the default one."""

    hparams: dict[str, Any]

    def row(self, rng, easy_pairs: list[tuple[int, int]], random_hard_sum: Callable[[], str]) -> Row | None:
        """A row of the experiment's own, drawn before each default row, or None for a default row."""

    def tail_prompt(self, rng, prompt: str, shown: str, given: int) -> str:
        """The prompt of a tail row whose response `shown` has `given` leading digits given."""


def addition_hparams(hp: dict[str, Any]) -> dict[str, Any]:
    """The addition lab's hyper-parameters checked: its lists as lists, and tail rows that give 2 or 3 digits."""
    hp["hint_digits"], hp["tail_given"] = list(hp["hint_digits"]), list(hp["tail_given"])
    if not set(hp["tail_given"]) <= {2, 3}:
        raise ValueError(f"tail_given must list 2 and/or 3 given digits, got {hp['tail_given']}: with fewer, a tail "
                         "row would train the hundreds digit of a hard sum and break the collapse")
    return hp


def addition_key_data() -> dict[str, Any]:
    """What the addition lab adds to a cache key: its version and its formats, by example."""
    return {"lab_version": LAB_VERSION,
            "data": {"levels": labdata.LEVELS,
                     "example": arithmetic.format_prompt(23, 45) + " " + arithmetic.format_answer(23, 45),
                     "hint_example": arithmetic.hint_prompt(arithmetic.format_prompt(23, 45), "00")}}


@dataclass(frozen=True)
class Recipe:
    """What one lab's pre-training is made of, beyond the shared loop and cache."""

    defaults: dict[str, Any]  # its hyper-parameters
    rows: Callable[[dict[str, Any], int, random.Random, ExtraRows | None], Callable]  # (hp, seed, rng, extra) -> sample
    key_data: Callable[[], dict[str, Any]]  # its part of the cache key
    committed: Path  # its committed seed-0 policy
    folder: str  # a cached policy's folder is `<folder>-<cache key>`
    threads: int  # torch threads by default (the committed policies were trained so)
    stream: str  # the name of the rows' random stream, `{seed}` in it
    desc: str  # the progress bar's, `{seed}` in it
    info: dict[str, Any] = field(default_factory=dict)  # what meta.json says of the lab
    checked: Callable[[dict[str, Any]], dict[str, Any]] = lambda hp: hp


def _composed_rows(hp, seed, rng, extra):
    if extra is not None:
        raise TypeError("the composed lab takes no `extra` rows")
    return composed.pretrain_rows(hp, seed, rng)


RECIPES = {
    "addition": Recipe(PRETRAIN_DEFAULTS, lambda hp, seed, rng, extra: training_rows(hp, rng, extra),
                       addition_key_data, COMMITTED_POLICY, "policy", 2, "mentor-lab/pretrain/{seed}",
                       "pre-training the lab policy", checked=addition_hparams),
    "composed": Recipe(composed.PRETRAIN_DEFAULTS, _composed_rows, composed.key_data, composed.COMMITTED_POLICY,
                       "composed", 1, "mentor-lab/composed/pretrain/{seed}",
                       "pre-training the composed lab's policy, seed {seed}", info={"lab": "composed"}),
}


def recipe(lab: str) -> Recipe:
    if lab not in RECIPES:
        raise ValueError(f"unknown lab {lab!r}; use one of {sorted(RECIPES)}")
    return RECIPES[lab]


def hparams_of(lab: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """A lab's hyper-parameters: its defaults with `overrides`, which may only name known ones."""
    defaults = recipe(lab).defaults
    unknown = set(overrides) - set(defaults)
    if unknown:
        raise TypeError(f"unknown pre-training hyper-parameter(s) {sorted(unknown)}; known: {sorted(defaults)}")
    return recipe(lab).checked({**defaults, **overrides})


def cache_key(seed: int = 0, versions: bool = True, extra: ExtraRows | None = None, lab: str = "addition",
              **hparams) -> str:
    """Hash of everything that changes the pre-trained weights (`versions=False` leaves out the library
    versions: the key of the committed checkpoint, which any torch/transformers can load; `extra`: an experiment's
    rows, whose `hparams` join the others)."""
    import torch
    import transformers

    from mentor.lab.model import MODEL_DEFAULTS
    from mentor.lab.tokenizer import CHARS, SPECIAL_TOKENS

    hp = {**hparams_of(lab, hparams), **(extra.hparams if extra else {})}
    spec = {**recipe(lab).key_data(), "seed": seed, "hparams": hp, "model": {**MODEL_DEFAULTS, **hp["model"]},
            "vocab": SPECIAL_TOKENS + CHARS}
    if versions:
        spec.update(torch=torch.__version__, transformers=transformers.__version__)
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


# --- training ----------------------------------------------------------------------------------------

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
    pairs = labdata.all_pairs(hp["level"], "all")
    hard_pairs = labdata.all_pairs("hard", "train") if hp["tail_share"] else []
    lo, hi = labdata.LEVELS["hard"]

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


def _batch(tokenizer, prompts, completions, ends=None, given=None):
    import torch

    ends = ends if ends is not None else [True] * len(prompts)
    given = given if given is not None else [0] * len(prompts)
    p_ids = encode(tokenizer, prompts)
    c_ids = [ids + ([tokenizer.eos_token_id] if end else []) for ids, end in zip(encode(tokenizer, completions), ends)]
    width = max(len(p) + len(c) for p, c in zip(p_ids, c_ids))
    input_ids = torch.full((len(p_ids), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full((len(p_ids), width), -100, dtype=torch.long)
    mask = torch.zeros((len(p_ids), width), dtype=torch.long)
    for i, (p, c, g) in enumerate(zip(p_ids, c_ids, given)):
        seq = p + c
        input_ids[i, :len(seq)] = torch.tensor(seq)
        labels[i, len(p) + g:len(seq)] = torch.tensor(c[g:])
        mask[i, :len(seq)] = 1
    return input_ids, mask, labels


def train_loop(model, tokenizer, sample, hp: dict[str, Any], progress: bool = True,
               desc: str = "pre-training the lab policy"):
    """The pre-training loop shared by the labs' policies: AdamW, warm-up then cosine decay, gradient clip 1.0, on
    batches `sample(batch_size, step)` of `(prompts, completions, ends, given)`. Returns `(loss curve, first loss, final
    loss (EMA), seconds)`; the model is left in train mode."""
    import torch
    from tqdm.auto import tqdm

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": hp["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=hp["lr"], betas=(0.9, 0.98))
    steps, warm = hp["steps"], hp["warmup_steps"]
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, steps - warm))))
    t0 = time.time()
    bar = tqdm(range(steps), desc=desc, disable=not progress, mininterval=0.5)
    loss_ema = first_loss = None
    curve = []
    for step in bar:
        input_ids, mask, labels = _batch(tokenizer, *sample(hp["batch_size"], step))
        loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        first_loss = loss.item() if first_loss is None else first_loss
        loss_ema = loss.item() if loss_ema is None else 0.95 * loss_ema + 0.05 * loss.item()
        if step % 50 == 0:
            bar.set_postfix(loss=f"{loss_ema:.4f}")
        if (step + 1) % 100 == 0:
            curve.append([step + 1, round(loss_ema, 4), round(time.time() - t0, 1)])
    return curve, first_loss, loss_ema, round(time.time() - t0, 1)


def pretrain(seed: int = 0, num_threads: int | None = None, progress: bool = True, extra: ExtraRows | None = None,
             lab: str = "addition", **hparams):
    """Pre-train a fresh policy of `lab` (its rows, and `extra`'s); returns `(model, tokenizer, info)`. `num_threads`:
    torch's, by default the lab's own (2 for addition, 1 for composed). Deterministic for the seed and
    hyper-parameters (on one machine and thread count)."""
    from mentor.lab.model import build_policy

    how, hp = recipe(lab), hparams_of(lab, hparams)
    with torch_threads(num_threads or how.threads):
        model, tokenizer = build_policy(seed, **hp["model"])
        model.train()
        sample = how.rows(hp, seed, random.Random(how.stream.format(seed=seed)), extra)
        curve, first_loss, loss_ema, seconds = train_loop(model, tokenizer, sample, hp, progress,
                                                          desc=how.desc.format(seed=seed))
        model.eval()
    info = {**how.info, "seed": seed, "hparams": {**hp, **(extra.hparams if extra else {})}, "train_seconds": seconds,
            "first_loss": first_loss, "final_loss": loss_ema, "loss_curve": curve}
    return model, tokenizer, info


def pretrained_policy(cache_dir: str | os.PathLike = DEFAULT_CACHE_DIR, seed: int = 0, progress: bool = True,
                      num_threads: int | None = None, extra: ExtraRows | None = None, lab: str = "addition",
                      **hparams) -> str:
    """Path of a pre-trained policy of `lab` (model + tokenizer, `save_pretrained` format), training it on a cache
    miss. The directory is the lab's committed policy where its weights key matches, else
    `<cache_dir>/<policy|composed>-<cache_key>`; `meta.json` in it records the hyper-parameters, training time and
    easy-level accuracy. `extra`: an experiment's rows (`ExtraRows`)."""
    how = recipe(lab)
    committed = how.committed / "meta.json"
    weights_key = cache_key(seed, False, extra, lab, **hparams)
    if committed.exists() and json.loads(committed.read_text()).get("weights_key") == weights_key:
        return str(how.committed)
    key = cache_key(seed, True, extra, lab, **hparams)
    out = Path(cache_dir) / f"{how.folder}-{key}"
    if (out / "meta.json").exists():
        return str(out)
    model, tokenizer, info = pretrain(seed, num_threads, progress, extra, lab, **hparams)
    easy = labdata.generate_problems("easy", 500 if lab == "composed" else 1000, seed=1234, split="all", lab=lab)
    with torch_threads(num_threads or how.threads):
        info["easy_acc"] = evaluate(model, tokenizer, easy, lab=lab)
    info["cache_key"], info["weights_key"] = key, weights_key  # weights_key also marks a lab policy for `mentor eval`
    save_atomically(out, model, tokenizer, info)
    return str(out)


def save_atomically(out: Path, model, tokenizer, info: dict[str, Any]) -> None:
    """Writes a checkpoint and its `meta.json` to a temporary directory renamed into place, so a reader never sees
    half of one (another process that got there first wins)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "meta.json").write_text(json.dumps(info, indent=2))
        try:
            os.rename(tmp, out)
        except OSError:  # another process got there first
            if not (out / "meta.json").exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return str(out)
