"""Seeded, batched sampling of G responses per group."""

from __future__ import annotations

from mentor.evaluation.inputs import Inputs
from mentor.evaluation.policy import Policy

BATCH_SIZE = 512  # sequences per generate call, as the lab's batched evaluation (mentor.lab.sampling.completions)


def sample(policy: Policy, inputs: list[Inputs], samples: int, temperature: float, max_new_tokens: int, seed: int,
           desc: str = "sampling") -> list[list[tuple[str, list[int]]]]:
    """`samples` responses per input: (whole response text, the prefix included; generated token ids). Batched and
    seeded as mentor.lab.sampling.completions (both through mentor.policy.generate_ids): the same seed, chunks and inputs give the same samples. Each response is
    at most `max_new_tokens` long, a prefix hint included, so a hint buys no extra length."""
    if policy.engine is not None:  # --engine vllm (mentor/evaluation/vllm_engine.py)
        ids = policy.engine.generate(inputs, samples, temperature, max_new_tokens, seed)
        return [[response(policy, x, row, max_new_tokens) for row in rows] for x, rows in zip(inputs, ids)]
    import torch
    from tqdm.auto import tqdm

    from mentor.policy import generate_ids

    per = max(1, BATCH_SIZE // samples)
    out: list[list[tuple[str, list[int]]]] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for s in tqdm(range(0, len(inputs), per), desc=desc, unit="batch", leave=False):
            chunk = inputs[s:s + per]
            budget = max(1, max_new_tokens - min(len(x.prefix) for x in chunk))
            ids = generate_ids(policy.model, policy.tokenizer, [x.hinted for x in chunk], samples, temperature, budget)
            for j, x in enumerate(chunk):
                out.append([response(policy, x, row, max_new_tokens)
                            for row in ids[j * samples:(j + 1) * samples].tolist()])
    return out


def response(policy: Policy, x: Inputs, row: list[int], max_new_tokens: int) -> tuple[str, list[int]]:
    """A generated row cut to the budget (a prefix hint counted) and at EOS, its padding dropped; and its text, the
    prefix included."""
    eos, pad = policy.tokenizer.eos_token_id, policy.tokenizer.pad_token_id
    row = row[:max(1, max_new_tokens - len(x.prefix))]
    row = row[:row.index(eos)] if eos in row else [t for t in row if t != pad]
    return x.prefix_text + policy.tokenizer.decode(row, skip_special_tokens=True), row
