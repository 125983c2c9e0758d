"""A row's hint reliance: HiLL's measure (mentor/reliance.py) over its correct hinted responses."""

from __future__ import annotations

from mentor.evaluation.inputs import Inputs
from mentor.evaluation.policy import Policy


def reliance(policy: Policy, rescued: list[tuple[Inputs, list[int]]]) -> float | None:
    """HiLL's hint reliance (mentor/reliance.py) over correct hinted responses, each its inputs and generated ids.
    In prefix placement y is the whole response, prefix included. None without a correct hinted response."""
    from mentor.reliance import HintedResponse, mean, reliance_terms

    responses = [HintedResponse(x.plain, x.hinted, x.prefix, gen) for x, gen in rescued]
    return mean(reliance_terms(policy.model, policy.tokenizer.pad_token_id, responses))
