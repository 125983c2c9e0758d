"""The annotated first wrong step of each attempt in a failures file, for the rows' `diagnosis_accuracy`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mentor.types import ANNOTATED_STEP, InputError


class _BadAnnotation(Exception):
    """An attempt's annotation that is not a step number (raised through parse_lines, which skips InputErrors)."""


def read_annotations(path: str | Path) -> list[list[int | None]] | None:
    """Per group of `read_failures(path)` (same order, the same lines skipped), each attempt's
    `annotated_first_wrong_step` or None; None when no attempt has one (a trace store never has)."""
    from mentor.command_files import checked_group, is_trace_store
    from mentor.traces.jsonl import parse_lines

    path = Path(path)
    if is_trace_store(path):
        return None

    def steps(number: int, row: Any) -> list[int | None]:
        checked_group(row)  # refuses exactly the lines read_failures skips, so the groups stay aligned
        for i, attempt in enumerate(row["attempts"]):
            step = attempt.get(ANNOTATED_STEP)
            if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 1):
                # Not a skipped line (that would misalign the groups): a bad annotation is the file's error.
                raise _BadAnnotation(f"FAILURES {path}:{number}: attempts[{i}].{ANNOTATED_STEP} must be a step "
                                     f"number >= 1 (the attempt's first wrong step) or null, got {step!r}")
        return [a.get(ANNOTATED_STEP) for a in row["attempts"]]

    with path.open("rb") as f:
        try:
            annotated, _ = parse_lines(f, path, steps)
        except _BadAnnotation as e:
            raise InputError(str(e)) from None
    return annotated if any(s is not None for group in annotated for s in group) else None
