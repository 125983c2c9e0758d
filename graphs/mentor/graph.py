"""The mentor graph: wiring only. Its four agents are in nodes.py, its state in state.py; the run's settings are the
library's (mentor.runtime)."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from mentor.runtime.context import MentorContext
from mentor.runtime.graph_files import sibling

# This folder's own files, by path: a copy of the folder runs its own nodes (mentor.runtime.graph_files).
nodes = sibling(__file__, "nodes")
MentorState = sibling(__file__, "state").MentorState


def route_after_check(state: MentorState) -> Literal["hint_composer", "__end__"]:
    """Back to the composer with the checker's reason, until a draft passes or the hint is withheld."""
    return "hint_composer" if state.get("hint") is None and not state.get("withheld") else END


def build_graph():
    """The compiled mentor graph."""
    builder = StateGraph(MentorState, context_schema=MentorContext)
    builder.add_node("error_classifier", nodes.error_classifier)
    builder.add_node("root_cause_analyst", nodes.root_cause_analyst)
    builder.add_node("hint_composer", nodes.hint_composer)
    builder.add_node("leakage_checker", nodes.leakage_checker)
    builder.add_edge(START, "error_classifier")
    builder.add_edge("error_classifier", "root_cause_analyst")
    builder.add_edge("root_cause_analyst", "hint_composer")
    builder.add_edge("hint_composer", "leakage_checker")
    builder.add_conditional_edges("leakage_checker", route_after_check)
    return builder.compile(name="mentor")


graph = build_graph()
