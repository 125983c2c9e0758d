"""How `mentor diagnose` and `mentor eval` write their outputs so that nothing finished is lost and no output is
half-written: results go to `<OUT>.partial` as they finish, and OUT is written whole (a temporary file beside it,
renamed over it) only once the run is complete. An interrupted or failed run leaves OUT as it was, and the partial
file holds what finished. Before any work, `check_output` refuses an output path that could not be written or
would overwrite an input."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from typing import Iterable

from mentor.trace_format import trace_path
from mentor.types import InputError


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


def input_files(path: Path) -> list[Path]:
    """The files an input argument reads: the path, and a run directory's trace store."""
    return [path, trace_path(path)] if path.is_dir() else [path]


def check_output(out: Path, flag: str = "-o", inputs: list[Path] = ()) -> None:
    """Refuses (InputError, naming `flag`, the option that gave the path) an output path that cannot become a file:
    a folder, under a file or a folder this process cannot write, or one of the `inputs` files (or a link to one)."""
    if out.is_dir():
        raise InputError(f"{flag} {out} is a folder; give a file path, e.g. {out / 'out.jsonl'}")
    for source in (f for path in inputs for f in input_files(Path(path))):
        if out.resolve() == source.resolve() or out.exists() and source.exists() and os.path.samefile(out, source):
            raise InputError(f"{flag} {out} is the input file {source}: writing it would destroy what is being "
                             f"read. Give another output path")
    folder = next((p for p in out.parents if p.exists()), Path("."))  # the nearest that exists (the rest are made)
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        why = "a file, not a folder" if not folder.is_dir() else "no write permission"
        raise InputError(f"{flag} {out}: cannot write under {folder} ({why})")
    if out.exists() and not os.access(out, os.W_OK):
        raise InputError(f"{flag} {out}: the file exists and is not writable")
