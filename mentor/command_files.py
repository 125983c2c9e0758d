"""The files of `mentor diagnose` and `mentor eval`: the one reader of failed groups (a JSONL file, each line
checked against its task, or a run's trace store). Their output paths are checked in mentor/output.py."""

from __future__ import annotations

import json
from pathlib import Path

from mentor.tasks import get_task
from mentor.text import invalid_text
from mentor.trace_format import TraceRecord, is_all_pass
from mentor.traces.jsonl import parse_lines
from mentor.types import FailedGroup, InputError

SQLITE_HEADER = b"SQLite format 3\x00"
WHAT = "a JSONL file of failed groups (one per line: problem_id, task, prompt, reference, attempts), a run directory " \
       "(a trainer's output_dir) or its mentor/traces.sqlite"


def read_failures(path: str | Path) -> tuple[list[FailedGroup], list[str]]:
    """The failed groups of FAILURES, for `mentor diagnose` and `mentor eval` alike: a JSONL file, a run directory
    or its traces.sqlite; and one message per failure skipped (a bad line, a record without its reference).

    Refuses (InputError, naming the file) a path that is none of them, and one that yields no group: a file that is
    not JSONL is an error, never an empty run."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"no such file: {path} (give {WHAT})")
    if is_trace_store(path):
        groups, skipped = _read_store(path)
    else:
        groups, skipped = _read_jsonl(path)
    if not groups:
        if not skipped:
            raise InputError(f"FAILURES {path}: no failed group in it (the file is empty); give {WHAT}")
        raise InputError(f"FAILURES {path}: no failed group could be read ({len(skipped)} skipped, the first: "
                         f"{skipped[0]}); is it {WHAT}?")
    return groups, skipped


def run_settings(path: str | Path) -> dict:
    """How the run behind FAILURES generated and scored (`mentor.trl.attach.run_settings`, kept with its traces),
    from its last run record; {} for a JSONL file or a store written before runs kept them."""
    from mentor.traces import TraceStore, trace_path

    path = Path(path)
    if not path.exists() or not is_trace_store(path):
        return {}
    store_file = path if path.is_file() else trace_path(path)
    if not store_file.is_file():
        return {}
    store = TraceStore(store_file, readonly=True)
    try:
        runs = store.runs()
    finally:
        store.close()
    settings = runs[-1].get("training") if runs else None
    return settings if isinstance(settings, dict) else {}


def is_trace_store(path: Path) -> bool:
    """Whether FAILURES names a run's trace store (a folder, a `.sqlite` name, or SQLite bytes) rather than JSONL."""
    if path.is_dir() or path.suffix == ".sqlite":
        return True
    with path.open("rb") as f:
        return f.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def _read_jsonl(path: Path) -> tuple[list[FailedGroup], list[str]]:
    with path.open("rb") as f:  # bytes: a line that is not UTF-8 is reported and skipped by itself
        if f.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            raise InputError(f"{path} is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8")
        f.seek(0)
        return parse_lines(f, path, lambda _, row: checked_group(row))


def _read_store(path: Path) -> tuple[list[FailedGroup], list[str]]:
    """The failed groups a run's trace store recorded (each record's problem, attempts and reference)."""
    from mentor.traces import TraceStore, trace_path

    store_file = path if path.is_file() else trace_path(path)
    if not store_file.is_file():
        raise InputError(f"FAILURES {path}: no trace store at {store_file}; give {WHAT}")
    groups, skipped = [], []
    store = TraceStore(store_file, readonly=True, on_problem=skipped.append)
    try:
        for record in store.interventions():
            if is_all_pass(record):  # an all-pass group's re-draw: its attempts succeeded, so it is no failure
                continue
            try:
                groups.append(checked_group(group_row(record)))
            except InputError as e:
                skipped.append(f"{store_file}: intervention id={record['id']}: {e}; skipped")
    finally:
        store.close()
    return groups, skipped


def group_row(record: TraceRecord) -> dict:
    """A trace record (decoded: it carries its group) as a failed group's JSON row. A record of an earlier version
    whose graph had no error classifier (which wrote the group back) has no reference: it is refused."""
    if not record.get("reference"):
        raise InputError("no reference in the record (a record of an earlier version whose graph stored no group "
                         "with a reference)")
    return {key: record.get(key) for key in ("problem_id", "task", "prompt", "reference", "attempts",
                                             "previous_hints")}


# A reference field's JSON types, as the tasks read it: the allowed Python types and how the message states them.
REFERENCE_TYPES = {
    "answer": ((str, int, float), "a string or a number"),
    "operands": ((list,), "a list of integers"),
    **{field: ((str,), "a string") for field in ("solution", "canonical_solution", "test", "entry_point", "prompt",
                                                  "hint")},
}


def checked_group(row) -> FailedGroup:
    """The FailedGroup of one parsed line (`row`), refused (InputError) when its task is unknown or its reference
    lacks a field the task needs or holds one of the wrong type, so the line is reported rather than becoming a
    failed intervention."""
    group = FailedGroup.from_dict(row)
    where = invalid_text(row)
    if where:
        raise InputError(f"{where} holds a lone surrogate (a \\ud800-\\udfff escape alone), which is not text; fix "
                         f"the field")
    task = get_task(group.task)
    group.reference = task.completed_reference(group.reference)  # e.g. math's answer from a worked solution
    missing = task.missing_reference(group.reference)
    if missing:
        raise InputError(f"reference lacks {', '.join(map(repr, missing))}, which the {group.task} task needs")
    for field, value in group.reference.items():
        types, expected = REFERENCE_TYPES.get(field, (object, ""))
        wrong = not isinstance(value, types) or isinstance(value, bool) or (
            field == "operands" and not all(isinstance(v, int) and not isinstance(v, bool) for v in value))
        if wrong:
            raise InputError(f"reference.{field} must be {expected}, got {json.dumps(value)[:80]} "
                             f"({type(value).__name__}); fix the field or drop it")
    return group
