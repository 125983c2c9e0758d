"""The hook's batch logic, free of TRL: which groups collapsed, which re-attempts a strategy splices in, and what
the loss then sees (where a hint goes is mentor/placement.py's). It works on plain tensors and lists, so it is
unit-tested without a trainer (tests/test_batch_logic.py); mentor/trl/adapter.py is the one file that speaks to
TRL's private methods.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from mentor.config import MentorConfig
from mentor.placement import Placement
from mentor.types import InputError

# `hint_source: none`'s "hint": what the trace shows for a group re-drawn unhinted; the policy never sees it.
REDRAW_MARKER = "(re-draw, no hint)"

@dataclass
class Generation:
    """The per-row outputs of a generation, in the order of GRPOTrainer's `_generate`."""

    prompt_ids: list
    completion_ids: list
    tool_mask: list | None
    completions: list
    logprobs: list | None
    extra_fields: dict
    images: list | None
    tool_images: list

    def astuple(self) -> tuple:
        return (self.prompt_ids, self.completion_ids, self.tool_mask, self.completions, self.logprobs,
                self.extra_fields, self.images, self.tool_images)


class Reattempt(NamedTuple):
    """A group's G hinted re-attempts: their generation, their rewards per function, and the text of the prompt
    handed to generation (rendered), which the trace record keeps as the prompt the policy saw."""

    gen: Generation
    scores: torch.Tensor
    prompt: str

def problem_id(row: dict[str, Any]) -> str:
    """The row's `problem_id` (or `id`) column, else a stable hash of its prompt."""
    for key in ("problem_id", "id"):
        if row.get(key) is not None:
            return str(row[key])
    return "p-" + hashlib.sha1(repr(row["prompt"]).encode()).hexdigest()[:12]


