"""A node's own exception (a bug in an edited `nodes.py`), told to the user instead of only counted.

The runtime turns such an exception into a failed group (`Intervention.error`) and keeps its traceback in
`Intervention.error_traceback`; training logs each distinct one once, on rank 0 (`NodeErrorLog`), and `mentor
diagnose` and `mentor eval` print the first and exit 1 (`report_node_errors`) unless `--allow-node-errors`."""

from __future__ import annotations

import re
import sys
import traceback
from typing import IO, Iterable

from mentor.types import Intervention

MAX_TRACEBACK_CHARS = 8000  # the end of the traceback, where the failing line is
NODE_ERROR_EXIT = 1
_FRAME = re.compile(r'\s*(File "[^"]*", line \d+)')


def traceback_text(error: BaseException) -> str:
    """`error`'s formatted traceback, its chained causes included, at most the last MAX_TRACEBACK_CHARS."""
    return "".join(traceback.format_exception(error))[-MAX_TRACEBACK_CHARS:]


def error_key(text: str) -> tuple[str, str]:
    """What makes two tracebacks the same error: the innermost frame's file and line, and the exception type (the
    first unindented line after that frame: notes after it, such as LangGraph's task id, differ from run to run)."""
    lines = text.splitlines()
    at = max((i for i, line in enumerate(lines) if _FRAME.match(line)), default=-1)
    kind = next((line for line in lines[at + 1:] if line and not line[0].isspace()), "")
    return (_FRAME.match(lines[at]).group(1) if at >= 0 else "", kind.split(":", 1)[0])


class NodeErrorLog:
    """Writes each distinct node error once (its traceback), to `stream` (default stderr)."""

    def __init__(self, stream: IO[str] | None = None):
        self.stream, self.seen = stream, set()

    def report(self, interventions: Iterable[Intervention]) -> int:
        """Logs the node errors of `interventions` not seen before; returns how many it wrote."""
        written = 0
        for iv in interventions:
            text = getattr(iv, "error_traceback", None)
            if not text or error_key(text) in self.seen:
                continue
            self.seen.add(error_key(text))
            print(f"mentor: a node raised in group {iv.problem_id} ({iv.error}); the group goes without a hint. "
                  f"Logged once; later groups failing the same way only count in mentor/failures:\n{text.rstrip()}",
                  file=self.stream or sys.stderr, flush=True)
            written += 1
        return written


def report_node_errors(interventions: list[Intervention], allow: bool, label: str = "") -> int:
    """For `mentor diagnose` and `mentor eval`: prints the first node error's traceback and how many groups failed
    from one; returns the exit status they call for (NODE_ERROR_EXIT, or 0 when none or `allow`)."""
    failed = [iv for iv in interventions if getattr(iv, "error_traceback", None)]
    if not failed:
        return 0
    print(f"mentor: {label}{len(failed)} of {len(interventions)} groups failed from an exception in a node; the "
          f"first, group {failed[0].problem_id}:\n{failed[0].error_traceback.rstrip()}", file=sys.stderr)
    if allow:
        return 0
    print("mentor: exit 1 for the node errors above (--allow-node-errors exits 0 with them)", file=sys.stderr)
    return NODE_ERROR_EXIT
