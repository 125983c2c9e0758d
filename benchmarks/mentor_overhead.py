"""What the mentor framework costs per failed group, with the `rules` backend and through the `llm` path.

    .venv/bin/python benchmarks/mentor_overhead.py                 # both parts, defaults below
    .venv/bin/python benchmarks/mentor_overhead.py --part rules --groups 500
    .venv/bin/python benchmarks/mentor_overhead.py --part llm --llm-groups 64 --delay-s 0.05 --llm-concurrency 64

(a) rules: MentorRuntime.run over N arithmetic failed groups (4 attempts each; mean wall and CPU time per group),
    against a trivial 4-node LangGraph graph run the same way (the LangGraph floor); then one group at a time.
(b) llm: 64 groups with all four nodes on `llm` (max_concurrent_groups and llm.max_concurrent_requests 64), against the
    loopback OpenAI-compatible server of tests/openai_server.py answering each call after 50 ms. The floor is four
    sequential calls, 0.2 s. Against it: the bare ChatOpenAI client (64 concurrent ainvoke, four rounds, no graph)
    and bare HTTP (the same requests through the SDK's HTTP library alone), which split the gap into the HTTP
    stack, the SDK and LangChain, and the mentor; and the mentor run at llm.max_concurrent_requests 16 (the default).
    The server runs in its own process by default, as a real one does (`--server thread` runs it in this process,
    where its threads share the GIL with the client).

Compared runs are interleaved, repeat by repeat, and each ratio is the median of per-repeat ratios, so both
sides see the same machine load. CPU is this process's CPU time (time.process_time), less disturbed by other
processes than wall time. Prints one line per figure; docs/benchmarks.md records them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from machine import cpu_name, load_average  # noqa: E402
from mentor.config import NODES, MentorConfig  # noqa: E402
from mentor.runtime import MentorRuntime  # noqa: E402
from mentor.types import FailedGroup  # noqa: E402


def arithmetic_groups(n: int, attempts: int = 4) -> list[FailedGroup]:
    """`n` distinct failed addition groups (operands 100..999), each with `attempts` wrong answers."""
    groups = []
    for i in range(n):
        a, b = 100 + (i * 37) % 900, 100 + (i * 91 + 13) % 900
        s = a + b
        wrong = [s - 10, s - 100, s + 1, s + 110][:attempts]  # a dropped carry, a wrong hundreds digit, ...
        groups.append(FailedGroup.from_dict({
            "problem_id": f"add-{i:04d}", "task": "arithmetic", "prompt": f"Q: {a:03d}+{b:03d}=? A:",
            "reference": {"answer": f"{s:04d}", "operands": [a, b]},
            "attempts": [{"completion": f" {w:04d}", "reward": 0.0} for w in wrong]}))
    return groups


def machine() -> str:
    return f"{cpu_name()}, {os.cpu_count()} cores, load {load_average()[0]:.1f}, Python {platform.python_version()}"


# --- (a) rules ------------------------------------------------------------------------------------------
def timed(fn) -> tuple[float, float]:
    """(wall s, CPU s of this process) of fn()."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def bench_rules(n: int, repeats: int) -> None:
    runtime = MentorRuntime(MentorConfig(max_concurrent_groups=16))
    groups = arithmetic_groups(n)
    trivial = trivial_four_node_graph()

    def mentor_batch():
        out = runtime.run(groups)
        assert all(o.error is None and o.hint for o in out), [o.error for o in out if o.error][:3]

    async def trivial_gather():  # the same shape of work: n invocations, at most 16 at once
        gate = asyncio.Semaphore(16)

        async def one(i):
            async with gate:
                await trivial.ainvoke({"x": i})

        await asyncio.gather(*(one(i) for i in range(n)))

    runtime.run(groups[:20])  # warm-up: imports, graph compilation, caches
    asyncio.run(trivial_gather())
    mentor, base = [], []
    for _ in range(repeats):  # interleaved, so both sides of each ratio see the same machine load
        mentor.append(timed(mentor_batch))
        base.append(timed(lambda: asyncio.run(trivial_gather())))
    ms = lambda pairs, i: statistics.median(p[i] for p in pairs) / n * 1000  # noqa: E731
    ratio = lambda i: statistics.median(m[i] / b[i] for m, b in zip(mentor, base))  # noqa: E731
    print(f"rules  runtime.run({n} groups, max_concurrent_groups 16): {ms(mentor, 0):.2f} ms per group wall, "
          f"{ms(mentor, 1):.2f} ms CPU (median of {repeats}: {', '.join(f'{m[0] / n * 1000:.2f}' for m in mentor)} ms; "
          f"target < 5 ms)")
    print(f"base   a trivial 4-node async StateGraph (no-op nodes), {n} ainvoke, 16 at once: {ms(base, 0):.2f} ms per "
          f"invoke wall, {ms(base, 1):.2f} ms CPU; mentor / trivial (median of per-run ratios): wall {ratio(0):.2f}x, "
          f"CPU {ratio(1):.2f}x")

    single = min(n, 200)
    config, context = {"recursion_limit": 12}, runtime.context

    async def one_at_a_time(kind: str) -> list[float]:
        times = []
        for i, g in enumerate(groups[:single]):
            t0 = time.perf_counter()
            if kind == "runtime":
                await runtime.arun([g])
            elif kind == "graph":
                await runtime.graph.ainvoke({"group": g.to_dict()}, config, context=context)
            else:
                await trivial.ainvoke({"x": i})
            times.append(time.perf_counter() - t0)
        return times

    for kind, label in (("runtime", "runtime.arun([g])"), ("graph", "the mentor graph's ainvoke (no runtime)"),
                        ("trivial", "the trivial graph's ainvoke")):
        times = asyncio.run(one_at_a_time(kind))
        print(f"single one group at a time, {label} x {single}: mean {statistics.mean(times) * 1000:.2f} ms, "
              f"median {statistics.median(times) * 1000:.2f} ms")


