"""Pre-training a lab's policy, cached (sampling and accuracy: mentor.lab.sampling; loading a checkpoint:
mentor.models.checkpoint). Every lab shares the loop, the cache and its keys; its rows, defaults and part of the key
are its own module's, named by its record (mentor.lab.labs): `lab="addition"` (the default) trains on
mentor.lab.addition's rows, `lab="composed"` on mentor.lab.composed's.

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
from pathlib import Path
from typing import Any

from mentor.lab import data as labdata
from mentor.lab.addition import ExtraRows
from mentor.lab.labs import get_lab
from mentor.lab.sampling import evaluate
from mentor.lab.tokenizer import encode
from mentor.policy import torch_threads

DEFAULT_CACHE_DIR = ".cache/mentor-lab"


def hparams_of(lab: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """A lab's hyper-parameters: its defaults with `overrides`, which may only name known ones."""
    defaults = get_lab(lab).recipe.defaults
    unknown = set(overrides) - set(defaults)
    if unknown:
        raise TypeError(f"unknown pre-training hyper-parameter(s) {sorted(unknown)}; known: {sorted(defaults)}")
    return get_lab(lab).recipe.checked({**defaults, **overrides})


def cache_key(seed: int = 0, versions: bool = True, extra: ExtraRows | None = None, lab: str = "addition",
              **hparams) -> str:
    """Hash of everything that changes the pre-trained weights (`versions=False` leaves out the library versions and
    the CPU kernels: the key of the committed checkpoint, which any torch/transformers can load; `extra`: an
    experiment's rows, whose `hparams` join the others)."""
    import torch
    import transformers

    from mentor.lab.environment import kernels
    from mentor.lab.model import MODEL_DEFAULTS
    from mentor.lab.tokenizer import CHARS, SPECIAL_TOKENS

    hp = {**hparams_of(lab, hparams), **(extra.hparams if extra else {})}
    spec = {**get_lab(lab).recipe.key_data(), "seed": seed, "hparams": hp, "model": {**MODEL_DEFAULTS, **hp["model"]},
            "vocab": SPECIAL_TOKENS + CHARS}
    if versions:
        spec.update(torch=torch.__version__, transformers=transformers.__version__, **kernels())
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


# --- training ----------------------------------------------------------------------------------------

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

    how, hp = get_lab(lab).recipe, hparams_of(lab, hparams)
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
    how, committed_policy = get_lab(lab).recipe, get_lab(lab).committed
    committed = committed_policy / "meta.json"
    weights_key = cache_key(seed, False, extra, lab, **hparams)
    if committed.exists() and json.loads(committed.read_text()).get("weights_key") == weights_key:
        return str(committed_policy)
    key = cache_key(seed, True, extra, lab, **hparams)
    out = Path(cache_dir) / f"{how.folder}-{key}"
    if (out / "meta.json").exists():
        return str(out)
    model, tokenizer, info = pretrain(seed, num_threads, progress, extra, lab, **hparams)
    easy = labdata.generate_problems("easy", get_lab(lab).easy_problems, seed=1234, split="all", lab=lab)
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
