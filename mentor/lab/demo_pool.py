"""The demo's runs in parallel: each (arm, seed) in its own process, one progress bar per run."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def cores() -> int:
    """CPU cores this process may use (its affinity on Linux)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _run_in_worker(arm, seed, policy_dir, settings, out_dir, steps_queue, library) -> dict[str, Any]:
    import torch

    from mentor.lab.demo import run_arm  # the worker's own import: demo.py imports this module

    torch.set_num_threads(1)
    return run_arm(arm, seed, policy_dir, settings, out_dir, steps_queue, library)


def run_parallel(runs, jobs, policies, settings, out_dir, libraries) -> list[dict[str, Any]]:
    """Each run in its own process; one progress bar per run, fed by the workers' step and evaluation reports."""
    import multiprocessing

    from tqdm.auto import tqdm

    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no torch or thread state inherited
    with ctx.Manager() as manager, ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
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
        futures = [pool.submit(_run_in_worker, arm, seed, policies[seed], settings, out_dir, steps_queue,
                               libraries.get(seed)) for arm, seed in runs]
        try:
            return [f.result() for f in futures]
        finally:
            steps_queue.put(None)
            reader.join()
            for bar in bars.values():
                bar.close()
