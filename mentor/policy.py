"""A causal language-model policy outside training: loading a Hugging Face checkpoint, sampling token ids from it,
and torch's thread count. `mentor eval`, mentor/data (a policy's own failures) and the CPU lab (mentor/lab/) share
them; they live here so that evaluation and data need not import the lab."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

# The addition lab's default policy (seed 0, default hyper-parameters), committed so that a fresh machine need not
# pre-train: `python -m mentor.lab --commit` rebuilds it; `mentor eval --policy lab` and `mentor failures --source lab`
# load it. Named here, below the lab, so that evaluation finds it without importing mentor.lab.
COMMITTED_POLICY = Path(__file__).resolve().parent / "lab" / "policy"


@contextlib.contextmanager
def torch_threads(n: int | None):
    import torch

    old = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def load_checkpoint(path: str | os.PathLike):
    """`(model, tokenizer)` from a checkpoint directory, in eval mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model.eval()
    return model, tokenizer


def generate_ids(model, tokenizer, ids: list[list[int]], num_samples: int, temperature: float | None,
                 max_new_tokens: int):
    """The generated token ids (`len(ids) * num_samples` rows, padded after EOS) continuing each token-id list,
    left-padded into one batch; greedy when temperature is None/0. `mentor eval` and the lab sample through this."""
    import torch

    width = max(map(len, ids))
    input_ids = torch.full((len(ids), width), tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros_like(input_ids)
    for i, row in enumerate(ids):  # left padding
        input_ids[i, width - len(row):] = torch.tensor(row)
        mask[i, width - len(row):] = 1
    kw = dict(do_sample=False) if not temperature else dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    with torch.no_grad():
        out = model.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                             num_return_sequences=num_samples, pad_token_id=tokenizer.pad_token_id,
                             eos_token_id=tokenizer.eos_token_id, **kw)
    return out[:, width:]
