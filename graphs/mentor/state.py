"""The mentor graph's state: plain JSON, so traces, `langgraph dev` and Studio can show it as is."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def merge(left: dict, right: dict) -> dict:
    return {**left, **right}


class MentorState(TypedDict, total=False):
    group: dict[str, Any]            # the FailedGroup, as JSON (input)
    classes: list[str]               # error class per attempt (error_classifier)
    diagnosis: dict[str, Any]        # Diagnosis as JSON (root_cause_analyst)
    tier: int                        # tier of the current draft (hint_composer)
    draft: str                       # the current hint draft (hint_composer)
    leak_feedback: str               # why the last draft was rejected (leakage_checker)
    leaked_drafts: Annotated[list[dict[str, Any]], operator.add]
    hint: str | None                 # the accepted hint, None when withheld (leakage_checker)
    withheld: bool
    backend: Annotated[dict[str, str], merge]   # node -> backend that produced its output
    fallbacks: Annotated[list[str], operator.add]  # "node: reason" for each llm -> rules fallback