def trivial_four_node_graph():
    """The LangGraph floor: four async nodes that do nothing, wired in a line."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        x: int

    async def node(state: State) -> dict:
        return {"x": state["x"] + 1}

    builder = StateGraph(State)
    names = ["a", "b", "c", "d"]
    for name in names:
        builder.add_node(name, node)
    for src, dst in zip([START, *names], [*names, END]):
        builder.add_edge(src, dst)
    return builder.compile()


# --- (b) llm --------------------------------------------------------------------------------------------
@contextmanager
def loopback_server(delay_s: float, mode: str):
    if mode == "thread":
        from openai_server import OpenAIServer

        with OpenAIServer(delay_s=delay_s) as server:
            yield server.base_url
        return
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--delay-s", str(delay_s)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def llm_config(base_url: str, llm_concurrency: int, groups: int) -> MentorConfig:
    return MentorConfig(nodes={n: "llm" for n in NODES}, max_concurrent_groups=groups, timeout_s=60,
                        llm={"provider": "openai", "model": "test", "base_url": base_url, "request_timeout_s": 10,
                             "max_retries": 0, "parse_retries": 0, "max_concurrent_requests": llm_concurrency})


def run_llm(runtime: MentorRuntime, groups: list[FailedGroup]) -> tuple[float, float]:
    """(wall s, CPU s) of one runtime.run over the groups, checked: every node answered by the llm."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = runtime.run(groups)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    bad = [o.fallbacks or o.error for o in out if o.fallbacks or o.error]
    assert not bad, f"{len(bad)} groups fell back or failed, e.g. {bad[0]}"
    assert all(o.hint and set(o.backend.values()) == {"llm"} for o in out)
    return wall, cpu