def weighted(rewards_per_func: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """The weighted sum of each row's rewards, as TRL sums them (NaN counts 0); NaN where every one is NaN."""
    total = (rewards_per_func * weights.to(rewards_per_func.device).unsqueeze(0)).nansum(dim=1)
    return total.masked_fill(torch.isnan(rewards_per_func).all(dim=1), float("nan"))


@dataclass
class BatchRules:
    """The mentor's rules over one generation batch.

    Args:
        config: the MentorConfig (strategy, threshold...).
        placement: where a hint goes (its response prefix's ids are what `train_prefix` trains).
        num_generations: G, the rows of a group.
        reward_weights: one weight per reward function, as the trainer sums them.
        reward_names: the reward functions' names, in `reward_weights`' order, for `success_reward` (default none).
    """

    config: MentorConfig
    placement: Placement
    num_generations: int
    reward_weights: torch.Tensor
    reward_names: list[str] = field(default_factory=list)

    def shown(self, hint: str) -> str:
        """The hint as the policy and the reward functions see it: none under `hint_source: none`."""
        return "" if self.config.hint_source == "none" else hint

    def total(self, rewards_per_func: torch.Tensor) -> torch.Tensor:
        """Weighted reward per row, as TRL sums it; NaN where every reward function abstained."""
        return weighted(rewards_per_func, self.reward_weights)

    def success(self, rewards_per_func: torch.Tensor) -> torch.Tensor:
        """Per row, what says whether it succeeded (above `collapse_threshold`): the weighted sum of the
        `success_reward` functions, so that a format reward beside them cannot hide a group that is all wrong;
        `total` by default. NaN where they all abstained."""
        if not self.config.success_reward:
            return self.total(rewards_per_func)
        columns = [i for i, name in enumerate(self.reward_names) if name in self.config.success_reward]
        unselected = [name for name in self.config.success_reward if name not in self.reward_names]
        if unselected:  # a missing column would read as a failed row, and every group would collapse
            raise InputError(f"success_reward: {unselected} selects no reward column of this batch (its reward "
                             f"functions: {self.reward_names}); name the function(s) that say whether an attempt "
                             f"succeeded, or leave success_reward empty for the weighted total")
        return weighted(rewards_per_func[:, columns], self.reward_weights[columns])

    def succeeded(self, rewards_per_func: torch.Tensor) -> torch.Tensor:
        """Per row, whether it succeeded (an unscorable row did not)."""
        return self.success(rewards_per_func) > self.config.collapse_threshold

    def row_rewards(self, rewards_per_func: torch.Tensor) -> list[float | None]:
        """`total` as a list for the trace, with None where it is NaN (unscorable)."""
        return [None if r != r else r for r in self.total(rewards_per_func).tolist()]

    def row_parts(self, rewards_per_func: torch.Tensor) -> list[dict[str, float | None]]:
        """Each row's score by each reward function, by name (None: it abstained), for the trace; {} per row with one
        reward function, whose part is the total."""
        n_funcs = rewards_per_func.shape[1] if rewards_per_func.dim() == 2 else 0
        if n_funcs < 2 or len(self.reward_names) != n_funcs:
            return [{} for _ in range(rewards_per_func.shape[0])]
        return [{name: None if v != v else v for name, v in zip(self.reward_names, row)}
                for row in rewards_per_func.tolist()]

    def collapsed(self, rewards_per_func: torch.Tensor) -> list[int]:
        """Groups none of whose rows succeeded (`succeeded`)."""
        failed = ~self.succeeded(rewards_per_func).view(-1, self.num_generations)
        return [g for g in range(failed.shape[0]) if bool(failed[g].all())]

    def zero_variance(self, rewards_per_func: torch.Tensor) -> list[int]:
        """Groups whose rows all have one total reward (an unscorable row differs from every other): GRPO gives
        them no advantage, so no gradient."""
        totals = self.total(rewards_per_func).view(-1, self.num_generations)
        return [g for g in range(totals.shape[0]) if not torch.isnan(totals[g]).any()
                and bool((totals[g] == totals[g][0]).all())]

    def all_passed(self, rewards_per_func: torch.Tensor) -> list[int]:
        """Zero-variance groups every row of which succeeded: the other kind of group with no gradient, which
        `redraw_all_pass` replaces (the all-failed kind is `collapsed`)."""
        succeeded = self.succeeded(rewards_per_func).view(-1, self.num_generations)
        return [g for g in self.zero_variance(rewards_per_func) if bool(succeeded[g].all())]

    def picks(self, totals: list[float]) -> list[int]:
        """The re-attempts of a group (by index, `totals` their `success` scores) that the strategy splices in, slot
        by slot.

        >>> def rules(**config):
        ...     return BatchRules(MentorConfig(**config), None, 4, torch.ones(1))
        >>> rules(strategy="replace_group").picks([0.0, 1.0, 0.0, 1.0])
        [0, 1, 2, 3]
        >>> rules(strategy="replace_k", k=1).picks([0.0, 1.0, 0.0, 1.0])  # the first success only
        [1]
        >>> rules(strategy="mixed", mixed_share=0.5).picks([0.0, 1.0, 0.0, 1.0])  # the first half, as sampled
        [0, 1]
        """
        G = self.num_generations
        if self.config.strategy == "replace_group":
            return list(range(G))
        if self.config.strategy == "replace_k":
            return [j for j in range(G) if totals[j] > self.config.collapse_threshold][:self.config.k]
        return list(range(max(1, round(self.config.mixed_share * G))))

    def splice(self, g: int, gen: Generation, hint_rewards: torch.Tensor, hint: str, out: Generation, offset: int,
               rewards: torch.Tensor) -> None:
        """Puts hinted rows into group g as the strategy says, in place: the whole batch's `rewards` (every rank
        updates them, so advantages agree), and the rows of `out` it holds (`offset` is its first row's index):
        what the loss sees."""
        G = self.num_generations
        totals = self.success(hint_rewards).tolist()
        for slot, j in enumerate(self.picks(totals)):
            rewards[g * G + slot] = hint_rewards[j]
            i = g * G + slot - offset
            if not 0 <= i < len(out.completions):
                continue  # a row another rank holds
            prompt_ids, completion_ids = gen.prompt_ids[j], gen.completion_ids[j]
            logprobs = gen.logprobs[j] if gen.logprobs is not None else None
            # A failed continuation must not push down a true partial solution: under `train_prefix` only the
            # hinted successes train their prefix; a failure stays as generated (on-policy, prefix in the prompt).
            if self.trained_unhinted(totals[j]):
                prefix_ids = self.placement.prefix_ids(out.prompt_ids[i], prompt_ids, hint) \
                    if self.config.train_prefix else []
                prompt_ids, completion_ids = out.prompt_ids[i], list(prefix_ids) + list(completion_ids)
                # No sampling logprob under the original prompt: NaN turns off vLLM's IS correction for the row. Under
                # `correct_off_policy` the generated tokens keep their hinted ones and a given prefix token gets log 1
                # (the hint gave it), so TRL's correction weights the row by pi(y|x) / pi(y|x,h).
                if logprobs is not None and self.config.correct_off_policy:
                    logprobs = [0.0] * len(prefix_ids) + list(logprobs)
                elif logprobs is not None:
                    logprobs = [None] * len(completion_ids)
            put_row(out, i, gen, j, prompt_ids, completion_ids, logprobs)
            out.extra_fields["mentor_hint"][i] = self.shown(hint)

    def trained_unhinted(self, success: float) -> bool:
        """Whether a spliced re-attempt whose `success` score this is trains after the unhinted prompt (`strip_hint`):
        under `train_prefix` only a success does, a failure stays as generated (on-policy, prefix in the prompt)."""
        return self.config.strip_hint and (success > self.config.collapse_threshold or not self.config.train_prefix)

    def replace_group(self, g: int, gen: Generation, scores: torch.Tensor, out: Generation, offset: int,
                      rewards: torch.Tensor) -> None:
        """Group g becomes `gen`'s G rows as generated, another prompt's fresh draw (`redraw_all_pass`), in place: the
        whole batch's `rewards`, and the rows of `out` this rank holds. On-policy: their sampling log-probs stay."""
        G = self.num_generations
        rewards[g * G:(g + 1) * G] = scores
        for j in range(G):
            i = g * G + j - offset
            if 0 <= i < len(out.completions):
                logprobs = gen.logprobs[j] if gen.logprobs is not None else None
                put_row(out, i, gen, j, gen.prompt_ids[j], gen.completion_ids[j], logprobs)
                out.extra_fields["mentor_hint"][i] = ""


def put_row(out: Generation, i: int, gen: Generation, j: int, prompt_ids: list, completion_ids: list,
            logprobs: list | None) -> None:
    """Row i of `out` becomes row j of `gen`, with the prompt and completion ids and sampling log-probs given (a
    splice may move a hint's prefix from the prompt into the completion); a tool mask grows by the ids added."""
    out.prompt_ids[i], out.completion_ids[i] = prompt_ids, completion_ids
    out.completions[i] = gen.completions[j]
    if out.logprobs is not None:
        out.logprobs[i] = logprobs
    if out.tool_mask is not None and gen.tool_mask is not None:
        out.tool_mask[i] = [1] * (len(completion_ids) - len(gen.tool_mask[j])) + list(gen.tool_mask[j])
    for key, values in gen.extra_fields.items():
        if isinstance(values, list) and isinstance(out.extra_fields.get(key), list):
            out.extra_fields[key][i] = values[j]
