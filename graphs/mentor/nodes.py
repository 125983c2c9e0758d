"""The mentor graph's own agents: error classifier, root-cause analyst, hint composer. Each runs its `rules` or
`llm` backend, as the config says for that node (mentor.runtime.nodes); the leakage checker is the library's
(mentor.runtime.leakage_node)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from langgraph.runtime import Runtime

from mentor.runtime.context import MentorContext
from mentor.runtime.graph_files import sibling
from mentor.runtime.nodes import group_of, run_backend
from mentor.tasks import get_task
from mentor.tasks.base import HINT_TIERS
from mentor.types import Diagnosis, FailedGroup

MentorState = sibling(__file__, "state").MentorState  # this folder's state.py, also in a copy


def _with_feedback(group: FailedGroup) -> FailedGroup:
    """The group with the verifier's feedback on every attempt (may run code: call it off the event loop)."""
    task = get_task(group.task)
    for attempt in group.attempts:
        if attempt.feedback is None:
            attempt.feedback = task.feedback(attempt.completion, group.reference)
    return group


async def error_classifier(state: MentorState, runtime: Runtime[MentorContext]) -> dict[str, Any]:
    """Labels each failed attempt with an error class from the task's taxonomy; records the verifier's feedback."""
    group = await asyncio.to_thread(_with_feedback, group_of(state))
    task = get_task(group.task)

    def validate(out: dict) -> dict:
        classes = [str(c) for c in out["classes"]]
        if len(classes) != len(group.attempts) or not set(classes) <= set(task.taxonomy):
            raise ValueError(f"need one class per attempt ({len(group.attempts)}) from {list(task.taxonomy)}")
        return {"classes": classes}

    out = await run_backend("error_classifier", state, runtime, group,
                            lambda: {"classes": [task.classify(a, group.reference) for a in group.attempts]}, validate)
    return {**out, "group": group.to_dict()}  # later nodes read the feedback instead of recomputing it


async def root_cause_analyst(state: MentorState, runtime: Runtime[MentorContext]) -> dict[str, Any]:
    """States why the attempts fail: the dominant error class, the root cause, the first wrong step."""
    group = group_of(state)
    task = get_task(group.task)
    counts = Counter(state["classes"])
    dominant = task.dominant_class(counts)

    def diagnosis(root_cause: str, step: int | None) -> dict:
        return {"diagnosis": Diagnosis(dominant, dict(counts), root_cause, step).__dict__}

    def validate(out: dict) -> dict:
        step = out.get("first_error_step")
        if not str(out["root_cause"]).strip() or not (step is None or isinstance(step, int)):
            raise ValueError("need a non-empty root_cause and an integer or null first_error_step")
        return diagnosis(str(out["root_cause"]), step)

    return await run_backend("root_cause_analyst", state, runtime, group,
                             lambda: diagnosis(*task.analyse(group, state["classes"])), validate)


async def hint_composer(state: MentorState, runtime: Runtime[MentorContext]) -> dict[str, Any]:
    """Writes a hint at the weakest tier likely to help, or a safer one after a rejected draft."""
    group = group_of(state)
    task = get_task(group.task)
    diagnosis = Diagnosis(**state["diagnosis"])
    tier = state.get("tier") or task.choose_tier(group, diagnosis)
    state = {**state, "tier": tier}

    def rules() -> dict:
        out = {"draft": task.compose(group, diagnosis, tier, state.get("leak_feedback")), "tier": tier}
        return {**out, "format_only": task.format_only(out["draft"])}  # counted: mentor/format_only_hints

    def validate(out: dict) -> dict:
        if not str(out["hint"]).strip() or int(out.get("tier", tier)) not in HINT_TIERS:
            raise ValueError(f"need a non-empty hint and a tier in {sorted(HINT_TIERS)}")
        return {"draft": str(out["hint"]).strip(), "tier": int(out.get("tier", tier)), "format_only": False}

    return await run_backend("hint_composer", state, runtime, group, rules, validate)
