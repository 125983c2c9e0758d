"""The leakage checker node: the gate every draft passes before it is a hint, in both shipped graphs.

It lives in the library, not in one graph's folder: the static-hints graph uses it as the mentor graph does, it
reads only the library's state keys (`draft`, `tier`, `leaked_drafts`), and an edited copy of a graph keeps the
same gate unless it wires in its own."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from mentor.leakage import check_leak
from mentor.leakage.fold import visible_text
from mentor.runtime.context import MentorContext, context_of
from mentor.runtime.nodes import group_of, run_backend
from mentor.runtime.state import MentorStateBase
from mentor.tasks import get_task


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
    """Rejects drafts that reveal the answer; deterministic detectors always run, an LLM judge optionally."""
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
