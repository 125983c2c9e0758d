"""The records a viewer shows: interventions and step metrics of a run directory, a traces.sqlite or a JSONL file."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from mentor.traces import TraceStore, trace_path
from mentor.traces.viewer.json_text import to_json
from mentor.traces.viewer.tail import JsonlRecords, is_jsonl
from mentor.types import InputError


class TraceSource:
    """Interventions and step metrics of a run directory, a traces.sqlite file or a JSONL file.

    Args:
        path: what to read.
        wait: the run may still be writing (`serve`): a run with no step stored yet reads as empty instead of
            raising, and a JSONL file's unfinished last line is not reported while it does not parse. Default False.
    """

    def __init__(self, path: str | Path, wait: bool = False):
        self.path = Path(path)
        self.kind = "jsonl" if is_jsonl(self.path) else "run"
        self.store: TraceStore | None = None
        self.jsonl = JsonlRecords(self.path, live=wait)  # read on from where the last poll stopped
        self.lock = threading.Lock()
        if self.kind == "jsonl":
            if not self.path.is_file():
                raise InputError(f"no such file: {self.path}")
        elif not wait or trace_path(self.path).exists():  # a file that is there is checked now, before serving
            self._open()

    def _open(self) -> TraceStore | None:
        if self.store is None:
            try:  # a bad row is reported on stderr, once, and skipped, as a bad JSONL line is
                self.store = TraceStore(self.path, readonly=True, on_problem=lambda m: print(m, file=sys.stderr))
            except FileNotFoundError as e:
                raise InputError(str(e)) from None
        return self.store

    def _read(self, read):
        """`read(store)` under the lock; [] while a live run has written nothing; InputError naming the file if
        SQLite cannot read it (corrupted, or replaced by another file, while it is served)."""
        with self.lock:
            store = self._store()
            try:
                return read(store) if store else []
            except sqlite3.DatabaseError as e:
                raise InputError(f"cannot read {self.label} ({e}): is it a trace store a run wrote, and whole? "
                                 f"Restore it, or view another run") from None

    def _store(self) -> TraceStore | None:
        if self.store is None and not trace_path(self.path).exists():
            return None  # a live run that has not written yet
        return self._open()

    def interventions(self, after_id: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Records with an id above `after_id`, oldest first."""
        with self.lock:
            if self.kind == "jsonl":
                records = [r for r in self.jsonl.read() if r["id"] > after_id]
                return records[:limit] if limit is not None else records
        return self._read(lambda store: store.interventions(after_id=after_id, limit=limit))

    def interventions_json(self, after_id: int = 0, limit: int | None = None) -> list[str]:
        """The same records as strict JSON texts; from a store without parsing them (a 10,000-record run is
        tens of MB), except the rare record that holds NaN or Infinity."""
        if self.kind == "jsonl":
            return [to_json(r) for r in self.interventions(after_id, limit)]
        texts = self._read(lambda store: store.interventions_json(after_id=after_id, limit=limit))
        return [to_json(json.loads(t)) if "NaN" in t or "Infinity" in t else t for t in texts]

    def steps(self, after_step: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Step metrics after `after_step` (None: all), at most `limit`; none for JSONL."""
        if self.kind == "jsonl":
            return []
        return self._read(lambda store: store.steps(after_step, limit))

    def runs(self) -> list[dict[str, Any]]:
        """What each run that wrote the store ran (graph and prompt files with hashes, backends); none for JSONL."""
        if self.kind == "jsonl":
            return []
        return self._read(lambda store: store.runs())

    @property
    def label(self) -> str:
        return str(trace_path(self.path) if self.kind == "run" else self.path)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
