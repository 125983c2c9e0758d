"""The `llm` mentor on the real SmolLM2-135M-Instruct, per node, against the `rules` backend in the same run.

    .venv/bin/python benchmarks/llm_mentor.py                                  # all backends, 1 and 16 groups
    .venv/bin/python benchmarks/llm_mentor.py --groups 2 --backends rules,hf,hf-free --max-tokens 32

Failed groups: lab arithmetic additions (2-3 wrong attempts) and CHAMP problems (one attempt with a wrong boxed
answer), alternating. Backends: `rules`; `hf` (in process, xgrammar-constrained, batched) and `hf-free` (the same,
llm.structured_output false); `serve` and `serve-free` (`transformers serve` on loopback, started here, through
ChatOpenAI; it ignores response_format, so `serve` shows the detection); `vllm` (vLLM's CPU build on loopback, started
here, structured output on and free whitespace off; run it from .venv-vllm, `make setup-vllm`). Per backend and node: parse rate (answers
the model gave that passed the schema and the node's checks), fallback rate, latency p50/p95; per run: hints
withheld, leaks blocked, wall time for one group and for all groups, and their ratio (the target: 16 groups in at
most 2x the wall of one; the single group is the first, an arithmetic one). Prints one line per figure;
docs/benchmarks.md records one run.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import torch

from mentor.config import NODES
from mentor.data.champ import load_champ
from mentor.llm.hf import BatchedChat
from mentor.models import offline_copy
from mentor.runtime import MentorRuntime
from mentor.tasks.arithmetic import format_answer, format_prompt
from mentor.types import FailedGroup


def failed_groups(n: int) -> list[FailedGroup]:
    champ = load_champ()
    groups = []
    for i in range(n):
        if i % 2 == 0:
            a, b = 100 + (i * 37) % 900, 100 + (i * 91 + 13) % 900
            wrong = [a + b - 10, a + b - 100][: 2 + i % 2]
            groups.append(FailedGroup.from_dict({
                "problem_id": f"add-{i}", "task": "arithmetic", "prompt": format_prompt(a, b),
                "reference": {"answer": format_answer(a, b), "operands": [a, b]},
                "attempts": [{"completion": f" {w:04d}", "reward": 0.0} for w in wrong]}))
        else:
            row = champ[i % len(champ)]
            groups.append(FailedGroup.from_dict({
                "problem_id": f"champ-{i}", "task": "math", "prompt": row["prompt"],
                "reference": {"answer": row["answer"]},
                "attempts": [{"completion": "So the answer is \\boxed{0}", "reward": 0.0}]}))
    return groups


def serve(model: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", model, "--host",
                             "127.0.0.1", "--port", str(port), "--device", "cpu", "--continuous-batching"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env={**os.environ,
                                                                                    "OMP_NUM_THREADS": "1"})
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("transformers serve was not ready within 120 s")


def vllm(model: str, stack: ExitStack) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from vllm_server import vllm_server

    return stack.enter_context(vllm_server(model, "--structured-outputs-config.backend", "xgrammar",
                                           "--structured-outputs-config.disable_any_whitespace", "true",
                                           log_path="vllm-server.log"))


def run(backend: str, groups: list[FailedGroup], model: str, chat, base_url: str | None, max_tokens: int | None):
    llm = {"provider": "openai" if backend.startswith(("serve", "vllm")) else "hf", "model": model, "base_url": base_url,
           "request_timeout_s": 600, "parse_retries": 0, "max_tokens": max_tokens, "max_concurrent_requests": 16,
           "structured_output": not backend.endswith("-free")}
    config = {"nodes": {n: "rules" if backend == "rules" else "llm" for n in NODES}, "llm": llm, "timeout_s": 3600}
    runtime = MentorRuntime(config, chat_model=chat() if backend.startswith("hf") else None)
    t0 = time.perf_counter()
    results = runtime.run(groups)
    return results, time.perf_counter() - t0, runtime


def report(backend: str, n: int, results, wall: float, runtime) -> None:
    for node in NODES:
        records = [r for res in results for r in res.nodes if r["node"] == node]
        latency = sorted(r["latency_s"] for r in records)
        answered = sum(r["backend"] == "llm" for r in records)
        fell = sum(r["backend"] == "rules (llm fallback)" for r in records)
        p = lambda q: latency[min(len(latency) - 1, int(q * len(latency)))] if latency else float("nan")  # noqa
        asked = answered + fell  # 0 under rules
        rates = f"parse {answered}/{asked:<3} fallback {fell}/{asked:<3}" if asked else f"{'(rules)':26s}"
        print(f"{backend:11s} groups={n:2d} {node:18s} {rates} p50 {p(0.5):6.2f} s  p95 {p(0.95):6.2f} s")
    print(f"{backend:11s} groups={n:2d} wall {wall:6.1f} s  withheld {sum(r.withheld for r in results)}  leaks blocked "
          f"{sum(len(r.leak['leaked_drafts']) for r in results)}  failed {sum(r.error is not None for r in results)}"
          f"  structured-output fallbacks {runtime.structured.fallbacks}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=16)
    parser.add_argument("--backends", default="rules,hf,hf-free,serve,serve-free")
    parser.add_argument("--max-tokens", type=int, default=None, help="llm.max_tokens (default: each node's own)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    backends = args.backends.split(",")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch threads "
          f"{args.threads}; load average {os.getloadavg()[0]:.2f}")
    model = offline_copy("HuggingFaceTB/SmolLM2-135M-Instruct")
    chat = functools.cache(lambda: BatchedChat(model=model))  # loaded on first use: a vllm-only run needs none
    proc, base_url = serve(model) if any(b.startswith("serve") for b in backends) else (None, None)
    stack = ExitStack()
    try:
        vllm_url = vllm(model, stack) if "vllm" in backends else None
        for backend in backends:
            walls = {}
            for n in sorted({1, args.groups}):
                url = vllm_url if backend == "vllm" else base_url
                results, walls[n], runtime = run(backend, failed_groups(n), model, chat, url, args.max_tokens)
                report(backend, n, results, walls[n], runtime)
            print(f"{backend:11s} wall of {args.groups} groups / wall of the first group alone: "
                  f"{walls[args.groups] / walls[1]:.2f}")
    finally:
        stack.close()
        if proc:
            proc.kill()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
