"""What the mentor framework costs per failed group, with the `rules` backend and through the `llm` path.

    .venv/bin/python benchmarks/mentor_overhead.py                 # both parts, defaults below
    .venv/bin/python benchmarks/mentor_overhead.py --part rules --groups 500
    .venv/bin/python benchmarks/mentor_overhead.py --part llm --llm-groups 64 --delay-s 0.05 --llm-concurrency 64

(a) rules: MentorRuntime.run over N arithmetic failed groups (mean wall time per group, all groups in one run),
    and one group at a time (`runtime.arun([group])` in one event loop: the latency of a single invocation).
(b) llm: 64 groups with all four nodes on `llm`, against the loopback OpenAI-compatible server of
    tests/openai_server.py answering each call after 50 ms. The floor is four sequential calls, 0.2 s. Besides the
    mentor's wall time it measures the bare client (64 concurrent ChatOpenAI.ainvoke, four rounds, no graph), so the
    gap splits into what the HTTP client stack costs and what the mentor adds; and the same run at llm
    max_concurrency 16 (the default), which caps requests in flight. The server runs in its own process by default,
    as a real one does (`--server thread` runs it in this process, where its threads share the GIL with the client).

Prints one line per figure; docs/benchmarks.md records them.
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

from mentor.config import NODES, MentorConfig  # noqa: E402
from mentor.runtime import MentorRuntime  # noqa: E402
from mentor.types import FailedGroup  # noqa: E402


def arithmetic_groups(n: int, attempts: int = 4) -> list[FailedGroup]:
    """n distinct failed addition groups (operands 100..999), each with `attempts` wrong answers."""
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
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor()) if os.path.exists("/proc/cpuinfo") else platform.processor()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} cores, load {load:.1f}, Python {platform.python_version()}"


# --- (a) rules ------------------------------------------------------------------------------------------
def bench_rules(n: int, repeats: int) -> None:
    runtime = MentorRuntime(MentorConfig(max_concurrency=16))
    groups = arithmetic_groups(n)
    runtime.run(groups[:20])  # warm-up: imports, graph compilation, caches
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = runtime.run(groups)
        walls.append(time.perf_counter() - t0)
        assert all(o.error is None and o.hint for o in out), [o.error for o in out if o.error][:3]
    per_group = [w / n * 1000 for w in walls]
    print(f"rules  runtime.run({n} groups): {statistics.median(per_group):.2f} ms per group "
          f"(median of {repeats}; runs {', '.join(f'{p:.2f}' for p in per_group)} ms; target < 5 ms)")

    single = min(n, 200)

    async def one_by_one() -> list[float]:
        times = []
        for g in groups[:single]:
            t0 = time.perf_counter()
            await runtime.arun([g])
            times.append(time.perf_counter() - t0)
        return times

    async def bare_graph() -> list[float]:
        config = {"configurable": {"mentor": runtime.config}, "recursion_limit": 12}
        times = []
        for g in groups[:single]:
            t0 = time.perf_counter()
            await runtime.graph.ainvoke({"group": g.to_dict()}, config)
            times.append(time.perf_counter() - t0)
        return times

    async def trivial_graph() -> tuple[list[float], float]:
        graph = trivial_four_node_graph()
        times = []
        for i in range(single):
            t0 = time.perf_counter()
            await graph.ainvoke({"x": i})
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await asyncio.gather(*(graph.ainvoke({"x": i}) for i in range(n)))
        return times, time.perf_counter() - t0

    trivial, trivial_batch = asyncio.run(trivial_graph())
    print(f"base   a trivial 4-node async StateGraph (no-op nodes): ainvoke one at a time x {single}: mean "
          f"{statistics.mean(trivial) * 1000:.2f} ms; {n} at once (gather): {trivial_batch / n * 1000:.2f} ms per "
          f"invoke; mentor runtime.run / trivial batch = {statistics.median(per_group) / (trivial_batch / n * 1000):.2f}x")
    times = asyncio.run(one_by_one())
    print(f"rules  one group at a time, runtime.arun([g]) x {single}: mean {statistics.mean(times) * 1000:.2f} ms, "
          f"median {statistics.median(times) * 1000:.2f} ms per group")
    times = asyncio.run(bare_graph())
    print(f"rules  one group at a time, graph.ainvoke (no runtime, no task stream) x {single}: "
          f"mean {statistics.mean(times) * 1000:.2f} ms, median {statistics.median(times) * 1000:.2f} ms per group")


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
    return MentorConfig(nodes={n: "llm" for n in NODES}, max_concurrency=groups, timeout_s=60,
                        llm={"provider": "openai", "model": "test", "base_url": base_url, "timeout_s": 10,
                             "max_retries": 0, "parse_retries": 0, "max_concurrency": llm_concurrency})


def run_llm(config: MentorConfig, groups: list[FailedGroup], repeats: int) -> list[float]:
    runtime = MentorRuntime(config)
    runtime.run(groups[:4])  # warm-up: langchain_openai import, client construction, first connections
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = runtime.run(groups)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        bad = [o.fallbacks or o.error for o in out if o.fallbacks or o.error]
        assert not bad, f"{len(bad)} groups fell back or failed, e.g. {bad[0]}"
        assert all(o.hint and set(o.backend.values()) == {"llm"} for o in out)
    return walls, cpus


def bare_client(config: MentorConfig, n: int, rounds: int, repeats: int) -> list[float]:
    """n concurrent ChatOpenAI calls, `rounds` times in sequence: the HTTP client stack alone."""
    from langchain_core.messages import HumanMessage

    from mentor.llm import chat_model_from_config, close_chat_models

    async def once() -> tuple[float, float]:
        model = chat_model_from_config(config.llm)
        limit = asyncio.Semaphore(config.llm.max_concurrency)

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

    runs = [asyncio.run(once()) for _ in range(repeats)]
    return [w for w, _ in runs], [c for _, c in runs]


def bare_http(base_url: str, n: int, rounds: int, repeats: int) -> tuple[list[float], list[float]]:
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

    runs = [asyncio.run(once()) for _ in range(repeats)]
    return [w for w, _ in runs], [c for _, c in runs]


def bench_llm(n: int, delay_s: float, llm_concurrency: int, repeats: int, server: str) -> None:
    floor = 4 * delay_s
    calls = 4 * n
    groups = arithmetic_groups(n)
    with loopback_server(delay_s, server) as base_url:
        config = llm_config(base_url, llm_concurrency, n)
        walls, cpus = run_llm(config, groups, repeats)
        med, cpu = statistics.median(walls), statistics.median(cpus)
        print(f"llm    {n} groups x 4 llm nodes, {delay_s * 1000:.0f} ms server ({server}), max_concurrency={n}, "
              f"llm.max_concurrency={llm_concurrency}: median {med:.3f} s, best {min(walls):.3f} s; floor "
              f"{floor:.2f} s; ratio median {med / floor:.2f}x, best {min(walls) / floor:.2f}x (target <= 2.5x); "
              f"client CPU {cpu:.2f} s = {cpu / calls * 1000:.1f} ms per call")
        bare, bare_cpus = bare_client(config, n, 4, repeats)
        bmed, bcpu = statistics.median(bare), statistics.median(bare_cpus)
        print(f"llm    bare client, {n} concurrent ChatOpenAI.ainvoke x 4 rounds, no graph: median {bmed:.3f} s, "
              f"best {min(bare):.3f} s; ratio median {bmed / floor:.2f}x; client CPU {bcpu:.2f} s = "
              f"{bcpu / calls * 1000:.1f} ms per call; mentor / bare client: wall {med / bmed:.2f}x, CPU "
              f"{cpu / bcpu:.2f}x")
        raw, raw_cpus = bare_http(base_url, n, 4, repeats)
        rmed, rcpu = statistics.median(raw), statistics.median(raw_cpus)
        print(f"llm    bare HTTP, {n} concurrent POSTs x 4 rounds (the SDK's HTTP library alone): median {rmed:.3f} s; "
              f"ratio median {rmed / floor:.2f}x; client CPU {rcpu:.2f} s = {rcpu / calls * 1000:.1f} ms per call")
        if llm_concurrency != 16:
            walls16, _ = run_llm(llm_config(base_url, 16, n), groups, repeats)
            print(f"llm    same, llm.max_concurrency=16 (the default): median {statistics.median(walls16):.3f} s; "
                  f"ratio {statistics.median(walls16) / floor:.2f}x (at most 16 in flight: {calls / 16:.0f} rounds "
                  f"of {delay_s * 1000:.0f} ms = {calls / 16 * delay_s:.2f} s at least)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["rules", "llm", "all"], default="all")
    parser.add_argument("--groups", type=int, default=500, help="groups for the rules part")
    parser.add_argument("--llm-groups", type=int, default=64)
    parser.add_argument("--delay-s", type=float, default=0.05, help="the server's answer delay")
    parser.add_argument("--llm-concurrency", type=int, default=64, help="llm.max_concurrency for the llm part")
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
