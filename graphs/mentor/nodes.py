"""The mentor's four agents: error classifier, root-cause analyst, hint composer and leakage checker. Each runs its
`rules` or `llm` backend, as the config says for that node (mentor.runtime.nodes). The leakage checker is the gate
every draft passes before it is a hint; the static-hints graph ends in it too. Its detectors are the library's
(mentor.leakage), so an edited copy of this file keeps them."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from langgraph.runtime import Runtime

from mentor.leakage import check_leak
from mentor.leakage.fold import visible_text
from mentor.runtime.context import MentorContext, context_of
from mentor.runtime.graph_files import sibling
from mentor.runtime.nodes import group_of, run_backend
from mentor.runtime.state import MentorStateBase
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


def _task_or_none(name: str):
    """The group's task adapter, whose own detectors join the generic ones; None (the generic ones alone) for a task
    this process does not know, or whose module fails to import."""
    try:
        return get_task(name)
    except Exception:
        return None


def _verdict(value: Any) -> bool:
    """The judge's `leaked`: a JSON bool, or the string a model may write instead ("false" is not truthy here)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise ValueError(f"leaked must be true or false, got {value!r}")


NO_REASON = "the llm judge gave no reason"
_VERDICT_WORDS = ("", "true", "false", "yes", "no", "leaked", "null", "none")


def judge_reason(value: Any) -> str:
    """The judge's `reason`, or NO_REASON where it gave none: a blank, or a bare verdict word (a small model wrote
    `"reason": "false"`), which is kept after it."""
    text = str(value if value is not None else "").strip()
    if text.strip(" \t\n.,;:!?\"'").lower() not in _VERDICT_WORDS:
        return text
    return f"{NO_REASON} (it wrote {text[:40]!r})" if text else NO_REASON


async def leakage_checker(state: MentorStateBase, runtime: Runtime[MentorContext]) -> dict[str, Any]:
    """Rejects drafts that reveal the answer; deterministic detectors always run, an LLM judge optionally. It reads
    only the library's state keys (`draft`, `tier`, `leaked_drafts`), so any graph can end in it."""
    group = group_of(state)
    settings = context_of(runtime)
    # The gate checks every draft, whoever wrote it: the math composer's own checks only pick its draft, and
    # an llm composer or the composer's fallback text is not checked before this.
    verdict = await asyncio.to_thread(check_leak, state["draft"], group.reference, _task_or_none(group.task),
                                      problem=group.prompt)
    detectors, reason = list(verdict.detectors), verdict.reason
    backend: dict[str, Any] = {"backend": {"leakage_checker": "rules"}}
    if settings.nodes["leakage_checker"] == "llm" and not verdict.leaked:
        judge = await run_backend("leakage_checker", state, runtime, group, lambda: {"leaked": False, "reason": ""},
                                  lambda out: {"leaked": _verdict(out["leaked"]),
                                               "reason": judge_reason(out.get("reason"))})
        backend = {k: v for k, v in judge.items() if k in ("backend", "fallbacks", "prompts", "replies")}
        if judge["leaked"]:
            detectors, reason = ["llm_judge"], judge["reason"]
    if not detectors:
        # The policy sees the draft without its invisible characters: the detectors read it so, folded further.
        return {**backend, "hint": visible_text(state["draft"]), "withheld": False}
    withheld = len(state.get("leaked_drafts", [])) + 1 > settings.max_leak_retries  # drafts sent back so far
    return {**backend, "leaked_drafts": [{"draft": state["draft"], "tier": state["tier"], "detectors": detectors,
                                          "reason": reason}],
            "leak_feedback": f"The draft leaked ({', '.join(detectors)}): {reason}", "hint": None,
            "withheld": withheld}
