"""What `mentor diagnose` and `mentor eval` write: nothing half-written, nothing finished lost on Ctrl-C, inputs never
overwritten, deeply nested lines and wrongly typed fields reported and skipped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from failed_groups import ARITHMETIC
from interrupt import HANG_GUARD_S, StreamLines, default_sigint, wait_until
from mentor.cli import main
from mentor.output import write_atomically
from mentor.traces.jsonl import write_interventions
from mentor.types import FailedGroup, Intervention

pytestmark = pytest.mark.slow  # CLI subprocesses interrupted with SIGINT

ROOT = Path(__file__).resolve().parent.parent


GRAPH = f"{Path(__file__).resolve().parent / 'stalling_graph.py'}:graph"


def row(pid: str, **fields) -> str:
    return json.dumps({**ARITHMETIC, "problem_id": pid, **fields}) + "\n"


def diagnose(tmp_path, text: str, capsys, out_text: str | None = None) -> tuple[int, str, Path]:
    failures, out = tmp_path / "failures.jsonl", tmp_path / "out.jsonl"
    failures.write_text(text)
    if out_text is not None:
        out.write_text(out_text)
    code = main(["diagnose", str(failures), "-o", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err, out


def test_ctrl_c_keeps_the_finished_interventions_and_says_how_many(tmp_path):
    # Two groups finish at once, the third never does (a sync node stuck, timeout_s 600): SIGINT to the real process.
    (tmp_path / "f.jsonl").write_text(row("add-1") + row("add-2") + row("stuck-1"))
    (tmp_path / "cfg.yaml").write_text(f"graph: {GRAPH}\ntimeout_s: 600\n")
    out, partial = tmp_path / "out.jsonl", tmp_path / "out.jsonl.partial"
    out.write_text("an earlier run's output\n")
    proc = subprocess.Popen([sys.executable, "-m", "mentor.cli", "diagnose", "f.jsonl", "-o", "out.jsonl", "--config",
                             "cfg.yaml"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"}, preexec_fn=default_sigint)
    try:
        stderr = StreamLines(proc.stderr)
        assert stderr.wait_for("stuck-1 is stuck"), stderr.text()
        assert wait_until(lambda: partial.exists() and partial.read_text().count("\n") == 2), stderr.text()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=HANG_GUARD_S)
        err = stderr.text(final=True)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "interrupted: 2 of 3 groups finished; their interventions are in out.jsonl.partial" in err, err
    assert out.read_text() == "an earlier run's output\n"  # -o untouched
    kept = [json.loads(x) for x in partial.read_text().splitlines()]
    assert sorted(k["problem_id"] for k in kept) == ["add-1", "add-2"]
    assert all(k["hint"] == "042" and k["prompt"] == ARITHMETIC["prompt"] and len(k["attempts"]) == 3 for k in kept)


def test_a_finished_run_replaces_the_output_whole_and_leaves_no_partial_file(tmp_path, capsys):
    code, _, out = diagnose(tmp_path, row("add-1") + row("add-2"), capsys, out_text="old\n")
    assert code == 0 and [json.loads(x)["problem_id"] for x in out.read_text().splitlines()] == ["add-1", "add-2"]
    assert not (tmp_path / "out.jsonl.partial").exists()


def test_an_output_that_fails_while_written_leaves_the_existing_file_as_it_was(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("keep me\n")

    def lines():
        yield "a first line\n"
        raise RecursionError("a line too deep to write")

    with pytest.raises(RecursionError):
        write_atomically(out, lines())
    assert out.read_text() == "keep me\n" and list(tmp_path.iterdir()) == [out]  # no temporary file left either


def test_an_intervention_json_cannot_write_becomes_a_line_naming_the_fault(tmp_path):
    groups = [FailedGroup.from_dict(json.loads(row(p))) for p in ("add-1", "add-2")]
    write_interventions(tmp_path / "out.jsonl", groups, [Intervention("add-1", hint="h"),
                                                        Intervention("add-2", nodes=[{"output": {1, 2}}])])  # a set
    good, bad = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert good["hint"] == "h" and bad["problem_id"] == "add-2" and bad["hint"] is None
    assert bad["error"].startswith("the intervention could not be written as JSON: TypeError")
    assert bad["prompt"] == ARITHMETIC["prompt"] and len(bad["attempts"]) == 3


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("line, why", [
    ("[" * 100_000, "JSON nested more than 100 levels deep"),  # json.loads raises RecursionError
    (row("deep").replace('"answer": "0425"', f'"answer": "0425", "deep": {nested(900)}').strip(),
     "JSON nested more than 100 levels deep"),
])
def test_a_deeply_nested_line_is_reported_and_skipped_and_the_output_is_complete(tmp_path, capsys, line, why):
    code, err, out = diagnose(tmp_path, row("add-1") + line + "\n" + row("add-2"), capsys, out_text="old\n")
    assert code == 0 and f"failures.jsonl:2: {why}; skipped" in err
    assert [json.loads(x)["problem_id"] for x in out.read_text().splitlines()] == ["add-1", "add-2"]


def test_traces_view_reports_and_skips_a_deeply_nested_jsonl_line(tmp_path, capsys):
    code, _, out = diagnose(tmp_path, row("add-1"), capsys)
    out.write_text(out.read_text() + "[" * 100_000 + "\n")
    assert main(["traces", "view", str(out), "-o", str(tmp_path / "page.html")]) == 0
    err = capsys.readouterr().err
    assert "out.jsonl:2: JSON nested more than 100 levels deep; skipped" in err and "Traceback" not in err
    assert "add-1" in (tmp_path / "page.html").read_text()


def test_diagnose_refuses_to_write_over_its_input(tmp_path, capsys):
    failures = tmp_path / "same.jsonl"
    failures.write_text(row("add-1"))
    (tmp_path / "link.jsonl").symlink_to(failures)
    for out in (failures, tmp_path / "link.jsonl", tmp_path / "." / "same.jsonl"):
        assert main(["diagnose", str(failures), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"-o {out} is the input file" in err and "Give another output path" in err
    assert failures.read_text() == row("add-1")


@pytest.mark.parametrize("flags", [["-o", "{failures}"], ["-o", "{out}", "--html", "{out}"],
                                   ["-o", "{out}", "--html", "{failures}"]])
def test_eval_refuses_outputs_that_are_its_inputs_or_each_other(tmp_path, capsys, flags):
    failures, out = tmp_path / "f.jsonl", tmp_path / "r.json"
    failures.write_text(row("add-1"))
    argv = [f.format(failures=failures, out=out) for f in flags]
    assert main(["eval", str(failures), "--policy", "lab", *argv]) == 2
    err = capsys.readouterr().err
    assert "is the input file" in err and "Give another output path" in err, err
    assert failures.read_text() == row("add-1") and not out.exists()


@pytest.mark.parametrize("fields, message", [
    ({"previous_hints": [{"tier": 1, "hint": 42}]}, "previous_hints[0].hint must be a string"),
    ({"previous_hints": [{"tier": 1, "hint": ["a"]}]}, "previous_hints[0].hint must be a string"),
    ({"attempts": [{"completion": " 0415", "feedback": "wrong"}]}, "attempts[0].feedback must be a JSON object"),
    ({"attempts": [{"completion": " 0415", "feedback": [1]}]}, "attempts[0].feedback must be a JSON object"),
    ({"prompt": "Q: 158+267=? \ud800 A:"}, "prompt holds a lone surrogate"),
])
def test_a_field_of_the_wrong_type_is_refused_naming_the_line_and_field(tmp_path, capsys, fields, message):
    code, err, out = diagnose(tmp_path, row("add-1") + row("bad", **fields) + row("add-2"), capsys)
    assert code == 0 and f"failures.jsonl:2: {message}" in err and "skipped" in err
    written = [json.loads(x) for x in out.read_text().splitlines()]
    assert [w["problem_id"] for w in written] == ["add-1", "add-2"] and all(w["error"] is None for w in written)


def lab_rows(*ids: str) -> str:
    """The lab policy's own collapsed groups (arithmetic), renamed so that tests/stalling_graph.py stalls them."""
    from mentor.lab.hard_failures import lab_failure_rows

    return "".join(json.dumps({**r, "problem_id": pid}) + "\n" for r, pid in zip(lab_failure_rows(n=len(ids), seed=0), ids))


