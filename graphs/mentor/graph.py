"""The mentor graph: wiring only. Its agents are in nodes.py, its state in state.py; the leakage checker and the run's
settings are the library's (mentor.runtime)."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from mentor.graphs.mentor.nodes import error_classifier, hint_composer, root_cause_analyst
from mentor.graphs.mentor.state import MentorState
from mentor.runtime.context import MentorContext
from mentor.runtime.leakage_node import leakage_checker


def route_after_check(state: MentorState) -> Literal["hint_composer", "__end__"]:
    """Back to the composer with the checker's reason, until a draft passes or the hint is withheld."""
    return "hint_composer" if state.get("hint") is None and not state.get("withheld") else END


def build_graph(config=None):
    """The compiled mentor graph. `config` is accepted for the `build_graph(config)` convention."""
    builder = StateGraph(MentorState, context_schema=MentorContext)
    builder.add_node("error_classifier", error_classifier)
    builder.add_node("root_cause_analyst", root_cause_analyst)
    builder.add_node("hint_composer", hint_composer)
    builder.add_node("leakage_checker", leakage_checker)
    builder.add_edge(START, "error_classifier")
    builder.add_edge("error_classifier", "root_cause_analyst")
    builder.add_edge("root_cause_analyst", "hint_composer")
    builder.add_edge("hint_composer", "leakage_checker")
    builder.add_conditional_edges("leakage_checker", route_after_check)
    return builder.compile(name="mentor")


graph = build_graph()
