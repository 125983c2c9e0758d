"""Sampling token ids from a causal language-model policy outside training, and torch's thread count. `mentor eval`,
mentor/data (a policy's own failures) and the CPU lab (mentor/lab/) share them; they live here so that evaluation
and data need not import the lab. Loading the checkpoint is mentor.models.checkpoint's."""

from __future__ import annotations

import contextlib


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
