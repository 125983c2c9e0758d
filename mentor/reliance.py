"""HiLL's hint reliance, one implementation for `mentor eval` (mentor/evaluation/report.py), the training metric
`mentor/reliance` and `hint_choice: learning` (mentor/trl/choice.py): the mean over correct hinted responses y of
(log p(y|x) - log p(y|x+hint)) / |y|. Below 0 where the hint makes the correct response likelier.
"""

from __future__ import annotations

import contextlib
from typing import Any, NamedTuple


class HintedResponse(NamedTuple):
    """One correct hinted response, as token ids."""

    plain: list[int]  # the context without the hint
    hinted: list[int]  # the context the response was sampled after, the hint (and a prefix hint) in it
    prefix: list[int]  # a prefix hint's tokens, which start the response ([] for a hint in the prompt)
    generated: list[int]  # what the policy generated after `hinted`


@contextlib.contextmanager
def evaluating(model: Any):
    """The model in eval mode (no dropout) and no autograd graph, its mode restored after."""
    import torch

    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)


def logprob_sums(model: Any, pad_token_id: int, pairs: list[tuple[list[int], list[int]]],
                 batch_size: int = 64) -> list[float]:
    """Sum of log p(scored | context) for each (context ids, scored ids): one forward pass per batch, in eval mode
    and without gradients."""
    import torch

    device = getattr(model, "device", None) or next(model.parameters()).device
    out = []
    with evaluating(model):
        for s in range(0, len(pairs), batch_size):
            chunk = pairs[s:s + batch_size]
            width = max(len(c) + len(y) for c, y in chunk)
            ids = torch.full((len(chunk), width), pad_token_id, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for i, (c, y) in enumerate(chunk):  # right padding: positions are those of an unpadded sequence
                ids[i, :len(c) + len(y)] = torch.tensor(list(c) + list(y))
                mask[i, :len(c) + len(y)] = 1
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            for i, (c, y) in enumerate(chunk):  # only the scored positions, in float: a batch's logits stay as they are
                logp = torch.log_softmax(logits[i, len(c) - 1:len(c) + len(y) - 1].float(), dim=-1)
                targets = torch.tensor(list(y), dtype=torch.long, device=logp.device)
                out.append(logp.gather(1, targets[:, None]).sum().item())
    return out


def log_ratios(model: Any, pad_token_id: int, responses: list[HintedResponse], batch_size: int = 64) -> list[float]:
    """The log-ratio log p(y|x) - log p(y|x+hint) of each response, y = prefix + generated (0 with no token). The
    prefix tokens have probability 1 given a prefix hint, so the hinted term scores the generated tokens alone. Its
    exponent is the importance ratio of a hinted response trained after the unhinted prompt (`correct_off_policy`)."""
    rows = [r for r in responses if r.prefix or r.generated]
    unhinted = logprob_sums(model, pad_token_id, [(r.plain, list(r.prefix) + list(r.generated)) for r in rows],
                            batch_size)
    hinted = logprob_sums(model, pad_token_id, [(r.hinted, r.generated) for r in rows], batch_size)
    ratios = iter(u - h for u, h in zip(unhinted, hinted))
    return [next(ratios) if r.prefix or r.generated else 0.0 for r in responses]


def reliance_terms(model: Any, pad_token_id: int, responses: list[HintedResponse],
                   batch_size: int = 64) -> list[float]:
    """(log p(y|x) - log p(y|x+hint)) / |y| for each response with a token, y = prefix + generated (`log_ratios` per
    token)."""
    rows = [r for r in responses if r.prefix or r.generated]
    ratios = log_ratios(model, pad_token_id, rows, batch_size)
    return [ratio / (len(r.prefix) + len(r.generated)) for r, ratio in zip(rows, ratios)]


def mean(terms: list[float]) -> float | None:
    """The reliance of a set of responses from their terms; None without any."""
    return sum(terms) / len(terms) if terms else None
