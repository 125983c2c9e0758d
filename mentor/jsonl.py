"""The one JSONL line parser: `mentor diagnose` reads failed groups with it, the trace viewer interventions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from mentor.types import InputError

T = TypeVar("T")


def parse_lines(lines: Iterable[str], source: str | Path, convert: Callable[[int, Any], T],
                first: int = 1) -> tuple[list[T], list[str]]:
    """Each non-blank line parsed as JSON and made an item by `convert`; bad lines are skipped, not fatal.

    Args:
        lines: the lines' text, in file order.
        source: the file's name, which each problem message starts with.
        convert: `convert(line_number, value)` makes the item of a parsed line; it raises InputError to skip it.
        first: the 1-based line number of the first of `lines` (default 1; more when reading on from a point).

    Returns:
        the items, and one `source:number: reason; skipped` message per bad line.
    """
    items, problems = [], []
    for number, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            items.append(convert(number, json.loads(line)))
        except json.JSONDecodeError as e:
            problems.append(f"{source}:{number}: not JSON ({e.msg}); skipped")
        except InputError as e:
            problems.append(f"{source}:{number}: {e}; skipped")
    return items, problems
