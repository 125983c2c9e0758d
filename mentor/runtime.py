"""Runs many failed groups through the mentor graph at once, each bounded in time and isolated."""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from mentor.config import MentorConfig
from mentor.llm import close_chat_models
from mentor.types import Diagnosis, FailedGroup, InputError, Intervention


def load_graph(spec: str, config: MentorConfig | None = None):
    """The graph named by `path.py:variable` (the langgraph.json convention).

    The variable is a compiled graph, or a function taking the MentorConfig (`build_graph`). A file inside
    a package (folders with `__init__.py`) is imported as a module of that package, so its relative and
    absolute imports work as they do for `langgraph dev`.
    """
    path_text, _, name = spec.partition(":")
    path = Path(path_text)
    if not path.is_absolute() and not path.exists():  # relative to the repository, as in langgraph.json
        path = Path(__file__).resolve().parent.parent / path_text
    if not path.exists() or not name:
        raise InputError(f"graph '{spec}': expected 'path/to/file.py:variable' with an existing file")
    root, parts = path.resolve().parent, [path.stem]
    while (root / "__init__.py").exists():
        parts.insert(0, root.name)
        root = root.parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    module = importlib.import_module(".".join(parts))
    if not hasattr(module, name):
        raise InputError(f"graph '{spec}': '{path}' has no variable '{name}'")
    obj = getattr(module, name)
    return obj if hasattr(obj, "astream") else obj(config)


class MentorRuntime:
    """Runs the mentor graph over failed groups: concurrently, with a timeout per group.

    Args:
        config: the MentorConfig (graph, backends, `max_concurrency`, `timeout_s`).
        chat_model: the chat model of `llm` nodes; default: built from `config.llm`, once per event loop. Each
            `run` is a new event loop, and an async HTTP client's pooled connections belong to the loop that
            opened them: a ChatOpenAI given here fails its first calls in every `run` after the first, so prefer
            `config.llm`, or call `arun` from one long-lived loop.
    """

    def __init__(self, config: MentorConfig | dict | str | None = None, chat_model: Any = None):
        self.config = MentorConfig.load(config)
        self.graph = load_graph(self.config.graph, self.config)
        self.chat_model = chat_model

    def run(self, groups: list[FailedGroup], on_done: Callable[[Intervention], None] | None = None
            ) -> list[Intervention]:
        """One Intervention per group, in input order. Never raises for a group's fault."""
        coroutine = self._run_and_close(groups, on_done)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coroutine)
        result: list[Intervention] = []  # called from inside an event loop (a notebook): use a thread
        thread = threading.Thread(target=lambda: result.extend(asyncio.run(coroutine)))
        thread.start()
        thread.join()
        return result

    async def _run_and_close(self, groups: list[FailedGroup], on_done) -> list[Intervention]:
        try:
            return await self.arun(groups, on_done)
        finally:  # this loop ends here: close the HTTP clients whose connections belong to it
            await close_chat_models()

    async def arun(self, groups: list[FailedGroup], on_done: Callable[[Intervention], None] | None = None
                   ) -> list[Intervention]:
        gate = asyncio.Semaphore(self.config.max_concurrency)
        llm_limit = asyncio.Semaphore(self.config.llm.max_concurrency)

        async def one(group: FailedGroup) -> Intervention:
            async with gate:
                try:
                    result = await asyncio.wait_for(self._invoke(group, llm_limit), self.config.timeout_s)
                except asyncio.TimeoutError:
                    result = Intervention(group.problem_id, group.task,
                                          error=f"timeout: the graph took over {self.config.timeout_s} s")
                except Exception as e:  # one group's fault never touches another group
                    result = Intervention(group.problem_id, group.task, error=f"{type(e).__name__}: {e}")
            if on_done:
                on_done(result)
            return result

        return list(await asyncio.gather(*(one(g) for g in groups)))

    async def _invoke(self, group: FailedGroup, llm_limit: asyncio.Semaphore) -> Intervention:
        config = {"configurable": {"mentor": self.config, "chat_model": self.chat_model, "llm_limit": llm_limit},
                  "recursion_limit": 8 + 2 * self.config.max_leak_retries}
        nodes: list[dict[str, Any]] = []
        started: dict[str, tuple[float, Any]] = {}
        state: dict[str, Any] = {}
        # Node records come from LangGraph's task stream: each node's input, output and wall time.
        async for mode, event in self.graph.astream({"group": group.to_dict()}, config,
                                                    stream_mode=["tasks", "values"]):
            if mode == "values":
                state = event
            elif "input" in event:
                started[event["id"]] = (time.perf_counter(), event["input"])
            else:
                t0, node_input = started.pop(event["id"], (time.perf_counter(), None))
                output = dict(event.get("result") or {})
                nodes.append({"node": event["name"], "latency_s": time.perf_counter() - t0,
                              "backend": output.get("backend", {}).get(event["name"], ""),
                              "input": _node_view(node_input), "output": output,
                              "error": event.get("error") and str(event["error"])})
        return to_intervention(group, state, nodes)


def _node_view(node_input: Any) -> dict[str, Any]:
    """A node's input, less the group (the trace keeps it once) and the bookkeeping channels."""
    return {k: v for k, v in (node_input or {}).items() if k not in ("group", "backend", "fallbacks")}


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
