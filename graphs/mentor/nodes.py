"""The four agents. Each runs its `rules` or `llm` backend, as the config says for that node."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any, Callable

from langchain_core.runnables import RunnableConfig

from mentor.graphs.mentor.configuration import Configuration
from mentor.graphs.mentor.state import MentorState
from mentor.leakage import check_leak
from mentor.runtime.llm import StructuredOutput, ask, chat_model_from_config
from mentor.runtime.schemas import fit_schema, node_schema
from mentor.tasks import get_task
from mentor.tasks.base import HINT_TIERS
from mentor.types import Diagnosis, FailedGroup


def _group(state: MentorState) -> FailedGroup:
    return FailedGroup.from_dict(state["group"])


def _with_feedback(group: FailedGroup) -> FailedGroup:
    """The group with the verifier's feedback on every attempt (may run code: call it off the event loop)."""
    task = get_task(group.task)
    for attempt in group.attempts:
        if attempt.feedback is None:
            attempt.feedback = task.feedback(attempt.completion, group.reference)
    return group


def _prompt_variables(state: MentorState, group: FailedGroup) -> dict[str, str]:
    attempts = "\n\n".join(f"Attempt {i + 1} (reward {a.reward}):\n{a.completion}\nVerifier: {json.dumps(a.feedback)}"
                           for i, a in enumerate(group.attempts))
    return {"task": group.task, "problem": group.prompt, "reference": json.dumps(group.reference),
            "attempts": attempts, "taxonomy": json.dumps(get_task(group.task).taxonomy, indent=1),
            "diagnosis": json.dumps(state.get("diagnosis", {})), "tier": str(state.get("tier", 1)),
            "previous_hints": json.dumps(group.previous_hints), "feedback": state.get("leak_feedback", ""),
            "hint": state.get("draft", "")}


async def _run(node: str, state: MentorState, config: RunnableConfig, group: FailedGroup,
               rules: Callable[[], dict], validate: Callable[[dict], dict]) -> dict[str, Any]:
    """`rules()` or the chat model's validated answer; a failing `llm` falls back to `rules`, counted.

    `rules` runs off the event loop: a task's rules may be slow (the math composer's leak checks), and other
    groups' graphs share the loop."""
    ctx = Configuration.from_runnable_config(config)
    if ctx.mentor.nodes[node] == "rules":
        return {**await asyncio.to_thread(rules), "backend": {node: "rules"}}
    try:
        llm = ctx.mentor.llm
        schema = node_schema(node, get_task(group.task).taxonomy, len(group.attempts))
        out = await ask(node, group.task, _prompt_variables(state, group), validate,
                        chat_model=ctx.chat_model or chat_model_from_config(llm),
                        prompts_dir=ctx.mentor.prompts_dir, parse_retries=llm.parse_retries,
                        limit=ctx.llm_limit, timeout_s=llm.timeout_s, max_tokens=llm.max_tokens,
                        schema=fit_schema(schema, llm.max_tokens) if llm.max_tokens else schema,
                        structured=ctx.structured or StructuredOutput(llm.structured_output))
        return {**out, "backend": {node: "llm"}}
    except Exception as e:  # an unreachable server, a timeout, a 5xx or unusable output
        return {**await asyncio.to_thread(rules), "backend": {node: "rules (llm fallback)"},
                "fallbacks": [f"{node}: {type(e).__name__}: {str(e)[:300]}"]}


async def error_classifier(state: MentorState, config: RunnableConfig) -> dict[str, Any]:
    """Labels each failed attempt with an error class from the task's taxonomy; records the verifier's feedback."""
    group = await asyncio.to_thread(_with_feedback, _group(state))
    task = get_task(group.task)

    def validate(out: dict) -> dict:
        classes = [str(c) for c in out["classes"]]
        if len(classes) != len(group.attempts) or not set(classes) <= set(task.taxonomy):
            raise ValueError(f"need one class per attempt ({len(group.attempts)}) from {list(task.taxonomy)}")
        return {"classes": classes}

    out = await _run("error_classifier", state, config, group,
                     lambda: {"classes": [task.classify(a, group.reference) for a in group.attempts]}, validate)
    return {**out, "group": group.to_dict()}  # later nodes read the feedback instead of recomputing it


async def root_cause_analyst(state: MentorState, config: RunnableConfig) -> dict[str, Any]:
    """States why the attempts fail: the dominant error class, the root cause, the first wrong step."""
    group = _group(state)
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

    return await _run("root_cause_analyst", state, config, group,
                      lambda: diagnosis(*task.analyse(group, state["classes"])), validate)


async def hint_composer(state: MentorState, config: RunnableConfig) -> dict[str, Any]:
    """Writes a hint at the weakest tier likely to help, or a safer one after a rejected draft."""
    group = _group(state)
    task = get_task(group.task)
    diagnosis = Diagnosis(**state["diagnosis"])
    tier = state.get("tier") or task.choose_tier(group, diagnosis, 0)
    state = {**state, "tier": tier}

    def validate(out: dict) -> dict:
        if not str(out["hint"]).strip() or int(out.get("tier", tier)) not in HINT_TIERS:
            raise ValueError(f"need a non-empty hint and a tier in {sorted(HINT_TIERS)}")
        return {"draft": str(out["hint"]).strip(), "tier": int(out.get("tier", tier))}

    return await _run("hint_composer", state, config, group,
                      lambda: {"draft": task.compose(group, diagnosis, tier, state.get("leak_feedback")),
                               "tier": tier}, validate)


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


async def leakage_checker(state: MentorState, config: RunnableConfig) -> dict[str, Any]:
    """Rejects drafts that reveal the answer; deterministic detectors always run, an LLM judge optionally."""
    group = _group(state)
    ctx = Configuration.from_runnable_config(config)
    # The gate checks every draft, whoever wrote it: the math composer's own checks only pick its draft, and
    # an llm composer or the composer's fallback text is not checked before this.
    verdict = await asyncio.to_thread(check_leak, state["draft"], group.reference, group.task, problem=group.prompt)
    detectors, reason = list(verdict.detectors), verdict.reason
    backend: dict[str, Any] = {"backend": {"leakage_checker": "rules"}}
    if ctx.mentor.nodes["leakage_checker"] == "llm" and not verdict.leaked:
        judge = await _run("leakage_checker", state, config, group, lambda: {"leaked": False, "reason": ""},
                           lambda out: {"leaked": _verdict(out["leaked"]), "reason": str(out.get("reason", ""))})
        backend = {k: v for k, v in judge.items() if k in ("backend", "fallbacks")}
        if judge["leaked"]:
            detectors, reason = ["llm_judge"], judge["reason"]
    if not detectors:
        return {**backend, "hint": state["draft"], "withheld": False}
    withheld = len(state.get("leaked_drafts", [])) + 1 > ctx.mentor.max_leak_retries  # drafts sent back so far
    return {**backend, "leaked_drafts": [{"draft": state["draft"], "tier": state["tier"], "detectors": detectors,
                                          "reason": reason}],
            "leak_feedback": f"The draft leaked ({', '.join(detectors)}): {reason}", "hint": None,
            "withheld": withheld}
