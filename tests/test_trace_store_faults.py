"""The trace store under faults: a locked file, an oversized record, a resumed run, files that are not traces.

The training cases run a real tiny GRPOTrainer (tests/tiny_grpo.py's make_trainer) with the mentor.
"""

import json
import logging
import sqlite3
import subprocess
import sys
import time

import pytest
from transformers import TrainerCallback

from mentor import Mentor
from mentor.cli import main
from mentor.tasks import get_task
from mentor.traces import node_io
from mentor.traces.store import BUSY_TIMEOUT_S, MAX_FIELD_CHARS, MAX_RECORD_CHARS, WRITE_ATTEMPTS, TraceStore
from tiny_grpo import RecordingReward, make_trainer

# Another process takes the write lock and holds it until its stdin closes.
LOCKER = ("import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); db.execute('BEGIN EXCLUSIVE');"
          " print('locked', flush=True); sys.stdin.read()")


class ReleaseAfterFirstStep(TrainerCallback):
    def __init__(self, locker):
        self.locker = locker

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 1 and self.locker.poll() is None:
            self.locker.stdin.close()
            self.locker.wait(timeout=30)


@pytest.mark.slow  # waits out the store's real lock timeout
def test_a_locked_trace_file_costs_a_bounded_wait_and_a_count_not_the_run(tmp_path, caplog, monkeypatch):
    store = TraceStore(tmp_path)  # the file exists, so another process can lock it before training starts
    store.close()
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(store.path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout.readline().strip() == "locked"
        trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2)
        callback = Mentor.from_config({}).attach(trainer)
        trainer.add_callback(ReleaseAfterFirstStep(locker))
        # Per step: how long it took, and the tries of each store write it made.
        seconds, tries, log_step, write = [], [], callback.log_step, TraceStore._write
        in_step = [False]

        def counted_write(store, attempt):
            if not in_step[0]:  # opening the store at train begin
                return write(store, attempt)
            tries[-1].append(0)

            def tried():
                tries[-1][-1] += 1
                return attempt()
            return write(store, tried)

        def timed(*args, **kwargs):
            tries.append([])
            in_step[0], t0 = True, time.perf_counter()
            try:
                log_step(*args, **kwargs)
            finally:
                seconds.append(time.perf_counter() - t0)
                in_step[0] = False

        monkeypatch.setattr(TraceStore, "_write", counted_write)
        callback.log_step = timed
        with caplog.at_level(logging.WARNING, logger="mentor"):
            trainer.train()
    finally:
        locker.kill()
        locker.wait()
    assert trainer.state.global_step == 2
    logs = [log for log in trainer.state.log_history if "mentor/trace_errors" in log]
    assert [log["mentor/trace_errors"] for log in logs] == [1, 0]  # step 0 found the file locked, step 1 did not
    assert callback.totals["mentor/trace_errors"] == 1
    # The locked step waited (the busy timeout) and gave up on the write that found the lock after WRITE_ATTEMPTS
    # tries, a bounded wait; the free one made each write at its first try.
    assert BUSY_TIMEOUT_S <= seconds[0] and tries[0][-1] == max(tries[0]) == WRITE_ATTEMPTS, tries
    assert tries[1] and set(tries[1]) == {1}, tries
    warnings = [r for r in caplog.records if "cannot write the traces" in r.getMessage()]
    assert len(warnings) == 1 and "OperationalError" in warnings[0].getMessage()  # train begin and step 0 failed
    stored = TraceStore(tmp_path, readonly=True)
    assert [s["step"] for s in stored.steps()] == [1] and {r["step"] for r in stored} == {1}
    assert stored.count() == logs[1]["mentor/interventions"] > 0


def test_a_50_mb_field_is_stored_cut_with_a_marker(tmp_path):
    store = TraceStore(tmp_path)
    huge = "7" * 50_000_000
    store.append(0, [{"problem_id": "p", "hint": huge, "attempts": [{"completion": "short", "reward": 0.0}]}])
    many = {"problem_id": "q", "attempts": [{"completion": "x" * MAX_FIELD_CHARS} for _ in range(40)]}
    store.append(1, [many])
    first, second = store.interventions()
    assert first["hint"] == "7" * MAX_FIELD_CHARS + f"…[truncated {len(huge) - MAX_FIELD_CHARS} chars]"
    assert first["attempts"] == [{"completion": "short", "reward": 0.0}]  # short fields are kept whole
    hint_column = store.db.execute("SELECT hint FROM interventions WHERE id = ?", (first["id"],)).fetchone()[0]
    assert hint_column == first["hint"]
    # 40 fields at the field limit are over the record limit: each is cut harder until the record fits.
    assert len(json.dumps(second)) <= MAX_RECORD_CHARS
    assert len(second["attempts"]) == 40 and all("…[truncated " in a["completion"] for a in second["attempts"])


