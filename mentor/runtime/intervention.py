"""The Intervention a graph run stands for, with every string its nodes returned checked."""

from __future__ import annotations

from typing import Any

from mentor.text import invalid_text, repaired
from mentor.types import Diagnosis, FailedGroup, Intervention


def checked_text(result: Intervention) -> Intervention:
    """The intervention with every string its nodes returned checked (mentor/text.py): a hint that is not text is
    refused (no hint, an `error`, counted in `mentor/failures`), and each other string that is not is repaired, so
    that neither a tokenizer nor the trace store ever sees one."""
    where = invalid_text(result.hint, "hint")
    if where:
        result.hint = None
        result.error = (f"{where} holds a lone surrogate, which is not text; the hint is refused"
                        + (f" ({result.error})" if result.error else ""))
    result.diagnosis = Diagnosis(**repaired(vars(result.diagnosis)))
    for name in ("problem_id", "task", "leak", "latency_s", "backend", "fallbacks", "error", "nodes"):
        setattr(result, name, repaired(getattr(result, name)))
    return result


def to_intervention(group: FailedGroup, state: dict[str, Any], nodes: list[dict[str, Any]]) -> Intervention:
    """The Intervention a finished graph state stands for."""
    latency: dict[str, float] = {}
    for record in nodes:
        latency[record["node"]] = latency.get(record["node"], 0.0) + record["latency_s"]
    diagnosis = Diagnosis(**state["diagnosis"]) if state.get("diagnosis") else Diagnosis()
    return Intervention(
        problem_id=group.problem_id, task=group.task, diagnosis=diagnosis, hint=state.get("hint"),
        tier=state.get("tier", 0), withheld=bool(state.get("withheld")),
        leak={"leaked_drafts": state.get("leaked_drafts", [])}, latency_s=latency,
        backend=dict(state.get("backend", {})), fallbacks=list(state.get("fallbacks", [])), nodes=nodes)
