"""The Intervention a graph run stands for, with every string its nodes returned checked, and its error classes held
to its task's taxonomy (a class a node made up is warned about, once a task)."""

from __future__ import annotations

import warnings
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


# An edited node need not keep to its task's taxonomy (the `rules` classifier and the `llm` one's schema enum do): a
# made-up class would otherwise flow silently into the metrics (`mentor/error_class/<name>`) and the traces.
def warn_unknown_classes(intervention: Intervention, warned: set[str]) -> None:
    """Warns (UserWarning) the first time a task's diagnosis names a class outside its taxonomy; `warned` holds the
    tasks already warned about (one set per runtime)."""
    if intervention.task in warned:
        return
    try:
        from mentor.tasks import get_task

        taxonomy = set(get_task(intervention.task).taxonomy)
    except Exception:  # a task this process cannot load has no taxonomy to hold the classes to
        return
    named = set(intervention.diagnosis.error_classes) | {intervention.diagnosis.error_class}
    unknown = sorted(c for c in named - taxonomy if c != "unknown")  # "unknown": the default of no diagnosis
    if unknown:
        warned.add(intervention.task)
        warnings.warn(f"error classes {unknown} (group {intervention.problem_id}) are not classes of the "
                      f"'{intervention.task}' task, whose classes are {sorted(taxonomy)}; a node made them up (they "
                      f"are kept, counted under their own names). Warned once per task", UserWarning, stacklevel=2)
