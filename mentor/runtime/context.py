"""What a run of the mentor graph is configured with, read from LangGraph's `configurable`."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from mentor.config import MentorConfig


@dataclass
class Configuration:
    """The mentor config, plus the live objects the runtime hands to the nodes.

    Args:
        mentor: node backends, prompts folder, leak-retry bound (see `MentorConfig`).
        chat_model: the LangChain chat model of `llm` nodes; built from `mentor.llm` when not given.
        llm_limit: a semaphore bounding `llm` requests in flight over all groups.
        structured: whether requests still ask for constrained decoding, shared by a runtime's runs (see
            `mentor.runtime.llm.StructuredOutput`); default: per request, from `mentor.llm.structured_output`.
    """

    mentor: MentorConfig
    chat_model: Any = None
    llm_limit: asyncio.Semaphore | None = None
    structured: Any = None

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        configurable = (config or {}).get("configurable", {})
        mentor = configurable.get("mentor")
        if mentor is None:  # `langgraph dev` / Studio pass MentorConfig keys directly
            keys = {f.name for f in dataclasses.fields(MentorConfig)}
            mentor = MentorConfig.load({k: v for k, v in configurable.items() if k in keys})
        return cls(MentorConfig.load(mentor), configurable.get("chat_model"), configurable.get("llm_limit"),
                   configurable.get("structured"))
