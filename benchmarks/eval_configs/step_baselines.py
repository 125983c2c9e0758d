"""Trivial analysts for `mentor eval`'s diagnosis accuracy: a graph of one node that gives no hint and names a fixed
first wrong step, the first or the last step of the group's first attempt (as mentor.leakage.split_steps numbers
it, the numbering of an annotated first wrong step). An analyst that does not beat these has learnt nothing."""

from __future__ import annotations

from typing import Any, Callable

from langgraph.graph import END, START, StateGraph

from graphs.mentor.state import MentorState
from mentor.leakage import split_steps


def _guess(step: Callable[[str], int]) -> Any:
    async def fixed_step(state: MentorState) -> dict[str, Any]:
        completion = state["group"]["attempts"][0]["completion"]
        return {"diagnosis": {"first_error_step": step(completion)}, "hint": None, "withheld": True,
                "backend": {"fixed_step": "rules"}}

    builder = StateGraph(MentorState)
    builder.add_node("fixed_step", fixed_step)
    builder.add_edge(START, "fixed_step")
    builder.add_edge("fixed_step", END)
    return builder.compile(name="fixed_step")


first_step = _guess(lambda completion: 1)
last_step = _guess(lambda completion: max(1, len(split_steps(completion))))
