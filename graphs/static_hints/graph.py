"""The static-hints baseline: hint_library -> leakage_checker (`graph`), or hint_library -> hint_unchecked
(`ungated`: what the library holds, unjudged, as feedback-RL baselines give it). Wiring only."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from mentor.runtime.context import MentorContext
from mentor.runtime.graph_files import sibling
from mentor.runtime.leakage_node import leakage_checker
from mentor.runtime.state import MentorStateBase

nodes = sibling(__file__, "nodes")  # this folder's nodes.py, also in a copy


def build_graph():
    """The compiled static-hints graph."""
    builder = StateGraph(MentorStateBase, context_schema=MentorContext)
    builder.add_node("hint_library", nodes.hint_library)
    builder.add_node("leakage_checker", leakage_checker)
    builder.add_edge(START, "hint_library")
    builder.add_conditional_edges("hint_library", lambda s: END if s.get("withheld") else "leakage_checker")
    builder.add_edge("leakage_checker", END)
    return builder.compile(name="static_hints")


def build_ungated():
    """The compiled library without its leakage checker."""
    builder = StateGraph(MentorStateBase, context_schema=MentorContext)
    builder.add_node("hint_library", nodes.hint_library)
    builder.add_node("hint_unchecked", nodes.hint_unchecked)
    builder.add_edge(START, "hint_library")
    builder.add_conditional_edges("hint_library", lambda s: END if s.get("withheld") else "hint_unchecked")
    builder.add_edge("hint_unchecked", END)
    return builder.compile(name="static_hints_ungated")


graph = build_graph()
ungated = build_ungated()
