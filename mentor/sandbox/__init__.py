"""A sandbox for model-written Python: isolated, bounded, and fast enough to run inside a GRPO step.

    from mentor.sandbox import execute
    r = execute("print(1 + 1)", timeout_s=5, memory_mb=512)
    r.status, r.stdout, r.tier        # ('ok', '2\\n', 'bwrap+cgroup')

Programs run in pre-started sandboxed workers that fork once per program (see `_worker.py`); the
isolation tier is detected at start-up (`tiers.py`) and recorded with every result. docs/sandbox.md
says what each tier isolates and what it leaves open.
"""

from __future__ import annotations

import atexit
import threading

from mentor.sandbox.pool import STATUSES, ExecutionResult, SandboxPool
from mentor.sandbox.tiers import TIERS, SandboxUnavailable, TierInfo, detect_tier

_default: SandboxPool | None = None
_default_lock = threading.Lock()


def get_pool() -> SandboxPool:
    """The process-wide default pool, started on first use (size: `MENTOR_SANDBOX_WORKERS`)."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = SandboxPool()
        return _default


def shutdown() -> None:
    """Stops the default pool's workers (they are restarted on the next call)."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
            _default = None


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
    """Runs many programs concurrently through the default pool; results in order."""
    return get_pool().map(programs, timeout_s, memory_mb, max_output)


__all__ = ["STATUSES", "TIERS", "ExecutionResult", "SandboxPool", "SandboxUnavailable", "TierInfo",
           "detect_tier", "execute", "execute_many", "get_pool", "shutdown"]
