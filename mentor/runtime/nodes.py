"""What every node of a mentor graph shares: its group, the prompt variables, and the rules/llm dispatch with its
fallback. Here, not in graphs/, so that an edited copy of a graph does not fork them."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

from langgraph.runtime import Runtime

from mentor.llm.client import StructuredOutput, ask, chat_model_from_config
from mentor.llm.schemas import fit_schema, node_schema
from mentor.runtime.context import MentorContext, context_of, lent_resources
from mentor.runtime.state import MentorStateBase
from mentor.tasks import get_task
from mentor.types import FailedGroup


def group_of(state: MentorStateBase) -> FailedGroup:
    return FailedGroup.from_dict(state["group"])


def prompt_variables(state: MentorStateBase, group: FailedGroup) -> dict[str, str]:
    """The `{name}` values every node prompt may use: mentor.llm.prompts.PROMPT_FIELDS less `json_schema`, which
    the request adds (prompts/README.md says what each holds)."""
    attempts = "\n\n".join(f"Attempt {i + 1} (reward {a.reward}):\n{a.completion}\nVerifier: {json.dumps(a.feedback)}"
                           for i, a in enumerate(group.attempts))
    return {"task": group.task, "problem": group.prompt, "reference": json.dumps(group.reference),
            "attempts": attempts, "taxonomy": json.dumps(get_task(group.task).taxonomy, indent=1),
            "diagnosis": json.dumps(state.get("diagnosis", {})), "tier": str(state.get("tier", 1)),
            "previous_hints": json.dumps(group.previous_hints), "feedback": state.get("leak_feedback", ""),
            "hint": state.get("draft", "")}


async def run_backend(node: str, state: MentorStateBase, runtime: Runtime[MentorContext] | None, group: FailedGroup,
                      rules: Callable[[], dict], validate: Callable[[dict], dict]) -> dict[str, Any]:
    """`rules()` or the chat model's validated answer, as the config sets `node`'s backend; a failing `llm` falls
    back to `rules`, counted.

    `rules` runs off the event loop: a task's rules may be slow (the math composer's leak checks), and other
    groups' graphs share the loop."""
    settings = context_of(runtime)
    if settings.nodes[node] == "rules":
        return {**await asyncio.to_thread(rules), "backend": {node: "rules"}}
    # The prompt as sent and the model's raw replies: the node record keeps them (`prompts` and `replies`, lifted
    # into it by the runner).
    sent: list[str] = []
    replies: list[str] = []
    try:
        llm, lent = settings.llm, lent_resources()
        schema = node_schema(node, get_task(group.task).taxonomy, len(group.attempts))
        out = await ask(node, group.task, prompt_variables(state, group), validate,
                        chat_model=lent.chat_model or chat_model_from_config(llm),
                        prompts_dir=settings.prompts_dir, parse_retries=llm.parse_retries,
                        limit=lent.llm_limit, timeout_s=llm.request_timeout_s,
                        queue_timeout_s=llm.queue_timeout_s, max_tokens=llm.max_tokens,
                        schema=fit_schema(schema, llm.max_tokens) if llm.max_tokens else schema,
                        structured=lent.structured or StructuredOutput(llm.structured_output), sent=sent,
                        replies=replies)
        return {**out, "backend": {node: "llm"}, "prompts": {node: sent[-1]}, "replies": {node: replies}}
    except Exception as e:  # an unreachable server, a timeout, a 5xx or unusable output
        return {**await asyncio.to_thread(rules), "backend": {node: "rules (llm fallback)"},
                "fallbacks": [f"{node}: {type(e).__name__}: {str(e)[:300]}"],
                **({"prompts": {node: sent[-1]}} if sent else {}), **({"replies": {node: replies}} if replies else {})}
