"""`mentor diagnose` on files that are not what they should be: each bad line is reported and skipped, a bad output
path is refused before any group runs."""

import json

import pytest

from failed_groups import ARITHMETIC, MATH
from mentor.cli import main


def line(row: dict) -> bytes:
    return json.dumps(row).encode() + b"\n"


def diagnose(tmp_path, data: bytes, capsys) -> tuple[int, str, list[dict]]:
    """Runs `mentor diagnose` on `data`: its exit code, its stderr, and the interventions it wrote."""
    failures, out = tmp_path / "failures.jsonl", tmp_path / "out.jsonl"
    failures.write_bytes(data)
    code = main(["diagnose", str(failures), "-o", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err, [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []


@pytest.mark.parametrize("bad, column", [
    (bytes(range(1, 10)) + b"\xff\xfe\x80" + bytes(range(200, 256)), 10),  # binary bytes, no newline in them
    (json.dumps({**ARITHMETIC, "prompt": "caf\u00e9"}, ensure_ascii=False).encode("latin-1"), None),  # one latin-1 byte
    (json.dumps(ARITHMETIC).encode("utf-16-le"), 2),  # UTF-16 without a byte-order mark: NUL bytes
])
def test_a_line_that_is_not_utf8_is_reported_and_skipped_and_the_rest_is_read(tmp_path, capsys, bad, column):
    good = {**ARITHMETIC, "problem_id": "add-0043"}
    code, err, written = diagnose(tmp_path, line(ARITHMETIC) + bad + b"\n" + line(good), capsys)
    assert code == 0
    column = column or bad.index(b"\xe9") + 1
    assert f"failures.jsonl:2: not UTF-8 text (byte 0x{bad[column - 1]:02x} at column {column}); skipped" in err
    assert err.count("skipped") == 1
    assert [w["problem_id"] for w in written] == ["add-0042", "add-0043"] and all(w["hint"] for w in written)


def test_a_utf16_file_is_refused_naming_the_file_and_a_utf8_bom_is_read(tmp_path, capsys):
    code, err, written = diagnose(tmp_path, (json.dumps(ARITHMETIC) + "\n").encode("utf-16"), capsys)
    assert code == 2 and "failures.jsonl is UTF-16 text" in err and "save it as UTF-8" in err and written == []
    code, err, written = diagnose(tmp_path, b"\xef\xbb\xbf" + line(ARITHMETIC), capsys)
    assert code == 0 and [w["problem_id"] for w in written] == ["add-0042"] and "skipped" not in err


@pytest.mark.parametrize("row, message", [
    ({**MATH, "reference": {"answer": "4", "solution": 4}}, "reference.solution must be a string, got 4 (int)"),
    ({**MATH, "reference": {"answer": True}}, "reference.answer must be a string or a number, got true (bool)"),
    ({**MATH, "reference": {"answer": ["4"]}}, 'reference.answer must be a string or a number, got ["4"] (list)'),
    ({**ARITHMETIC, "reference": {"answer": "0425", "operands": 425}},
     "reference.operands must be a list of integers, got 425 (int)"),
    ({**ARITHMETIC, "reference": {"answer": "0425", "operands": ["158", 267]}},
     'reference.operands must be a list of integers, got ["158", 267] (list)'),
    ({**ARITHMETIC, "task": "code", "reference": {"test": "assert f() == 1", "entry_point": 3}},
     "reference.entry_point must be a string, got 3 (int)"),
])
def test_a_reference_field_of_the_wrong_type_names_the_line_and_the_field(tmp_path, capsys, row, message):
    code, err, written = diagnose(tmp_path, line(MATH) + line(row), capsys)
    assert code == 0 and f"failures.jsonl:2: {message}; fix the field or drop it; skipped" in err
    assert [(w["problem_id"], w["error"]) for w in written] == [("m-1", None)]  # the good line ran, without error


def test_a_math_reference_with_a_numeric_answer_and_a_text_solution_runs(tmp_path, capsys):
    row = {**MATH, "reference": {"answer": 4, "solution": "2 + 2 = 4"}}
    code, err, [written] = diagnose(tmp_path, line(row), capsys)
    assert code == 0 and written["error"] is None and written["hint"] and "skipped" not in err


def test_an_output_path_that_cannot_be_written_is_refused_before_any_group_runs(tmp_path, capsys, monkeypatch):
    import mentor.runtime

    def never(*args, **kwargs):
        raise AssertionError("the mentor ran before the output path was checked")

    monkeypatch.setattr(mentor.runtime.MentorRuntime, "run", never)
    failures = tmp_path / "failures.jsonl"
    failures.write_bytes(line(ARITHMETIC))
    (tmp_path / "a_file").write_text("")
    for out, message in [(tmp_path, f"-o {tmp_path} is a folder; give a file path"),
                         (tmp_path / "a_file" / "out.jsonl", f"cannot write under {tmp_path / 'a_file'} (a file")]:
        assert main(["diagnose", str(failures), "-o", str(out)]) == 2
        assert message in capsys.readouterr().err
