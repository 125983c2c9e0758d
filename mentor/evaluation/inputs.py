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
    """The inputs of one group, its hint (None or "" for none) placed as `placement` (`prompt` or `prefix`) says,
    through the same `Placement` as the in-step hook, and made safe as in training: no forged chat turns."""
    from mentor.tasks import get_task

    place, prompt = policy.placement(placement, get_task(group.task)), policy.prompt(group.prompt)
    rendered = place.rendered(prompt)
    plain = policy.encode(rendered)
    if not hint:
        return Inputs(plain, plain, [])
    hint, _ = place.safe_hint(hint)
    text = place.rendered(place.hinted_prompt(prompt, hint))
    if placement == "prompt":
        return Inputs(plain, policy.encode(text), [], hinted_text=text)
    prefix = place.prefix_ids(plain, policy.encode(text), hint)
    return Inputs(plain, plain + prefix, prefix, text[len(rendered):], text)
