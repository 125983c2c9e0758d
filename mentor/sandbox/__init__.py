r"""A sandbox for model-written Python: isolated, bounded, and fast enough to run inside a GRPO step.

    from mentor.sandbox import execute
    r = execute("print(1 + 1)", timeout_s=5, memory_mb=512)
    r.status, r.stdout, r.tier        # ('ok', '2\n', 'bwrap+cgroup')

Programs run in pre-started sandboxed workers that fork once per program (see `_worker.py`); the
isolation tier is detected at start-up (`tiers.py`) and recorded with every result. docs/sandbox.md
says what each tier isolates and what it leaves open.
"""

from __future__ import annotations

import atexit
import threading

from mentor.sandbox.pool import STATUSES, ExecutionResult, SandboxPool
from mentor.sandbox.tiers import TIERS, SandboxUnavailable, TierInfo, detect_tier

_pools: dict[str | None, SandboxPool] = {}  # the process-wide pools, one per prelude
_pools_lock = threading.Lock()


def get_pool(prelude: str | None = None) -> SandboxPool:
    """The process-wide pool for `prelude` (see `SandboxPool`; default None: a plain pool), started on first use
    (size: `MENTOR_SANDBOX_WORKERS`)."""
    with _pools_lock:
        pool = _pools.get(prelude)
        if pool is None or pool._closed:
            pool = _pools[prelude] = SandboxPool(prelude=prelude)
        return pool


def shutdown() -> None:
    """Stops the process-wide pools' workers (they are restarted on the next call)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


atexit.register(shutdown)


def execute(program: str, timeout_s: float = 5, memory_mb: int = 512, *,
            max_output: int = 64 << 10) -> ExecutionResult:
    """Runs the Python source `program` in the sandbox, like `python -c program`.

    Args:
        program: Python source. It gets an empty working directory, no stdin, a minimal environment,
            no network, and the interpreter's standard library only.
        timeout_s: wall-clock limit; the program and everything it spawned is killed at it.
        memory_mb: address-space limit per process (and, with cgroups, memory of the whole run).
        max_output: bytes kept of stdout and of stderr each (the head and the tail).

    Returns:
        ExecutionResult with status `ok`, `error`, `timeout` or `killed`, and the tier.
    """
    return get_pool().execute(program, timeout_s, memory_mb, max_output)


def execute_many(programs: list[str], timeout_s: float = 5, memory_mb: int = 512, *,
                 max_output: int = 64 << 10) -> list[ExecutionResult]:
    """Runs many programs concurrently through the plain process-wide pool; results in order."""
    return get_pool().map(programs, timeout_s, memory_mb, max_output)


__all__ = ["STATUSES", "TIERS", "ExecutionResult", "SandboxPool", "SandboxUnavailable", "TierInfo",
           "detect_tier", "execute", "execute_many", "get_pool", "shutdown"]
