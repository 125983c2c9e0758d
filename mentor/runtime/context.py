"""What a run of a mentor graph is given: its settings, LangGraph's run context (`context_schema`,
`Runtime.context`), plain values a `langgraph dev` run may send as JSON; and the live resources a MentorRuntime lends
its runs (chat model, request limit), which are no part of that contract."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from typing import Any, Iterator

from langgraph.runtime import Runtime

from mentor.config import DEFAULT_PROMPTS_DIR, NODES, LLMConfig, MentorConfig, check_fields, llm_config, node_backends
from mentor.llm.client import StructuredOutput


def _described(name: str) -> dict[str, str]:
    """The field's description: MentorConfig's help for the key of the same name, the one place it is written."""
    return {"description": MentorConfig.__dataclass_fields__[name].metadata["help"]}


@dataclass(kw_only=True)
class MentorContext:
    """The settings the graph's nodes read, each a MentorConfig key of the same name.

    MentorRuntime passes its config's (`MentorContext.of`) to every run. A run given none (`langgraph dev`, Studio,
    a plain `invoke`) gets the defaults, and a mapping (`"context": {"nodes": {...}, "max_leak_retries": 1}` in a
    dev-server run) is read as one: LangGraph builds the dataclass from it.
    """

    nodes: dict[str, str] = field(default_factory=lambda: {n: "rules" for n in NODES}, metadata=_described("nodes"))
    llm: LLMConfig = field(default_factory=LLMConfig, metadata=_described("llm"))
    prompts_dir: str = field(default=DEFAULT_PROMPTS_DIR, metadata=_described("prompts_dir"))
    max_leak_retries: int = field(default=MentorConfig.__dataclass_fields__["max_leak_retries"].default,  # one default
                                  metadata=_described("max_leak_retries"))

    def __post_init__(self):
        self.llm = llm_config(self.llm)  # a mapping, from a JSON context
        check_fields(self, "")
        self.nodes = node_backends(self.nodes)

    @classmethod
    def of(cls, config: MentorConfig) -> MentorContext:
        """The settings of `config`."""
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})


def context_of(runtime: Runtime[MentorContext] | None) -> MentorContext:
    """The run's MentorContext; the defaults for a run given none."""
    context = getattr(runtime, "context", None)
    return MentorContext(**context) if isinstance(context, dict) else context or MentorContext()


@dataclass
class MentorResources:
    """The live objects a MentorRuntime lends the nodes of its runs; a run outside one gets these defaults.

    Args:
        chat_model: the LangChain chat model of `llm` nodes; built from the settings' `llm` when not given.
        llm_limit: bounds the `llm` requests in flight over all groups; None: unbounded.
        structured: whether requests still ask for constrained decoding, shared by a runtime's runs (see
            `StructuredOutput`); default: per request, from the settings' `llm.structured_output`.
    """

    chat_model: Any = None
    llm_limit: asyncio.Semaphore | None = None
    structured: StructuredOutput | None = None


# Set for the length of one group's run: the nodes run in tasks that copy the caller's context, so each group's
# graph sees its own runtime's resources, and none leaks into the LangGraph context, which stays plain data.
_LENT: ContextVar[MentorResources | None] = ContextVar("mentor_resources", default=None)


@contextmanager
def lending(resources: MentorResources) -> Iterator[None]:
    """Lends `resources` to the graph runs started inside the block."""
    token = _LENT.set(resources)
    try:
        yield
    finally:
        _LENT.reset(token)


def lent_resources() -> MentorResources:
    """The resources lent to this run; the defaults outside a MentorRuntime."""
    return _LENT.get() or MentorResources()
