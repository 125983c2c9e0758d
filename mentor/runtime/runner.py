"""Runs many failed groups through the mentor graph at once, each bounded in time and isolated."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from langgraph.pregel import Pregel

from mentor.config import DEFAULT_PROMPTS_DIR, MentorConfig
from mentor.llm.client import StructuredOutput
from mentor.llm.prompts import check_prompts, warn_unread_prompts
from mentor.runtime.context import MentorContext, MentorResources, lending
from mentor.runtime.event_loop import mentor_loop, mentor_threads
from mentor.runtime.graph_loading import load_graph, resolve_graph_path
from mentor.runtime.intervention import checked_text, to_intervention, warn_unknown_classes
from mentor.runtime.node_errors import traceback_text
from mentor.runtime.versions import versions
from mentor.trace_format import encoded, node_view
from mentor.types import FailedGroup, Intervention


def recursion_limit(graph: Pregel, max_leak_retries: int) -> int:
    """LangGraph's step budget for one run, from the graph's own size rather than the default graph's shape: every
    node once, and once more per leak retry (a retry may loop back through any node of an edited graph), plus 4."""
    nodes = sum(not name.startswith("__") for name in graph.nodes)  # `__start__` is LangGraph's own
    return nodes * (1 + max_leak_retries) + 4


class MentorRuntime:
    """Runs the mentor graph over failed groups: concurrently, each group done within `timeout_s` (see `arun`).

    Args:
        config: the MentorConfig (graph, backends, `max_concurrent_groups`, `timeout_s`).
        chat_model: the chat model of `llm` nodes; default: built from `config.llm`.
    """

    def __init__(self, config: MentorConfig | dict | str | None = None, chat_model: Any = None):
        self.config = MentorConfig.load(config)
        self.graph = load_graph(self.config.graph, self.config)
        backends = {n: self.config.nodes.get(n, "rules") for n in self.graph.nodes if n in self.config.nodes}
        prompts = check_prompts(self.config.prompts_dir, backends)  # a bad prompt fails here, not in a group
        warn_unread_prompts(self.config.prompts_dir, DEFAULT_PROMPTS_DIR, backends)
        # What this runtime runs (`describe(runtime.versions)` prints it; the trace store keeps it once per run).
        self.versions = versions(self.config, self.graph, resolve_graph_path(self.config.graph), prompts)
        self.context = MentorContext.of(self.config)  # the settings every run gets; plain data
        self.chat_model = chat_model
        self.warned_classes: set[str] = set()  # tasks whose made-up error classes were warned about
        self.structured = StructuredOutput(self.config.llm.structured_output)  # a server's verdict holds for the run
        mentor_threads().reserve(2 * self.config.max_concurrent_groups)  # see MentorThreads.reserve

    def run(self, groups: list[FailedGroup], on_done: Callable[[FailedGroup, Intervention], None] | None = None,
            clock: str = "run") -> list[Intervention]:
        """One Intervention per group, in input order. Never raises for a group's fault. `on_done(group,
        intervention)` is called as each group finishes, on the mentor loop's thread. See `arun` for `clock`."""
        future = asyncio.run_coroutine_threadsafe(self.arun(groups, on_done, clock), mentor_loop())
        try:
            # In slices: the kernel may hand Ctrl-C's SIGINT to another thread, and the main thread, blocked in an
            # untimed wait, would never run Python's handler; a slice's end lets it raise KeyboardInterrupt.
            while not concurrent.futures.wait([future], timeout=0.5).done:
                pass
            return future.result()
        except BaseException:  # Ctrl-C in the caller's thread: the loop stops this run's groups too
            future.cancel()
            raise

    async def arun(self, groups: list[FailedGroup],
                   on_done: Callable[[FailedGroup, Intervention], None] | None = None, clock: str = "run") -> list[Intervention]:
        """`clock` says when each group's `timeout_s` starts: "run" (training) with the run, waiting for a slot
        included, so that a slow server holds the whole run, and so the training step, for at most `timeout_s`;
        "group" (`mentor diagnose`, `mentor eval`) when the group gets its slot, so that no group of a long offline
        run is cut off for having waited in the queue."""
        if clock not in ("run", "group"):
            raise ValueError(f"clock must be 'run' or 'group', got {clock!r}")
        gate = asyncio.Semaphore(self.config.max_concurrent_groups)
        llm_limit = asyncio.Semaphore(self.config.llm.max_concurrent_requests)
        timeout = self.config.timeout_s

        async def in_a_slot(group: FailedGroup, progress: _Progress) -> Intervention:
            async with gate:
                if clock == "group":
                    return await asyncio.wait_for(self._invoke(group, llm_limit, progress), timeout)
                return await self._invoke(group, llm_limit, progress)

        async def one(group: FailedGroup) -> Intervention:
            progress = _Progress()
            try:
                result = await (in_a_slot(group, progress) if clock == "group" else
                                asyncio.wait_for(in_a_slot(group, progress), timeout))
            except asyncio.TimeoutError:
                result = self._cut(group, progress, f"timeout: no hint within {timeout} s of the "
                                                     f"{'group' if clock == 'group' else 'run'}'s start")
            except Exception as e:  # one group's fault never touches another group
                result = self._cut(group, progress, f"{type(e).__name__}: {e}")
                result.error_traceback = traceback_text(e)  # told to the user, not only counted
            if on_done:
                on_done(group, result)
            return result

        return list(await asyncio.gather(*(one(g) for g in groups)))

    def _cut(self, group: FailedGroup, progress: _Progress, reason: str) -> Intervention:
        """The Intervention of a run cut off by `reason` (the group timeout, an exception): no hint, but the node
        records, fallbacks and diagnosis gathered so far, and a record per node still running."""
        now, running = time.perf_counter(), []
        for task_id, (t0, node_input) in progress.started.items():
            node = progress.names.get(task_id, "")
            running.append({"node": node, "latency_s": now - t0, "backend": self.config.nodes.get(node, ""),
                            "input": node_view(node_input), "output": {}, "error": f"cut off: {reason}"})
        result = to_intervention(group, progress.state, progress.nodes + running)
        result.hint = None
        if running:
            reason += "; cut off in " + ", ".join(f"{r['node']} ({r['backend']}, {r['latency_s']:.1f} s)"
                                                  for r in running)
        elif not progress.nodes and not progress.state:
            reason += f"; it never got one of the max_concurrent_groups = {self.config.max_concurrent_groups} slots"
        result.error = reason
        return checked_text(result)

    async def _invoke(self, group: FailedGroup, llm_limit: asyncio.Semaphore, progress: _Progress) -> Intervention:
        resources = MentorResources(self.chat_model, llm_limit, self.structured)
        with lending(resources):
            return await self._stream(group, progress)

    async def _stream(self, group: FailedGroup, progress: _Progress) -> Intervention:
        # The bound the leakage node applies (the run's context) sizes the step budget: one value, one route.
        config = {"recursion_limit": recursion_limit(self.graph, self.context.max_leak_retries)}
        nodes, started = progress.nodes, progress.started  # kept by the caller if the run is cut off
        outputs: list[dict[str, Any]] = []  # each node's whole output, to tell what a later input repeats
        # Node records come from LangGraph's task stream: each node's input, output and wall time, in the compact
        # form of mentor/trace_format.py.
        async for mode, event in self.graph.astream({"group": group.to_dict()}, config, context=self.context,
                                                    stream_mode=["tasks", "values"]):
            if mode == "values":
                progress.state = event
            elif "input" in event:
                started[event["id"]] = (time.perf_counter(), event["input"])
                progress.names[event["id"]] = event["name"]
            else:
                t0, node_input = started.pop(event["id"], (time.perf_counter(), None))
                output = dict(event.get("result") or {})
                sent = (output.pop("prompts", None) or {}).get(event["name"])  # an llm node's prompt as sent
                replies = (output.pop("replies", None) or {}).get(event["name"])  # and the model's raw replies
                nodes.append({"node": event["name"], "latency_s": time.perf_counter() - t0,
                              "backend": output.get("backend", {}).get(event["name"], ""),
                              **encoded(node_view(node_input), outputs, output),
                              "error": event.get("error") and str(event["error"]),
                              **({"prompt": sent} if isinstance(sent, str) else {}),
                              **({"replies": replies} if isinstance(replies, list) else {})})
                outputs.append(output)
        result = to_intervention(group, progress.state, nodes)
        # A graph that ends without a hint has withheld it, whatever its last node said: the static-hints graph ends
        # at the gate, with no composer to send a leaked draft back to.
        result.withheld = result.withheld or not result.hint
        warn_unknown_classes(result, self.warned_classes)
        return checked_text(result)


@dataclass
class _Progress:
    """What one group's run has gathered so far: kept when the run is cut off."""

    nodes: list[dict[str, Any]] = field(default_factory=list)  # records of the nodes done
    state: dict[str, Any] = field(default_factory=dict)  # the graph state after the last step done
    started: dict[str, tuple[float, Any]] = field(default_factory=dict)  # task id -> (start, input), running
    names: dict[str, str] = field(default_factory=dict)  # task id -> node name
