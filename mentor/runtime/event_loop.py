"""The process's one mentor event loop, in a daemon thread, and its bounded worker threads."""

from __future__ import annotations

import asyncio
import os
import threading

from mentor.runtime.workers import MIN_THREADS, MentorThreads

_loop: asyncio.AbstractEventLoop | None = None
_loop_pid = 0
_threads: MentorThreads | None = None
_loop_lock = threading.Lock()


def mentor_loop() -> asyncio.AbstractEventLoop:
    """The process's one mentor event loop, running in a daemon thread.

    Every graph run happens on it, so async HTTP clients (whose pooled connections belong to the loop that
    opened them) are reused across training steps, and `run` works from sync code and from inside a running
    loop (a notebook) alike. Its default executor is `mentor_threads()`.
    """
    global _loop, _loop_pid, _threads
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid():  # a forked child gets its own loop
            _loop, _loop_pid = asyncio.new_event_loop(), os.getpid()
            _threads = MentorThreads(_threads.max_threads if _threads else MIN_THREADS)  # a fork has no threads
            _loop.set_default_executor(_threads)
            threading.Thread(target=_loop.run_forever, name="mentor-loop", daemon=True).start()
        return _loop


def mentor_threads() -> MentorThreads:
    """The bounded daemon threads of the mentor loop (mentor/runtime/workers.py): rules, leak checks, sync nodes."""
    mentor_loop()
    return _threads
