"""A durable trace store: one SQLite file (WAL mode) per run, appended step by step, readable while it grows."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import quote

from mentor.text import repaired
from mentor.trace_format import TraceRecord, decoded_record, trace_path
from mentor.types import InputError

logger = logging.getLogger("mentor")

MAX_FIELD_CHARS = 1 << 20  # a string field longer than this (1 Mi characters) is stored cut, with a marker
MAX_RECORD_CHARS = 1 << 24  # a record longer than this (16 Mi characters) has its fields cut harder until it fits
# A write that finds the file locked waits up to BUSY_TIMEOUT_S, and is tried WRITE_ATTEMPTS times: a few seconds
# at most, after which the caller (MentorCallback) counts the failure and training goes on.
BUSY_TIMEOUT_S = 1.0
WRITE_ATTEMPTS = 3

SCHEMA = """
CREATE TABLE IF NOT EXISTS interventions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    step INTEGER NOT NULL, grp INTEGER NOT NULL, round INTEGER NOT NULL, problem_id TEXT NOT NULL,
    task TEXT, error_class TEXT, tier INTEGER, hint TEXT, withheld INTEGER, recovered INTEGER,
    leaks INTEGER, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS interventions_step ON interventions(step);
CREATE TABLE IF NOT EXISTS steps (step INTEGER PRIMARY KEY, metrics TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, versions TEXT NOT NULL);
"""
# The columns readers query: a file whose tables lack one is another program's, refused when opened
READ_COLUMNS = {"interventions": {"id", "step", "grp", "round", "problem_id", "error_class", "tier", "withheld",
                                  "recovered", "record"},
                "steps": {"step", "metrics"}}


def truncate(value: Any, limit: int = MAX_FIELD_CHARS) -> Any:
    """The value with every string longer than `limit` cut to `limit` characters plus "…[truncated K chars]"."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}…[truncated {len(value) - limit} chars]"
    if isinstance(value, dict):
        return {k: truncate(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [truncate(v, limit) for v in value]
    return value


def bounded(record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The record and its JSON text, its strings cut so that each is at most MAX_FIELD_CHARS and the whole text
    at most MAX_RECORD_CHARS (SQLite refuses a value over 1 GB; a model can write a 50 MB reply)."""
    text = json.dumps(record)
    if len(text) <= MAX_FIELD_CHARS:  # the common case: then no string in it can be longer
        return record, text
    limit = MAX_FIELD_CHARS
    while True:
        cut = truncate(record, limit)
        text = json.dumps(cut)
        if len(text) <= MAX_RECORD_CHARS or limit <= 64:
            return cut, text
        limit //= 4


def _row(step: int, record: dict[str, Any]) -> tuple:
    """The interventions table's row of one record."""
    r, text = bounded(record)
    return (step, r.get("group", 0), r.get("round", 1), r["problem_id"], r.get("task"),
            r.get("diagnosis", {}).get("error_class"), r.get("tier"), r.get("hint"), int(bool(r.get("withheld"))),
            int(bool(r.get("recovered"))), len(r.get("leak", {}).get("leaked_drafts", [])), text)


def readonly_uri(path: Path, on_problem: Callable[[str], None]) -> str:
    """The URI that opens `path` for reading only. WAL readers write a `-shm` file beside the store, so in a folder
    this process cannot write (a read-only filesystem, another user's run) the store opens `immutable=1`, which
    reads the main file alone; a write-ahead log left there (a run that ended without its checkpoint) is then unread,
    and `on_problem` says so."""
    uri = f"file:{quote(str(path))}?mode=ro"
    if os.access(path.parent, os.W_OK | os.X_OK):
        return uri
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        on_problem(f"{path.parent} is not writable, so the store is read without its write-ahead log {wal} "
                   f"({wal.stat().st_size} bytes): records written since its last checkpoint are missing; copy the "
                   f"folder somewhere writable to read them")
    return uri + "&immutable=1"


class TraceStore:
    """Interventions and per-step metrics of a run. Each `append` is one committed transaction.

    Args:
        path: the run directory (traces go to `<path>/mentor/traces.sqlite`) or the `.sqlite` file itself.
        readonly: open an existing store for reading only; InputError if it is not one.
        on_problem: called with a message for each row that cannot be read (it is skipped); default: a warning
            on the "mentor" logger. Each row is reported once.
    """

    def __init__(self, path: str | Path, readonly: bool = False, on_problem: Callable[[str], None] | None = None):
        self.path = trace_path(path)
        self.on_problem = on_problem or logger.warning
        self.reported: set[tuple[str, int]] = set()
        if readonly:
            if not self.path.exists():
                raise FileNotFoundError(f"no mentor traces at {self.path}: was the run made with `traces: true`?")
            self.db = sqlite3.connect(readonly_uri(self.path, self.on_problem), uri=True, check_same_thread=False,
                                      timeout=BUSY_TIMEOUT_S)
            self._check()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
            self._write(lambda: (self.db.execute("PRAGMA journal_mode=WAL"), self.db.executescript(SCHEMA)))
        self.db.row_factory = sqlite3.Row

    def _check(self) -> None:
        """Refuses, naming the file, one that is not SQLite, is corrupt, or holds no trace tables."""
        fix = "give a run directory (the trainer's output_dir) or the mentor/traces.sqlite a training run wrote"
        try:
            tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as e:
            self.db.close()
            if not os.access(self.path, os.R_OK):
                raise InputError(f"{self.path}: no permission to read it ({e})") from None
            raise InputError(f"{self.path} is not a readable SQLite file ({e}); {fix}") from None
        if not {"interventions", "steps"} <= tables:
            self.db.close()
            what = "is empty (0 bytes)" if self.path.stat().st_size == 0 else \
                f"is SQLite but not a mentor trace store (its tables: {', '.join(sorted(tables)) or 'none'})"
            raise InputError(f"{self.path} {what}; {fix}")
        for table, needed in READ_COLUMNS.items():
            missing = needed - {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            if missing:
                self.db.close()
                raise InputError(f"{self.path} is SQLite but not a mentor trace store (its table {table} lacks "
                                 f"{', '.join(sorted(missing))}); {fix}")

    def _write(self, write: Callable[[], Any]) -> Any:
        """Runs `write` in one transaction, again if the file was locked (another process writing it), at most
        WRITE_ATTEMPTS times; then raises. Other errors (a record SQLite refuses, a full disk) raise at once."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                with self.db:
                    return write()
            except sqlite3.OperationalError as e:
                if attempt == WRITE_ATTEMPTS or not ("locked" in str(e) or "busy" in str(e)):
                    raise
                time.sleep(0.05 * attempt)

    def append(self, step: int, records: list[TraceRecord], metrics: dict[str, float] | None = None) -> None:
        """Write one step's intervention records (and its metrics) in one transaction.

        Strings longer than MAX_FIELD_CHARS are cut (see `bounded`), and a lone surrogate in any string is replaced by
        U+FFFD (SQLite cannot encode one). A record that cannot be stored at all (a value JSON lacks, nesting past
        Python's recursion limit) is stored as a stub naming the fault, so the step's other records are kept; the
        fault is logged. Raises sqlite3.Error if the write fails after WRITE_ATTEMPTS tries (a few seconds at most).
        """
        rows = []
        for r in records:
            try:
                rows.append(_row(step, repaired(r)))
            except Exception as e:  # this record's fault only: RecursionError, TypeError, ValueError...
                logger.warning("mentor traces: step %s: a record of problem %r could not be stored (%s: %s); a stub "
                               "takes its place", step, r.get("problem_id"), type(e).__name__, str(e)[:200])
                rows.append(_row(step, {"problem_id": repaired(str(r.get("problem_id", ""))),
                                        "group": r.get("group", 0) if isinstance(r.get("group"), int) else 0,
                                        "round": r.get("round", 1) if isinstance(r.get("round"), int) else 1,
                                        "error": f"the record could not be stored: {type(e).__name__}: {e}"[:1000]}))

        def write():
            self.db.executemany(
                "INSERT INTO interventions (step, grp, round, problem_id, task, error_class, tier, hint, withheld,"
                " recovered, leaks, record) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            if metrics is not None:
                self.db.execute("INSERT OR REPLACE INTO steps (step, metrics) VALUES (?, ?)",
                                (step, json.dumps(metrics)))

        self._write(write)

    def record_run(self, step: int, versions: dict[str, Any]) -> None:
        """Records what a run (or a resumed run, from `step`) ran: its graph and prompt files with their hashes and
        each node's backend (mentor.runtime.versions), once per run."""
        self._write(lambda: self.db.execute("INSERT INTO runs (step, versions) VALUES (?, ?)",
                                            (step, json.dumps(truncate(versions)))))

    def runs(self) -> list[dict[str, Any]]:
        """What each run that wrote this store ran (`record_run`), oldest first; none for a store older than the
        table. A row that is not a JSON object is reported (`on_problem`) and skipped."""
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone():
            return []
        return [{"step": row["step"], **value}
                for row in self.db.execute("SELECT id, step, versions FROM runs ORDER BY id")
                if (value := self._parsed("runs", row["id"], row["versions"])) is not None]

    def drop_from(self, step: int) -> int:
        """Deletes the interventions and step metrics of `step` and later; returns how many interventions.

        A run resumed from a checkpoint at global step N redoes steps N, N+1...: what the stopped run wrote for
        them describes training the checkpoint does not hold, so it goes before the resumed run writes them again.
        """
        def write():
            self.db.execute("DELETE FROM steps WHERE step >= ?", (step,))
            return self.db.execute("DELETE FROM interventions WHERE step >= ?", (step,)).rowcount

        return self._write(write)

    def _skip(self, table: str, key: int, problem: str) -> None:
        if (table, key) not in self.reported:
            self.reported.add((table, key))
            column = "step" if table == "steps" else "id"
            self.on_problem(f"{self.path}: {table} row {column}={key} {problem}; skipped. Delete it with: "
                            f"sqlite3 {self.path} 'DELETE FROM {table} WHERE {column} = {key}'")

    def _parsed(self, table: str, key: int, text: Any) -> dict[str, Any] | None:
        """A row's JSON object, or None (reported) when it is not one."""
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as e:
            self._skip(table, key, f"is not JSON ({e})")
            return None
        except RecursionError:
            self._skip(table, key, "is JSON nested too deeply to read")
            return None
        if not isinstance(value, dict):
            self._skip(table, key, f"is JSON but not an object ({type(value).__name__})")
            return None
        return value

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM interventions").fetchone()[0]

    def interventions(self, step_min: int | None = None, step_max: int | None = None,
                      error_class: str | None = None, recovered: bool | None = None,
                      withheld: bool | None = None, tier: int | None = None, after_id: int = 0,
                      limit: int | None = None) -> list[dict[str, Any]]:
        """Intervention records, oldest first, filtered, each in the current shape (a record an earlier version
        wrote is decoded: mentor.trace_format.decoded_record) with its store `id`. A row that is not a JSON object
        is reported (`on_problem`) and skipped."""
        rows = self._select(step_min, step_max, error_class, recovered, withheld, tier, after_id, limit)
        return [{"id": row["id"], **decoded_record(value)} for row in rows
                if (value := self._parsed("interventions", row["id"], row["record"])) is not None]

    def interventions_json(self, step_min: int | None = None, step_max: int | None = None,
                           error_class: str | None = None, recovered: bool | None = None,
                           withheld: bool | None = None, tier: int | None = None, after_id: int = 0,
                           limit: int | None = None) -> list[str]:
        """The same records as `interventions`, each as its stored JSON text with `"id"` first, unparsed and not
        decoded.

        For readers that pass records on as JSON (the trace viewer, whose script decodes them): no parse and
        re-serialise. The text is
        what `json.dumps` wrote, so it may hold NaN or Infinity (a reward of -inf), which strict JSON lacks.
        SQLite's json_valid vouches for the rest; a row it doubts is parsed here, and skipped if it is not an
        object.
        """
        texts = []
        for row in self._select(step_min, step_max, error_class, recovered, withheld, tier, after_id, limit):
            text = row["record"]
            if row["kind"] != "object":  # doubted by SQLite, or not text at all (a BLOB): parsed, then rewritten
                value = self._parsed("interventions", row["id"], text)
                if value is None:
                    continue
                text = text if isinstance(text, str) else json.dumps(value)
            body = text.strip()[1:].lstrip()  # the object's members and its closing brace
            texts.append(f'{{"id":{row["id"]}' + ("," if body[:1] != "}" else "") + body)
        return texts

    def _select(self, step_min, step_max, error_class, recovered, withheld, tier, after_id, limit):
        where, args = ["id > ?"], [after_id]
        for clause, value in (("step >= ?", step_min), ("step <= ?", step_max), ("error_class = ?", error_class),
                              ("recovered = ?", None if recovered is None else int(recovered)),
                              ("withheld = ?", None if withheld is None else int(withheld)), ("tier = ?", tier)):
            if value is not None:
                where.append(clause)
                args.append(value)
        sql = (f"SELECT id, record, CASE WHEN typeof(record) != 'text' THEN NULL"  # json_* may read a BLOB as JSONB
               f" WHEN json_valid(record) THEN json_type(record) END AS kind"
               f" FROM interventions WHERE {' AND '.join(where)} ORDER BY id")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self.db.execute(sql, args)

    def get(self, intervention_id: int) -> dict[str, Any] | None:
        row = self.db.execute("SELECT id, record FROM interventions WHERE id = ?", (intervention_id,)).fetchone()
        value = self._parsed("interventions", row["id"], row["record"]) if row else None
        return {"id": row["id"], **decoded_record(value)} if value is not None else None

    def steps(self, after_step: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Per-step metrics (`step` plus the `mentor/*` figures of that step), in step order: those after
        `after_step` (None: all), at most `limit` of them. A row whose metrics are not a JSON object is reported
        (`on_problem`) and skipped, and not counted in `limit`: a page short of `limit` is the last."""
        where, args = ("WHERE step > ? ", (after_step,)) if after_step is not None else ("", ())
        out = []
        for row in self.db.execute(f"SELECT step, metrics FROM steps {where}ORDER BY step", args):  # read lazily
            if limit is not None and len(out) >= limit:
                break
            if (value := self._parsed("steps", row["step"], row["metrics"])) is not None:
                out.append({"step": row["step"], **value})
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.interventions())

    def close(self) -> None:
        self.db.close()
