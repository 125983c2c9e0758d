"""The demo's runs in parallel: each (arm, seed) in its own process, one progress bar per run."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from mentor.types import Terminated


def cores() -> int:
    """CPU cores this process may use (its affinity on Linux)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def workers_stopped_on_sigterm(pool: ProcessPoolExecutor):
    """While the pool runs, SIGTERM to this process alone (`kill PID`, `timeout`, a scheduler) is taken as Ctrl-C:
    `Terminated` takes Ctrl-C's path, which keeps the finished work. Ctrl-C's SIGINT reaches the workers too, SIGTERM
    does not: the handler ends them, so nothing runs on and the pool's shutdown waits for no task. A no-op off the
    main thread, where Python runs no signal handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        for worker in list((pool._processes or {}).values()):  # Python 3.14 has pool.terminate_workers(); 3.11 not
            worker.terminate()
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_interrupted = False  # this worker took Ctrl-C: the runs queued behind it (the pool hands them on) must not start


def _run_in_worker(run_arm, arm, seed, policy_dir, settings, out_dir, steps_queue, library) -> dict[str, Any]:
    global _interrupted
    if _interrupted:
        raise KeyboardInterrupt(f"{arm}, seed {seed}: not started, Ctrl-C came first")
    import torch

    torch.set_num_threads(1)
    try:
        return run_arm(arm, seed, policy_dir, settings, out_dir, steps_queue, library)
    except KeyboardInterrupt:
        _interrupted = True
        raise


def run_parallel(run_arm, runs, jobs, policies, settings, out_dir, libraries) -> list[dict[str, Any]]:
    """`run_arm` (mentor.lab.demo's, passed in: this module imports no demo code) over `runs`, each in its own
    process; one progress bar per run, fed by the workers' step and evaluation reports."""
    import multiprocessing

    from tqdm.auto import tqdm

    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no torch or thread state inherited
    with ctx.Manager() as manager, ProcessPoolExecutor(jobs, mp_context=ctx) as pool, workers_stopped_on_sigterm(pool):
        steps_queue = manager.Queue()
        bars = {run: tqdm(total=settings.steps, desc=f"{run[0]}, seed {run[1]}", position=i, mininterval=1.0)
                for i, run in enumerate(runs)}

        def show_progress():
            while (report := steps_queue.get()) is not None:
                arm, seed, accuracy = report
                if accuracy is None:
                    bars[arm, seed].update()
                else:
                    bars[arm, seed].set_postfix_str(f"held-out {accuracy:.3f}", refresh=False)

        reader = threading.Thread(target=show_progress, daemon=True)
        reader.start()
        futures = [pool.submit(_run_in_worker, run_arm, arm, seed, policies[seed], settings, out_dir, steps_queue,
                               libraries.get(seed)) for arm, seed in runs]
        try:
            return [f.result() for f in futures]
        except KeyboardInterrupt:
            for future in futures:  # the runs the pool has not handed to a worker yet
                future.cancel()
            raise
        finally:
            steps_queue.put(None)
            reader.join()
            for bar in bars.values():
                bar.close()
