"""The few collectives the in-step hook needs under DDP, DeepSpeed or FSDP (accelerate); free in one process.

A collective must be called by every rank, in the same order, whatever the rank's own data: callers decide whether
to call from data that is the same on every rank (the gathered rewards, the hint history).
"""

from __future__ import annotations

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


def gather_columns(*columns: list) -> tuple[list, ...]:
    """Each rank's per-row columns, concatenated in rank order: the columns of the whole batch."""
    rows = [row for part in gather(list(zip(*columns))) for row in part]
    return tuple(list(column) for column in zip(*rows))


def share(items: list, rank: int, world: int) -> list:
    """Rank `rank`'s contiguous share of `items`, padded with copies of the first item so all shares are equal."""
    size = -(-len(items) // world)
    padded = items + items[:1] * (size * world - len(items))
    return padded[rank * size:(rank + 1) * size]


def split_map(fn: Callable[[list], list], items: list) -> tuple[list, float]:
    """`fn` over `items` split across ranks (rank k takes items k, k + world, ...), without duplicates.

    Returns every result, in input order, on every rank, and the slowest rank's seconds.
    """
    rank, world = rank_and_world()
    t0 = time.perf_counter()
    mine = fn(items[rank::world])
    parts = gather((mine, time.perf_counter() - t0))
    results: list = [None] * len(items)
    for k, (part, _) in enumerate(parts):
        results[k::world] = part
    return results, max(seconds for _, seconds in parts)
