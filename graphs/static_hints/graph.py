"""The static-hints baseline: hint_library -> leakage_checker (`graph`), or hint_library -> hint_unchecked
(`ungated`: what the library holds, unjudged, as feedback-RL baselines give it). Wiring only."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from mentor.graphs.mentor.nodes import leakage_checker  # the mentor's gate, the same for the library
from mentor.runtime.context import MentorContext
from mentor.runtime.graph_files import sibling
from mentor.runtime.state import MentorStateBase

nodes = sibling(__file__, "nodes")  # this folder's nodes.py, also in a copy


def build_graph(name: str = "leakage_checker", last=leakage_checker, graph_name: str = "static_hints"):
    """The compiled library, its draft passed to `last` (the leakage checker by default) unless it has none."""
    builder = StateGraph(MentorStateBase, context_schema=MentorContext)
    builder.add_node("hint_library", nodes.hint_library)
    builder.add_node(name, last)
    builder.add_edge(START, "hint_library")
    builder.add_conditional_edges("hint_library", lambda s: END if s.get("withheld") else name)
    builder.add_edge(name, END)
    return builder.compile(name=graph_name)


graph = build_graph()
ungated = build_graph("hint_unchecked", nodes.hint_unchecked, "static_hints_ungated")
