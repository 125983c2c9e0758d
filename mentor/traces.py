"""A durable trace store: one SQLite file (WAL mode) per run, appended step by step, readable while it grows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

TRACE_FILE = "mentor/traces.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS interventions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    step INTEGER NOT NULL, grp INTEGER NOT NULL, round INTEGER NOT NULL, problem_id TEXT NOT NULL,
    task TEXT, error_class TEXT, tier INTEGER, hint TEXT, withheld INTEGER, recovered INTEGER,
    leaks INTEGER, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS interventions_step ON interventions(step);
CREATE TABLE IF NOT EXISTS steps (step INTEGER PRIMARY KEY, metrics TEXT NOT NULL);
"""


def trace_path(run_dir: str | Path) -> Path:
    """The trace file of a run directory (a trainer's output_dir), or the file itself if given."""
    path = Path(run_dir)
    return path if path.suffix == ".sqlite" else path / TRACE_FILE


class TraceStore:
    """Interventions and per-step metrics of a run. Each `append` is one committed transaction.

    Args:
        path: the run directory (traces go to `<path>/mentor/traces.sqlite`) or the `.sqlite` file itself.
        readonly: open an existing store for reading only.
    """

    def __init__(self, path: str | Path, readonly: bool = False):
        self.path = trace_path(path)
        if readonly:
            if not self.path.exists():
                raise FileNotFoundError(f"no mentor traces at {self.path}: was the run made with `traces: true`?")
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(SCHEMA)
        self.db.row_factory = sqlite3.Row

    def append(self, step: int, records: list[dict[str, Any]], metrics: dict[str, float] | None = None) -> None:
        """Write one step's intervention records (and its metrics) in one transaction."""
        with self.db:
            self.db.executemany(
                "INSERT INTO interventions (step, grp, round, problem_id, task, error_class, tier, hint, withheld,"
                " recovered, leaks, record) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [(step, r.get("group", 0), r.get("round", 1), r["problem_id"], r.get("task"),
                  r.get("diagnosis", {}).get("error_class"), r.get("tier"), r.get("hint"), int(bool(r.get("withheld"))),
                  int(bool(r.get("recovered"))), len(r.get("leak", {}).get("leaked_drafts", [])), json.dumps(r))
                 for r in records])
            if metrics is not None:
                self.db.execute("INSERT OR REPLACE INTO steps (step, metrics) VALUES (?, ?)",
                                (step, json.dumps(metrics)))

    # --- read API ---------------------------------------------------------------------------------------
    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM interventions").fetchone()[0]

    def interventions(self, step_min: int | None = None, step_max: int | None = None,
                      error_class: str | None = None, recovered: bool | None = None,
                      withheld: bool | None = None, tier: int | None = None, after_id: int = 0,
                      limit: int | None = None) -> list[dict[str, Any]]:
        """Intervention records, oldest first, filtered; each has its store `id`."""
        return [{"id": row["id"], **json.loads(row["record"])}
                for row in self._select(step_min, step_max, error_class, recovered, withheld, tier, after_id, limit)]

    def interventions_json(self, step_min: int | None = None, step_max: int | None = None,
                           error_class: str | None = None, recovered: bool | None = None,
                           withheld: bool | None = None, tier: int | None = None, after_id: int = 0,
                           limit: int | None = None) -> list[str]:
        """The same records as `interventions`, each as its stored JSON text with `"id"` first, unparsed.

        For readers that pass records on as JSON (the trace viewer): no parse and re-serialise. The text is
        what `json.dumps` wrote, so it may hold NaN or Infinity (a reward of -inf), which strict JSON lacks.
        """
        return [f'{{"id":{row["id"]},{row["record"][1:]}' if row["record"] != "{}" else f'{{"id":{row["id"]}}}'
                for row in self._select(step_min, step_max, error_class, recovered, withheld, tier, after_id, limit)]

    def _select(self, step_min, step_max, error_class, recovered, withheld, tier, after_id, limit):
        where, args = ["id > ?"], [after_id]
        for clause, value in (("step >= ?", step_min), ("step <= ?", step_max), ("error_class = ?", error_class),
                              ("recovered = ?", None if recovered is None else int(recovered)),
                              ("withheld = ?", None if withheld is None else int(withheld)), ("tier = ?", tier)):
            if value is not None:
                where.append(clause)
                args.append(value)
        sql = f"SELECT id, record FROM interventions WHERE {' AND '.join(where)} ORDER BY id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self.db.execute(sql, args)

    def get(self, intervention_id: int) -> dict[str, Any] | None:
        row = self.db.execute("SELECT id, record FROM interventions WHERE id = ?", (intervention_id,)).fetchone()
        return {"id": row["id"], **json.loads(row["record"])} if row else None

    def steps(self) -> list[dict[str, Any]]:
        """Per-step metrics (`step` plus the `mentor/*` figures of that step), in step order."""
        return [{"step": row["step"], **json.loads(row["metrics"])}
                for row in self.db.execute("SELECT step, metrics FROM steps ORDER BY step")]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.interventions())

    def close(self) -> None:
        self.db.close()
