"""Reference analysts for `mentor eval`'s diagnosis accuracy: a graph of one node that gives no hint and names the
first wrong step of the group's first attempt, numbered as an annotated first wrong step is (mentor.mathtext.steps.
split_steps of the completion). `first_step` and `last_step` are trivial guesses: an analyst that does not beat them
has learnt nothing. `verifier_step` is the math verifier's own per-attempt `first_wrong_step` (its first arithmetic
slip, else its first result the reference never has), what the rules could say in the attempt's numbering."""

from __future__ import annotations

from typing import Any, Callable

from langgraph.graph import END, START, StateGraph

from mentor.graphs.mentor.state import MentorState
from mentor.mathtext.steps import split_steps
from mentor.tasks import get_task


def _guess(step: Callable[[dict[str, Any]], int | None]) -> Any:
    async def fixed_step(state: MentorState) -> dict[str, Any]:
        return {"diagnosis": {"first_error_step": step(state["group"])}, "hint": None, "withheld": True,
                "backend": {"fixed_step": "rules"}}

    builder = StateGraph(MentorState)
    builder.add_node("fixed_step", fixed_step)
    builder.add_edge(START, "fixed_step")
    builder.add_edge("fixed_step", END)
    return builder.compile(name="fixed_step")


def _verifier_step(group: dict[str, Any]) -> int | None:
    return get_task(group["task"]).feedback(group["attempts"][0]["completion"], group["reference"])["first_wrong_step"]


first_step = _guess(lambda group: 1)
last_step = _guess(lambda group: max(1, len(split_steps(group["attempts"][0]["completion"]))))
verifier_step = _guess(_verifier_step)
