"""What the policy continues for one group: its rendered prompt, with the hint placed as the config says."""

from __future__ import annotations

from dataclasses import dataclass

from mentor.evaluation.policy import Policy
from mentor.types import FailedGroup


@dataclass
class Inputs:
    """What the policy continues for one group: the unhinted text's ids, the hinted input's ids (prompt or prompt +
    prefix) and, in prefix placement, the prefix's ids (the given start of the response); and the hinted input's
    text (None without a hint), which the interventions' trace records keep as the prompt sent."""

    plain: list[int]
    hinted: list[int]
    prefix: list[int]
    prefix_text: str = ""
    hinted_text: str | None = None


def group_inputs(policy: Policy, group: FailedGroup, hint: str | None, placement: str) -> Inputs:
    from mentor.placement import neutralised, response_prefix_ids, special_token_texts
    from mentor.tasks import get_task

    task, rendered = get_task(group.task), policy.render(group.prompt)
    plain = policy.encode(rendered)
    if not hint:
        return Inputs(plain, plain, [])
    hint, _ = neutralised(hint, special_token_texts(policy.tokenizer))  # as in training: no forged chat turns
    if placement == "prompt":  # the task formats the hint into the user turn, as the in-step hook does
        text = policy.render(task.hinted_prompt(group.prompt, hint))
        return Inputs(plain, policy.encode(text), [], hinted_text=text)
    prefix_text = task.response_prefix(hint)
    prefix = response_prefix_ids(task, policy.encode, plain, policy.encode(rendered + prefix_text), hint)
    return Inputs(plain, plain + prefix, prefix, prefix_text, rendered + prefix_text)
