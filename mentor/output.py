"""How `mentor diagnose` and `mentor eval` write their outputs so that nothing finished is lost and no output is
half-written: results go to `<OUT>.partial` as they finish, and OUT is written whole (a temporary file beside it,
renamed over it) only once the run is complete. An interrupted or failed run leaves OUT as it was, and the partial
file holds what finished."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from typing import Iterable


def partial_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def write_atomically(path: Path, chunks: Iterable[str]) -> None:
    """`path` holds the joined `chunks`, or, if writing them raises, is left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A fresh name opened with "x" gets the mode a plain open() gives (the umask's), unlike mkstemp's 0600.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("x", encoding="utf-8") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class ResultLines:
    """JSONL lines appended to `<out>.partial` as each result finishes (from any thread); `complete` then writes OUT
    whole and removes the partial file, `stop` keeps the partial file and reports how many lines it holds."""

    def __init__(self, out: Path):
        self.out, self.partial = out, partial_path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.partial.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self.count = 0

    def add(self, line: str) -> None:
        with self._lock:
            if not self._file.closed:  # results still finishing after `stop` are not written
                self._file.write(line + "\n")
                self._file.flush()
                self.count += 1

    def stop(self) -> int:
        with self._lock:
            self._file.close()
            return self.count

    def complete(self, lines: Iterable[str]) -> None:
        self.stop()
        write_atomically(self.out, (line + "\n" for line in lines))
        self.partial.unlink(missing_ok=True)
