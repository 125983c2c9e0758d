"""What a run of a mentor graph is configured with: LangGraph's run context (`context_schema`, `Runtime.context`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from mentor.config import MentorConfig


@dataclass
class MentorContext:
    """The mentor config, plus the live objects the runtime hands to the nodes.

    MentorRuntime passes one to every run (`context=`); a run given none (`langgraph dev`, Studio, a plain `invoke`)
    gets the defaults, and a mapping (`"context": {"mentor": {"nodes": {...}}}` in a dev-server run) is read as one.

    Args:
        mentor: node backends, prompts folder, leak-retry bound (see `MentorConfig`); a mapping is loaded as one.
        chat_model: the LangChain chat model of `llm` nodes; built from the config's `llm` when not given.
        llm_limit: an asyncio.Semaphore bounding `llm` requests in flight over all groups.
        structured: whether requests still ask for constrained decoding, shared by a runtime's runs (see
            `mentor.runtime.llm.StructuredOutput`); default: per request, from the config's `llm.structured_output`.
    """

    mentor: MentorConfig = field(default_factory=MentorConfig)
    chat_model: Any = None
    llm_limit: Any = None
    structured: Any = None

    def __post_init__(self):
        self.mentor = MentorConfig.load(self.mentor)


def context_of(runtime: Runtime[MentorContext] | None) -> MentorContext:
    """The run's MentorContext; the defaults for a run given none."""
    context = getattr(runtime, "context", None)
    return MentorContext(**context) if isinstance(context, dict) else context or MentorContext()
