"""The contract between the library and a mentor graph: the state keys the runtime and the library's nodes read and
write. A graph's state extends `MentorStateBase` with its own keys; it stays plain JSON, so traces, `langgraph dev`
and Studio can show it as is."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

LIBRARY_FIELD = "hint"  # the reference field (dataset column) of a problem's pre-defined hint; the hook copies it


def merge(left: dict, right: dict) -> dict:
    return {**left, **right}


class MentorStateBase(TypedDict, total=False):
    group: dict[str, Any]            # the FailedGroup, as JSON (input)
    diagnosis: dict[str, Any]        # Diagnosis as JSON
    tier: int                        # tier of the current draft
    draft: str                       # the current hint draft, checked by the leakage checker
    leak_feedback: str               # why the last draft was rejected (leakage_checker)
    leaked_drafts: Annotated[list[dict[str, Any]], operator.add]
    hint: str | None                 # the accepted hint, None when withheld (leakage_checker)
    withheld: bool
    format_only: bool                # the rules composer's draft says nothing but the answer's format (Task.format_only)
    backend: Annotated[dict[str, str], merge]   # node -> backend that produced its output
    fallbacks: Annotated[list[str], operator.add]  # "node: reason" for each llm -> rules fallback
    prompts: Annotated[dict[str, str], merge]   # llm node -> the prompt as sent (its trace record keeps it)
    replies: Annotated[dict[str, list[str]], merge]  # llm node -> the model's raw replies, re-asks included (the same)
