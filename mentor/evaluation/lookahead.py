"""`mentor eval --lookahead K`: a learning figure beside rescue. What would K update steps on a row's rescued groups
teach the policy about the failures it has *not* trained on?

- The groups are split in two by position: the even ones are the row's training groups, the odd ones held out.
- Targets: every correct response that any row (`none` included) sampled on a held-out group, the same set for every
  row, scored after the *unhinted* prompt (a prefix hint counts as part of the response).
- Per row: a copy of the policy takes K full-batch Adam steps of a GRPO-style loss on the row's rescued training
  groups, spliced as the config's strategy says (`BatchRules.picks`: which re-attempts join the group's original
  failed attempts), each response trained after the unhinted prompt under `strip_hint`, else after the hinted one;
  advantages are the group's rewards minus their mean over their standard deviation, as GRPO's. The figure is the
  mean change of the targets' per-token log-probability (after − before). An approximation of a training step: no
  clipping or KL (the policy moves from where it sampled), the same learning rate for every row.
"""

from __future__ import annotations

import copy
from typing import Any

from mentor.evaluation.inputs import Inputs
from mentor.evaluation.policy import Policy

DEFAULT_LR = 1e-6  # TRL's GRPOConfig learning_rate default: "the strategy the user trains with", unless told


def split(n: int) -> tuple[list[int], list[int]]:
    """The training and held-out group indices: even and odd positions.

    >>> split(5)
    ([0, 2, 4], [1, 3])
    """
    return list(range(0, n, 2)), list(range(1, n, 2))


def targets(inputs_by_row: dict[str, list[Inputs]], responses_by_row: dict[str, list[list[tuple[str, list[int]]]]],
            rewards_by_row: dict[str, list[list[float]]], held: list[int]) -> list[tuple[list[int], list[int]]]:
    """(unhinted context ids, response ids) of each distinct correct response any row sampled on a held-out group."""
    seen, out = set(), []
    for name, inputs in inputs_by_row.items():
        for g in held:
            x = inputs[g]
            for (_, ids), reward in zip(responses_by_row[name][g], rewards_by_row[name][g]):
                key = (g, tuple(x.prefix) + tuple(ids))
                if reward > 0 and key not in seen:
                    seen.add(key)
                    out.append((x.plain, list(x.prefix) + list(ids)))
    return out


def training_rows(config, inputs: list[Inputs], responses: list[list[tuple[str, list[int]]]],
                  rewards: list[list[float]], originals: list[list[list[int]]], train: list[int]
                  ) -> list[tuple[list[int], list[int], float]]:
    """(context ids, response ids, advantage) of every row of the rescued training groups, spliced by the strategy:
    the picked re-attempts in the first slots, the group's original failed attempts (reward 0) in the rest."""
    from mentor.trl.batch import BatchRules

    rules = BatchRules(config, None, 0, None)
    rows = []
    for g in train:
        if not max(rewards[g], default=0) > 0:
            continue  # not rescued: a collapsed group has no advantage to learn from
        G = len(rewards[g])
        rules.num_generations = G
        x = inputs[g]
        context = x.plain if config.strip_hint else x.hinted
        picked = rules.picks(rewards[g])
        group = [(context, (list(x.prefix) if config.strip_hint else []) + list(responses[g][j][1]), rewards[g][j])
                 for j in picked]
        group += [(x.plain, ids, 0.0) for ids in originals[g][len(group):G]]
        mean = sum(r for *_, r in group) / len(group)
        std = (sum((r - mean) ** 2 for *_, r in group) / max(len(group) - 1, 1)) ** 0.5
        rows += [(c, y, (r - mean) / (std + 1e-4)) for c, y, r in group]
    return rows


def per_token_logprob(model, pad_id: int, pairs: list[tuple[list[int], list[int]]]) -> float:
    """Mean over pairs of log p(response | context) / |response|."""
    from mentor.reliance import logprob_sums

    sums = logprob_sums(model, pad_id, pairs)
    return sum(s / max(len(y), 1) for s, (_, y) in zip(sums, pairs)) / len(pairs)


def lookahead(policy: Policy, rows: list[tuple[list[int], list[int], float]],
              target_pairs: list[tuple[list[int], list[int]]], steps: int, lr: float = DEFAULT_LR,
              batch_size: int = 64, seed: int = 0) -> float | None:
    """The change in the targets' mean per-token log-probability after `steps` Adam steps on `rows` from a copy of
    the policy (the policy itself is untouched); 0 without a row to train on, None without a target."""
    import torch

    if not target_pairs:
        return None
    if not rows or steps < 1:
        return 0.0
    pad = policy.tokenizer.pad_token_id
    before = per_token_logprob(policy.model, pad, target_pairs)
    model = copy.deepcopy(policy.model)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    device = next(model.parameters()).device
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for _ in range(steps):
            opt.zero_grad()
            for s in range(0, len(rows), batch_size):
                chunk = rows[s:s + batch_size]
                width = max(len(c) + len(y) for c, y, _ in chunk)
                ids = torch.full((len(chunk), width), pad, dtype=torch.long)
                mask = torch.zeros_like(ids)
                for i, (c, y, _) in enumerate(chunk):
                    ids[i, :len(c) + len(y)] = torch.tensor(list(c) + list(y))
                    mask[i, :len(c) + len(y)] = 1
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
                loss = 0.0
                for i, (c, y, adv) in enumerate(chunk):
                    if not y:
                        continue
                    logp = torch.log_softmax(logits[i, len(c) - 1:len(c) + len(y) - 1].float(), dim=-1)
                    tok = logp.gather(1, torch.tensor(list(y), device=logp.device)[:, None]).mean()
                    loss = loss - adv * tok
                (loss / len(rows)).backward()
            opt.step()
    after = per_token_logprob(model, pad, target_pairs)
    return after - before


def originals_of(policy: Policy, groups) -> list[list[list[int]]]:
    """Each group's stored failed attempts as token ids (the rows a `mixed` splice keeps)."""
    return [[policy.encode(a.completion) for a in g.attempts] for g in groups]


def lookahead_figures(policy: Policy, groups, configs: dict[str, Any], inputs_by_row: dict[str, list[Inputs]],
                      responses_by_row: dict, rewards_by_row: dict, steps: int, lr: float = DEFAULT_LR
                      ) -> dict[str, dict[str, Any]]:
    """Per row: `{"lookahead": change, "train_groups": rescued training groups, "targets": n}` (see the module doc).
    `configs` maps each row name to its MentorConfig (`none`: the default config, hints none)."""
    train, held = split(len(groups))
    pairs = targets(inputs_by_row, responses_by_row, rewards_by_row, held)
    originals = originals_of(policy, groups)
    out = {}
    for name, config in configs.items():
        rows = training_rows(config, inputs_by_row[name], responses_by_row[name], rewards_by_row[name], originals,
                             train)
        out[name] = {"lookahead": lookahead(policy, rows, pairs, steps, lr),
                     "train_groups": sum(max(rewards_by_row[name][g], default=0) > 0 for g in train),
                     "targets": len(pairs)}
    return out