def bare_client(config: MentorConfig, n: int, rounds: int) -> tuple[float, float]:
    """`n` concurrent ChatOpenAI calls, `rounds` times in sequence: the HTTP client stack alone."""
    from langchain_core.messages import HumanMessage

    from mentor.llm.client import chat_model_from_config, close_chat_models

    async def once() -> tuple[float, float]:
        model = chat_model_from_config(config.llm)
        limit = asyncio.Semaphore(config.llm.max_concurrent_requests)

        async def call():
            async with limit:
                return await model.ainvoke([HumanMessage("You are the hint composer. Answer in JSON.")])

        await asyncio.gather(*(call() for _ in range(4)))  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(rounds):
            await asyncio.gather(*(call() for _ in range(n)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        await close_chat_models()
        return wall, cpu

    return asyncio.run(once())


def bare_http(base_url: str, n: int, rounds: int) -> tuple[float, float]:
    """The same requests as plain HTTP POSTs through the openai SDK's HTTP library, with no SDK or LangChain."""
    try:
        import httpx2 as httpx  # what openai>=3 uses
    except ImportError:
        import httpx
    import json

    body = json.dumps({"model": "test", "messages": [{"role": "user", "content": "You are the hint composer."}]})

    async def once() -> tuple[float, float]:
        async with httpx.AsyncClient(base_url=base_url, timeout=10,
                                     limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100)) as client:
            async def call():
                response = await client.post("/chat/completions", content=body,
                                             headers={"Content-Type": "application/json"})
                return response.json()["choices"][0]["message"]["content"]

            await asyncio.gather(*(call() for _ in range(4)))
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(rounds):
                await asyncio.gather(*(call() for _ in range(n)))
            return time.perf_counter() - t0, time.process_time() - c0

    return asyncio.run(once())


def bench_llm(n: int, delay_s: float, llm_concurrency: int, repeats: int, server: str) -> None:
    floor, calls = 4 * delay_s, 4 * n
    groups = arithmetic_groups(n)
    with loopback_server(delay_s, server) as base_url:
        mentor = MentorRuntime(llm_config(base_url, llm_concurrency, n))
        default = MentorRuntime(llm_config(base_url, 16, n))
        run_llm(mentor, groups[:4])  # warm-up: langchain_openai import, client construction, first connections
        bare_client(mentor.config, 4, 1)
        runs: dict[str, list[tuple[float, float]]] = {"mentor": [], "client": [], "http": [], "default": []}
        for _ in range(repeats):  # interleaved, so the ratios compare runs under the same machine load
            runs["mentor"].append(run_llm(mentor, groups))
            runs["client"].append(bare_client(mentor.config, n, 4))
            runs["http"].append(bare_http(base_url, n, 4))
            if llm_concurrency != 16:
                runs["default"].append(run_llm(default, groups))

    def med(kind: str, i: int) -> float:
        return statistics.median(r[i] for r in runs[kind])

    def ratio(a: str, b: str, i: int) -> float:
        return statistics.median(x[i] / y[i] for x, y in zip(runs[a], runs[b]))

    print(f"llm    {n} groups x 4 llm nodes, {delay_s * 1000:.0f} ms server ({server}), max_concurrent_groups={n}, "
          f"llm.max_concurrent_requests={llm_concurrency}: median {med('mentor', 0):.3f} s, best "
          f"{min(r[0] for r in runs['mentor']):.3f} s; floor {floor:.2f} s; ratio {med('mentor', 0) / floor:.2f}x "
          f"(target <= 2.5x); CPU {med('mentor', 1):.2f} s = {med('mentor', 1) / calls * 1000:.1f} ms per call")
    print(f"llm    bare ChatOpenAI: {n} concurrent ainvoke x 4 rounds, no graph: median {med('client', 0):.3f} s "
          f"({med('client', 0) / floor:.2f}x the floor); CPU {med('client', 1) / calls * 1000:.1f} ms per call; "
          f"mentor / bare ChatOpenAI: wall {ratio('mentor', 'client', 0):.2f}x, CPU {ratio('mentor', 'client', 1):.2f}x")
    print(f"llm    bare HTTP: {n} concurrent POSTs x 4 rounds through the SDK's HTTP library alone: median "
          f"{med('http', 0):.3f} s ({med('http', 0) / floor:.2f}x the floor); CPU {med('http', 1) / calls * 1000:.1f} ms "
          f"per call; bare ChatOpenAI / bare HTTP: wall {ratio('client', 'http', 0):.2f}x, CPU "
          f"{ratio('client', 'http', 1):.2f}x")
    if runs["default"]:
        print(f"llm    same mentor run with llm.max_concurrent_requests=16 (the default): median {med('default', 0):.3f} s "
              f"({med('default', 0) / floor:.2f}x the floor; 16 in flight means {calls / 16:.0f} rounds of "
              f"{delay_s * 1000:.0f} ms = {calls / 16 * delay_s:.2f} s at least); default / {llm_concurrency}: "
              f"{ratio('default', 'mentor', 0):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["rules", "llm", "all"], default="all")
    parser.add_argument("--groups", type=int, default=500, help="groups for the rules part")
    parser.add_argument("--llm-groups", type=int, default=64)
    parser.add_argument("--delay-s", type=float, default=0.05, help="the server's answer delay")
    parser.add_argument("--llm-concurrency", type=int, default=64, help="llm.max_concurrent_requests for the llm part")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--server", choices=["process", "thread"], default="process")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    if args.part in ("rules", "all"):
        bench_rules(args.groups, args.repeats)
    if args.part in ("llm", "all"):
        bench_llm(args.llm_groups, args.delay_s, args.llm_concurrency, args.repeats, args.server)


if __name__ == "__main__":
    main()