def test_a_1_mb_draft_gives_a_record_of_about_that_size_not_twenty_times_it(tmp_path, monkeypatch):
    task = get_task("arithmetic")
    compose, big = task.compose, "carry the one. " * 66_667  # 1 MB, rejected (too long): the composer tries again

    def first_draft_huge(group, diagnosis, tier, feedback=None):
        return big if feedback is None else compose(group, diagnosis, tier, feedback)

    monkeypatch.setattr(task, "compose", first_draft_huge)
    trainer = make_trainer(tmp_path, RecordingReward())
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    store = TraceStore(tmp_path, readonly=True)
    rows = store.db.execute("SELECT id, record FROM interventions").fetchall()
    assert len(rows) == 2
    for intervention_id, text in rows:
        record = store.get(intervention_id)
        assert record["hint"] and record["leak"]["leaked_drafts"][0]["draft"] == big
        # Stored: the composer's output and the rejected draft in `leak`, about 2 MB.
        assert len(big) < len(text) < 2.1 * len(big)
        # Each node's whole input, as the viewer rebuilds it, is what it was; stored whole it was > 5x the draft.
        full = node_io(record["nodes"])
        assert [n["node"] for n in full][2:5] == ["hint_composer", "leakage_checker", "hint_composer"]
        assert full[3]["input"]["draft"] == big and full[4]["input"]["leaked_drafts"][0]["draft"] == big
        assert full[4]["input"]["classes"] == full[0]["output"]["classes"]
        assert full[3]["output"]["leaked_drafts"][0]["draft"] == big  # stored as a reference to its input
        assert "draft" not in record["nodes"][3]["input"] and record["nodes"][3]["inherited"]["draft"] == [2]
        assert len(json.dumps(full)) > 5 * len(big)


class StopAfter(TrainerCallback):
    """Stops training at `step`, after that step is logged and before any later checkpoint: the killed run."""

    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            control.should_training_stop = True


def test_resuming_stores_each_intervention_once(tmp_path, caplog):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=6, save_strategy="steps", save_steps=2)
    Mentor.from_config({}).attach(trainer)
    trainer.add_callback(StopAfter(3))  # checkpoint-2 holds steps 0-1; step 2 is logged too, then the run dies
    trainer.train()
    stopped = [log["mentor/interventions"] for log in trainer.state.log_history if "mentor/interventions" in log]
    assert len(stopped) == 3 and TraceStore(tmp_path, readonly=True).count() == sum(stopped)

    resumed = make_trainer(tmp_path, RecordingReward(), max_steps=4, save_strategy="no")
    Mentor.from_config({}).attach(resumed)
    with caplog.at_level(logging.WARNING, logger="mentor"):
        resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-2"))
    made = [log["mentor/interventions"] for log in resumed.state.log_history if "mentor/interventions" in log]
    assert len(made) == 4  # steps 0-1 from the checkpoint's history, 2-3 again
    store = TraceStore(tmp_path, readonly=True)
    keys = [(r["step"], r["round"], r["group"]) for r in store]
    assert len(keys) == len(set(keys)) == store.count() == sum(made)
    assert [s["step"] for s in store.steps()] == [0, 1, 2, 3]
    assert any(f"dropped {int(stopped[-1])} intervention(s) of step 2" in r.getMessage() for r in caplog.records)


# --- files that are not what they should be -----------------------------------------------------------------
def other_program_db(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE contacts (name TEXT)")
    db.commit()
    db.close()


def same_names_other_columns(path):
    """Tables named as a trace store's, another program's columns (issue 25: a raw sqlite3.OperationalError)."""
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE interventions (id INTEGER PRIMARY KEY, step INTEGER, foo TEXT);"
                     "CREATE TABLE steps (step INTEGER PRIMARY KEY, metrics TEXT);"
                     "INSERT INTO interventions VALUES (1, 0, 'a');")
    db.close()


