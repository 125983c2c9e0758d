"""Verifier feedback parsed from a sandbox run of `build_program`: the harness's record, the progress line, the
summary."""

from __future__ import annotations

import ast
from typing import Any

from mentor.sandbox.harness import PROGRESS_TAG, RESULT_TAG
from mentor.tasks.code.taxonomy import TAXONOMY


def _parse_record(stdout: str, nonce: str) -> dict[str, Any] | None:
    tag = RESULT_TAG + nonce + " "
    idx = stdout.rfind(tag)
    if idx < 0 or not nonce:
        return None
    line = stdout[idx + len(tag):].split("\n", 1)[0]
    try:
        rec = ast.literal_eval(line)  # plain literals only: never evaluates code
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def _progress(stderr: str, nonce: str) -> tuple[int, int, int] | None:
    tag = PROGRESS_TAG + nonce + " "
    idx = stderr.rfind(tag)
    if idx < 0:
        return None
    try:
        a, b, c = stderr[idx + len(tag):].split("\n", 1)[0].split()
        return int(a), int(b), int(c)
    except ValueError:
        return None


def _clean(text: str, nonce: str, limit: int = 600) -> str:
    lines = [ln for ln in text.split("\n") if "\x1eMENTOR-" not in ln]
    out = "\n".join(lines).strip()
    return out if len(out) <= limit else "..." + out[-limit:]


def _test_line(test: str, lineno: int) -> str:
    lines = test.split("\n")
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


def feedback_from_run(result: Any, nonce: str, test: str, entry_point: str) -> dict[str, Any]:
    """Verifier feedback from a sandbox result of `build_program`."""
    rec = _parse_record(result.stdout, nonce)
    fb: dict[str, Any] = {"status": result.status, "duration_s": round(result.duration_s, 4), "tier": result.tier,
                          "entry_point": entry_point}
    stdout = _clean(result.stdout, nonce)
    if stdout:
        fb["stdout_tail"] = stdout
    if rec is None:
        prog = _progress(result.stderr, nonce)
        fb.update(passed=prog[1] if prog else 0, failed=(prog[2] if prog else 0) + 1)
        if prog:
            fb["failing_test_line"] = prog[0]
            fb["failing_test"] = _test_line(test, prog[0])
        stderr = _clean(result.stderr, nonce)
        if stderr:
            fb["stderr_tail"] = stderr
        if result.status == "timeout":
            fb["kind"] = "timeout"
            fb["message"] = f"time limit exceeded ({result.reason})"
        elif result.status == "killed":
            fb["kind"] = "resource_limit"
            fb["message"] = result.reason or "killed"
        else:
            fb["kind"] = "early_exit"
            fb["message"] = ("the program ended before the tests finished (exit code %s)" % result.exit_code)
        fb["total"] = fb["passed"] + fb["failed"]
        fb["all_passed"] = False
        return fb
    kind = rec.get("kind", "other")
    if kind not in TAXONOMY and kind != "pass":
        kind = "other"
    passed, failed = int(rec.get("passed", 0)), int(rec.get("failed", 0))
    if kind in ("syntax_error", "definition_error", "missing_function", "early_exit") and failed == 0:
        failed = 1
    fb.update(kind=kind, passed=passed, failed=failed, total=passed + failed,
              all_passed=kind == "pass" and failed == 0)
    for key in ("syntax", "exception", "signature", "defined", "prompt_prepended", "harness_error"):
        if key in rec:
            fb[key] = rec[key]
    first = rec.get("first_failure")
    if first:
        fb["failing_test"] = first.get("test", "")
        fb["failing_test_line"] = first.get("line")
        if "got" in first:
            fb["got"] = first["got"]
        if "exception" in first:
            fb["exception"] = first["exception"]
        if "note" in first:
            fb["note"] = first["note"]
    offset = int(rec.get("line_offset", 0) or 0)
    if offset and isinstance(fb.get("exception"), dict) and fb["exception"].get("line"):
        fb["exception"]["line"] = max(1, fb["exception"]["line"] - offset)  # lines of the completion's code
    fb["message"] = _summary(fb)
    return fb


def _summary(fb: dict[str, Any]) -> str:
    kind = fb["kind"]
    if kind == "pass":
        return f"all {fb['passed']} tests pass"
    if kind == "syntax_error":
        s = fb.get("syntax", {})
        return f"SyntaxError: {s.get('message')} (line {s.get('line')})"
    if kind == "missing_function":
        return f"`{fb['entry_point']}` is not defined (defined: {', '.join(fb.get('defined', [])) or 'nothing'})"
    exc = fb.get("exception")
    where = f" on `{fb['failing_test']}`" if fb.get("failing_test") else ""
    if exc:
        return f"{exc.get('type')}: {exc.get('message')}{where}"
    if kind == "wrong_answer":
        return f"wrong answer{where} (returned {fb.get('got')})"
    return kind