def test_eval_starts_each_groups_deadline_with_the_group(tmp_path):
    # One slot, three groups of 0.4 s each, timeout_s 1: the last waits 0.8 s for the slot, and is not cut off.
    (tmp_path / "f.jsonl").write_text(lab_rows("slow-1", "slow-2", "slow-3"))
    (tmp_path / "cfg.yaml").write_text(f"graph: {GRAPH}\ntimeout_s: 1\nmax_concurrent_groups: 1\n")
    assert main(["eval", str(tmp_path / "f.jsonl"), "--policy", "lab", "--config", f"slow={tmp_path / 'cfg.yaml'}",
                 "--samples", "2", "-o", str(tmp_path / "r.json"), "--threads", "1"]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["configs"]["slow"]["failures"] == 0


def test_ctrl_c_in_eval_keeps_the_finished_rows_and_says_which(tmp_path):
    # The row `none` finishes; the row `stall` never does (a sync node stuck, timeout_s 600): SIGINT then.
    (tmp_path / "f.jsonl").write_text(lab_rows("add-1", "stuck-1"))
    (tmp_path / "cfg.yaml").write_text(f"graph: {GRAPH}\ntimeout_s: 600\n")
    out, partial = tmp_path / "r.json", tmp_path / "r.json.partial"
    proc = subprocess.Popen([sys.executable, "-m", "mentor.cli", "eval", "f.jsonl", "--policy", "lab", "--config",
                             "stall=cfg.yaml", "--samples", "2", "-o", "r.json", "--threads", "1"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"}, preexec_fn=default_sigint)
    try:
        stderr = StreamLines(proc.stderr)
        assert stderr.wait_for("stuck-1 is stuck"), stderr.text()  # the row `none` is done, `stall` is in its graph
        assert wait_until(partial.exists), stderr.text()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=HANG_GUARD_S)
        err = stderr.text(final=True)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted: 1 of 2 rows finished (none); their figures are in r.json.partial" in err, err
    assert not out.exists() and list(json.loads(partial.read_text())["configs"]) == ["none"]
