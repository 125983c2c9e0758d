"""The few collectives the in-step hook needs under DDP, DeepSpeed or FSDP (accelerate); free in one process.

A collective must be called by every rank, in the same order, whatever the rank's own data: callers decide whether
to call from data that is the same on every rank (the gathered rewards, the hint history).
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any, Callable

from accelerate import PartialState
from accelerate.utils import gather_object


def rank_and_world() -> tuple[int, int]:
    state = PartialState()
    return state.process_index, state.num_processes


def gather(value: Any) -> list:
    """`value` from every rank, in rank order (`[value]` in one process)."""
    return gather_object([value])


def end_process_group() -> None:
    """The last call of a script that runs under many processes (`torchrun`, `accelerate launch`), after everything
    collective (`train`, `evaluate`, `save_model`), with no trainer left in scope: waits for every rank, destroys
    the process group, and frees the trainers gone, whose DDP models hold it; the last reference's release joins the
    group's threads. Nothing in one process.

    Without it, a rank may abort at exit ("terminate called without an active exception", SIGABRT): a gloo worker
    thread drops a finished collective's tensors (transformers gathers the FLOPs at the end of `train`) after the
    caller has moved on, and freeing a tensor that Python made takes the GIL; if the interpreter is finalising by
    then, CPython ends that thread mid-destructor and C++ terminates the process (docs/configuration.md).
    """
    state = PartialState()
    state.wait_for_everyone()
    if "vllm" in sys.modules:  # a colocated engine's groups first: its own teardown at exit then finds none left
        from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel

        destroy_model_parallel()
        destroy_distributed_environment()
    state.destroy_process_group()
    gc.collect()  # a trainer and its callbacks refer to each other: only the cyclic collector frees them


def share(items: list, rank: int, world: int, pad: bool = True) -> list:
    """Rank `rank`'s contiguous share of `items`: ceil(len(items) / world) of them (fewer on the last ranks).

    pad: fill the last shares with copies of the first item, so all shares are equal (default True).
    """
    size = -(-len(items) // world)
    if pad:
        items = items + items[:1] * (size * world - len(items))
    return items[rank * size:(rank + 1) * size]


def split_map(fn: Callable[[list], list], items: list, pad: bool = False) -> tuple[list, float]:
    """`fn` over `items` split across ranks in contiguous shares (see `share`); `fn` returns one result per item.

    pad: give every rank as many items, for an `fn` that calls collectives itself; the padding copies' results are
        dropped (default False: no item runs twice, and a rank may get fewer items, or none).
    Returns every result, in input order, on every rank, and the slowest rank's seconds.
    """
    rank, world = rank_and_world()
    t0 = time.perf_counter()
    mine = fn(share(items, rank, world, pad))
    parts = gather((mine, time.perf_counter() - t0))
    results = [result for part, _ in parts for result in part]
    return results[:len(items)], max(seconds for _, seconds in parts)
