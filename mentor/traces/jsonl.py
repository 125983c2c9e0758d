"""The one JSONL line parser: `mentor diagnose` reads failed groups with it, the trace viewer interventions; and the
one writer of trace records as JSONL (`mentor diagnose -o`, `mentor eval --interventions`), which the viewer reads."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from mentor.output import write_atomically
from mentor.trace_format import trace_record
from mentor.types import FailedGroup, InputError, Intervention

T = TypeVar("T")
MAX_DEPTH = 100  # nesting levels of a line's JSON: no failed group or trace record comes near; Python's own limit does


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists and objects more than `limit` levels deep (counted without recursion)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limit:
                return True
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return False


def parse_lines(lines: Iterable[str | bytes], source: str | Path, convert: Callable[[int, Any], T],
                first: int = 1) -> tuple[list[T], list[str]]:
    """Each non-blank line parsed as JSON and made an item by `convert`; bad lines are skipped, not fatal.

    Args:
        lines: the lines' text, in file order; or their bytes, each decoded as UTF-8 (a line that is not UTF-8
            text is reported and skipped, so one bad byte costs that line only).
        source: the file's name, which each problem message starts with.
        convert: `convert(line_number, value)` makes the item of a parsed line; it raises InputError to skip it.
        first: the 1-based line number of the first of `lines` (default 1; more when reading on from a point).

    Returns:
        the items, and one `source:number: reason; skipped` message per bad line.
    """
    items, problems = [], []
    for number, line in enumerate(lines, first):
        if isinstance(line, bytes):
            line = line.removeprefix(b"\xef\xbb\xbf") if number == 1 else line  # a UTF-8 BOM is not text
            try:
                nul = line.find(b"\x00")  # valid UTF-8, but no JSON text holds one: UTF-16, or a binary file
                if nul >= 0:
                    raise UnicodeDecodeError("utf-8", line, nul, nul + 1, "NUL byte")
                line = line.decode("utf-8")
            except UnicodeDecodeError as e:
                problems.append(f"{source}:{number}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at column "
                                f"{e.start + 1}); skipped. Save the file as UTF-8")
                continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
            if too_deep(value):
                raise RecursionError
            items.append(convert(number, value))
        except json.JSONDecodeError as e:
            problems.append(f"{source}:{number}: not JSON ({e.msg}); skipped")
        except RecursionError:  # json.loads raises it past Python's recursion limit, too_deep past MAX_DEPTH
            problems.append(f"{source}:{number}: JSON nested more than {MAX_DEPTH} levels deep; skipped")
        except InputError as e:
            problems.append(f"{source}:{number}: {e}; skipped")
    return items, problems


def intervention_line(group: FailedGroup, intervention: Intervention, hinted_prompt: str | None = None) -> str:
    """One JSONL line: the trace record of the intervention on the group (mentor.trace_format.trace_record), as
    training traces hold it, so `mentor traces view FILE` pages it and `mentor diagnose` reads it back as a failed
    group. An intervention JSON cannot write (a value an edited graph put in its state, nesting past Python's
    recursion limit) becomes the record of an intervention that failed, naming the fault, so the other lines are
    still written; the reference goes too if it is the part JSON cannot write."""
    try:
        return json.dumps(trace_record(group, intervention, hinted_prompt=hinted_prompt))
    except (TypeError, ValueError, RecursionError) as e:
        failed = Intervention(group.problem_id, group.task, error=f"the intervention could not be written as JSON: "
                                                                  f"{type(e).__name__}: {str(e)[:300]}")
    try:
        return json.dumps(trace_record(group, failed))
    except (TypeError, ValueError, RecursionError):
        return json.dumps(trace_record(replace(group, reference={}, previous_hints=[]), failed))


def write_interventions(path: str | Path, groups: list[FailedGroup], interventions: list[Intervention],
                        hinted_prompts: list[str | None] | None = None) -> None:
    """One line per group (`intervention_line`); `hinted_prompts`, where given, is the text the policy was sent for
    each (`mentor eval`). The file is written whole or not at all (mentor/output.py)."""
    hinted_prompts = hinted_prompts or [None] * len(groups)
    write_atomically(Path(path), (intervention_line(g, i, p) + "\n"
                                  for g, i, p in zip(groups, interventions, hinted_prompts)))
