"""The process's one mentor event loop, in a daemon thread, and its own threads: where `rules` backends, the leakage
checker and a graph's sync nodes run.

The threads are the mentor loop's default executor (`asyncio.to_thread` and LangGraph's sync nodes both use it), so the
mentor never takes threads from another pool, and no other code takes the mentor's. Python cannot stop a thread: a
call that outlives its group's `timeout_s` is abandoned (its group is cut off, unhinted and counted) but keeps its
thread until it returns. So the pool is bounded, and its threads are daemons that nothing joins: a call that never
returns holds one thread for good, yet never holds up the process's exit (`mentor diagnose` ends when its groups
do). When every thread is held, new calls wait in the queue, and their groups are cut off at their deadline: the
documented limit (docs/configuration.md, `timeout_s`); `busy` says how many threads are held.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

MIN_THREADS = 4  # the floor of the bound; each runtime raises it (see `reserve`)


class MentorThreads(ThreadPoolExecutor):
    """A bounded pool of daemon threads, started as calls need them.

    A ThreadPoolExecutor only by type (`loop.set_default_executor` requires one): its own threads are never started,
    because ThreadPoolExecutor joins every thread it started when the interpreter exits."""

    def __init__(self, max_threads: int = MIN_THREADS, name: str = "mentor-worker"):
        super().__init__(max_workers=1, thread_name_prefix=name)
        self.max_threads, self.name = max_threads, name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for a call
        self._queued = 0  # calls no thread has taken yet
        self.busy = 0  # threads running a call now (a stuck call counts until it returns)

    def reserve(self, threads: int) -> None:
        """Raises the bound to at least `threads` (MentorRuntime asks for twice its max_concurrent_groups: a thread
        for each group's call at once, and as many again that stuck calls may hold before new calls have to wait)."""
        with self._lock:
            self.max_threads = max(self.max_threads, threads)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        with self._lock:
            self._jobs.put((future, fn, args, kwargs))
            self._queued += 1
            if self._queued > self._idle and len(self._threads) < self.max_threads:
                thread = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                self._idle += 1
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn, args, kwargs = job
            with self._lock:
                self._queued -= 1
                self._idle -= 1
                self.busy += 1
            try:
                if future.set_running_or_notify_cancel():  # a call whose group was cut off while queued is skipped
                    try:
                        future.set_result(fn(*args, **kwargs))
                    except BaseException as e:  # handed to the awaiting coroutine, as ThreadPoolExecutor does
                        future.set_exception(e)
            finally:
                with self._lock:
                    self._idle += 1
                    self.busy -= 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stops the idle threads; never waits for a running call (it may never return)."""
        with self._lock:
            threads = len(self._threads)
        for _ in range(threads):
            self._jobs.put(None)


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
    """The bounded daemon threads of the mentor loop (mentor/runtime/event_loop.py): rules, leak checks, sync nodes."""
    mentor_loop()
    return _threads
