"""Reading a JSONL file of records (`mentor diagnose` output, exported traces) that may still be growing."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mentor.traces.jsonl import parse_lines
from mentor.types import InputError


def is_jsonl(path: str | Path) -> bool:
    """A JSONL file (`mentor diagnose` output), rather than a run directory or its traces.sqlite."""
    path = Path(path)
    return path.suffix in (".jsonl", ".ndjson") or (path.is_file() and path.suffix != ".sqlite")


def _record(number: int, value: Any) -> dict[str, Any]:
    """A JSONL line's record, given its 1-based line number as `id` if it lacks one (stable while the file grows)."""
    if not isinstance(value, dict):
        raise InputError("not a JSON object")
    value.setdefault("id", number)
    if not isinstance(value["id"], int) or isinstance(value["id"], bool):  # the page orders and polls by it
        raise InputError(f"'id' must be an integer, got {value['id']!r} (leave it out to number lines by position)")
    return value


class JsonlRecords:
    """The records of a JSONL file that may still be growing, read on from where the last read stopped.

    Each `read` parses only the lines completed since the previous one. The last line, while it has no newline,
    is parsed on every read and kept once complete. A file that shrank or was replaced is read from the start.
    Bad lines are reported on stderr once, and skipped.

    Args:
        path: the JSONL file (`mentor diagnose` output or exported traces).
        live: another process may be writing the file (`serve`): an unfinished last line that does not parse
            yet is taken as half written and not reported. Default False: it is reported like any bad line.
    """

    def __init__(self, path: str | Path, live: bool = False):
        self.path, self.live = Path(path), live
        self.records: list[dict[str, Any]] = []
        self.offset = self.lines = 0  # bytes and lines read and parsed, up to the last newline
        self.inode: int | None = None

    def read(self) -> list[dict[str, Any]]:
        """Every record so far, in file order."""
        with self.path.open("rb") as f:
            stat = os.fstat(f.fileno())
            if stat.st_size < self.offset or stat.st_ino != self.inode:  # truncated or replaced
                self.records, self.offset, self.lines, self.inode = [], 0, 0, stat.st_ino
            f.seek(self.offset)
            data = f.read()
        complete, newline, tail = data.rpartition(b"\n")
        if newline:  # UTF-8 never holds a newline byte inside a character, so each line decodes whole
            lines = complete.decode("utf-8", errors="replace").split("\n")
            self.records += self._parse(lines, report=True)
            self.offset, self.lines = self.offset + len(complete) + 1, self.lines + len(lines)
        return self.records + self._parse([tail.decode("utf-8", errors="replace")], report=not self.live)

    def _parse(self, lines: list[str], report: bool) -> list[dict[str, Any]]:
        records, problems = parse_lines(lines, self.path, _record, first=self.lines + 1)
        for problem in problems if report else ():
            print(problem, file=sys.stderr)
        return records


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSONL file (`mentor diagnose` output or exported traces), each given an `id` if it lacks one.

    Ids are 1-based line numbers, so they stay stable while the file grows. Bad lines are reported and skipped.
    """
    return JsonlRecords(path).read()