@pytest.mark.parametrize("make,says", [
    (lambda p: p.write_bytes(b"SQLite? no: " + bytes(range(256)) * 20), "is not a readable SQLite file"),
    (lambda p: p.write_bytes(b""), "is empty (0 bytes)"),
    (other_program_db, "is SQLite but not a mentor trace store (its tables: contacts)"),
    (same_names_other_columns, "is SQLite but not a mentor trace store (its table interventions lacks error_class,"
                               " grp, problem_id, record, recovered, round, tier, withheld)"),
])
def test_a_file_that_is_not_a_trace_store_is_refused_with_its_name(tmp_path, capsys, make, says):
    path = tmp_path / "traces.sqlite"
    make(path)
    assert main(["traces", "view", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path} {says}" in err and "give a run directory" in err and "Traceback" not in err
    # `serve` refuses it before it says it serves (and so never serves a page that cannot load).
    served = subprocess.run([sys.executable, "-m", "mentor.cli", "traces", "serve", str(path), "--port", "0"],
                            capture_output=True, text=True, timeout=120)
    assert served.returncode == 2 and "serving" not in served.stdout and f"{path} {says}" in served.stderr
    # `mentor eval` reads the same files for its failed groups, and refuses them the same way.
    assert main(["eval", str(path), "--policy", "lab", "-o", str(tmp_path / "report.json")]) == 2
    err = capsys.readouterr().err
    assert f"{path} {says}" in err and "Traceback" not in err and not (tmp_path / "report.json").exists()


def test_a_bad_row_is_reported_and_skipped(tmp_path, capsys):
    store = TraceStore(tmp_path)
    for step in range(3):
        store.append(step, [{"problem_id": f"p{step}", "hint": "h", "reward": float("-inf") if step else 0.0}],
                     {"mentor/interventions": 1})
    store.db.execute("UPDATE steps SET metrics = 'not json' WHERE step = 1")
    store.db.execute("UPDATE interventions SET record = '[1, 2]' WHERE step = 2")
    store.db.commit()
    out = tmp_path / "page.html"
    assert main(["traces", "view", str(tmp_path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "steps row step=1 is not JSON" in err and "DELETE FROM steps WHERE step = 1" in err
    assert "interventions row id=3 is JSON but not an object" in err and str(store.path) in err
    page = out.read_text()
    data = json.loads(page[page.index('<script type="application/json"'):].split(">", 1)[1].split("</script>")[0])
    assert [r["problem_id"] for r in data["interventions"]] == ["p0", "p1"]
    assert data["interventions"][1]["reward"] == "-inf"  # a NaN or infinite record still passes (json_valid doubts it)
    assert [s["step"] for s in data["steps"]] == [0, 2]
    assert [r["problem_id"] for r in store.interventions()] == ["p0", "p1"]


def test_a_blob_row_is_read_when_it_holds_json_and_reported_when_not(tmp_path, capsys):
    """Issue 25: `traces view` crashed (TypeError) on a row whose record is a BLOB."""
    store = TraceStore(tmp_path)
    store.append(0, [{"problem_id": "text", "hint": "h"}], {"mentor/interventions": 3})
    for record in (json.dumps({"problem_id": "blob", "reward": float("nan")}).encode(), b"\xff\x00", 5):
        store.db.execute("INSERT INTO interventions (step, grp, round, problem_id, record) VALUES (0, 0, 1, 'p', ?)",
                         (record,))
    store.db.commit()
    out = tmp_path / "page.html"
    assert main(["traces", "view", str(tmp_path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "interventions row id=3 is not JSON" in err and "interventions row id=4 is JSON but not an object" in err
    page = out.read_text()
    data = json.loads(page[page.index('<script type="application/json"'):].split(">", 1)[1].split("</script>")[0])
    assert [(r["id"], r["problem_id"]) for r in data["interventions"]] == [(1, "text"), (2, "blob")]
    assert data["interventions"][1]["reward"] == "nan"
    assert [r["problem_id"] for r in store.interventions()] == ["text", "blob"]


def _read_on_a_read_only_mount(run, code: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh Python with `run` bind-mounted read-only (a user and mount namespace: no root needed)."""
    import shutil

    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("needs `unshare -rm` (user namespaces) to mount a folder read-only")
    script = f"mount -o bind,ro {run} {run} && exec {sys.executable} -c '{code}'"
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a subprocess
def test_a_store_on_a_read_only_filesystem_is_read(tmp_path):
    store = TraceStore(tmp_path / "run")
    store.append(0, [{"problem_id": f"p{i}", "hint": "h", "attempts": []} for i in range(3)])
    store.close()
    code = ("from mentor.traces import TraceStore; "
            "print(sorted(r[\"problem_id\"] for r in TraceStore(\"%s\", readonly=True).interventions()))" % (tmp_path / "run"))
    done = _read_on_a_read_only_mount(tmp_path / "run", code)
    assert done.returncode == 0 and done.stdout.strip() == "['p0', 'p1', 'p2']", done.stderr[-2000:]


@pytest.mark.slow  # a subprocess
def test_a_read_only_store_with_a_write_ahead_log_left_says_what_is_missing(tmp_path):
    store = TraceStore(tmp_path / "run")
    store.db.execute("PRAGMA wal_autocheckpoint=0")  # a run still writing: its records in the log
    store.append(0, [{"problem_id": "p0", "hint": "h", "attempts": []}])
    try:
        code = ("from mentor.traces import TraceStore; "
                "TraceStore(\"%s\", readonly=True, on_problem=print)" % (tmp_path / "run"))
        done = _read_on_a_read_only_mount(tmp_path / "run", code)
    finally:
        store.close()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "is not writable, so the store is read without its write-ahead log" in done.stdout, done.stdout
