"""The `code` task: Python problems with a prompt, tests and an entry point (HumanEval, MBPP-style).

The reward runs each completion against the problem's tests in the sandbox (`mentor.sandbox`): 1.0
when every test passes, else 0.0, or the share of passed asserts with `partial_credit=True`. The
trainer never execs model code; the test harness (`mentor.sandbox.harness`) runs inside the sandbox
and reports through a nonce-tagged record, so an early exit cannot earn a pass.

    from mentor.rewards import code_reward            # TRL reward function (columns test, entry_point)
    from mentor.rewards import code_reward_partial    # the same with partial credit
"""

from __future__ import annotations

import ast
import hashlib
import re
import secrets
import threading
from collections import Counter, OrderedDict
from functools import lru_cache
from typing import Any

from mentor.sandbox.harness import PROGRESS_TAG, RESULT_TAG, harness_source, prompt_params, rewrite_tests
from mentor.tasks.base import Task, completion_text, log_no_reference
from mentor.types import Attempt, Diagnosis, FailedGroup, InputError, LeakVerdict

TAXONOMY = {
    "no_code": "the completion contains no code",
    "syntax_error": "the code does not parse",
    "missing_function": "the function the tests call is not defined",
    "wrong_signature": "the function is defined with parameters the tests do not call it with",
    "definition_error": "the code fails while being defined (a top-level statement or an import)",
    "early_exit": "the program exits before the tests finish (exit(), sys.exit, os._exit, a signal)",
    "runtime_error": "the function raises an exception on a test input",
    "wrong_answer": "the function returns a wrong value on a test",
    "timeout": "the code does not finish in time (an infinite loop or an algorithm too slow)",
    "resource_limit": "the code exceeds the memory, output or process limits",
    "other": "a failure of another kind (or an attempt that passed)",
}
# When attempts disagree, the most frequent class wins; ties go to the earliest class here (the one
# that blocks the others: code that does not parse cannot reach a wrong answer).
_PRIORITY = ["no_code", "syntax_error", "missing_function", "wrong_signature", "definition_error",
             "early_exit", "timeout", "resource_limit", "runtime_error", "wrong_answer", "other"]


# ------------------------------------------------------------------------------------------------------
# Extracting code from a completion

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
_CODE_HINT = re.compile(r"^\s*(def |class |import |from \S+ import |return\b|for |while |if )", re.M)


def extract_code(text: str, entry_point: str | None = None) -> str | None:
    """The Python code of a completion: the fenced block that defines `entry_point` (else the python
    blocks joined), or the plain text when it looks like code; None when there is no code.
    An unclosed fence (a truncated generation) runs to the end of the text."""
    if not isinstance(text, str):
        text = completion_text(text)
    text = _THINK.sub("", text)
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    if blocks:
        python = [b for lang, b in blocks if lang in ("", "python", "py", "python3")] or [b for _, b in blocks]
        if entry_point:
            for b in python:
                if re.search(rf"^\s*(async\s+)?def\s+{re.escape(entry_point)}\s*\(", b, re.M):
                    return b.strip("\n") + "\n"
        code = "\n".join(b.strip("\n") for b in python if b.strip())
        return code + "\n" if code.strip() else None
    if not text.strip():
        return None
    if _CODE_HINT.search(text) or text.startswith((" ", "\t")):
        return text if text.endswith("\n") else text + "\n"
    return None


def prompt_code(prompt: Any) -> str:
    """The code part of a problem prompt (HumanEval's prompt is code; a chat prompt may fence it)."""
    text = completion_text(prompt) if not isinstance(prompt, str) else prompt
    if not text:
        return ""
    if "```" in text:
        return extract_code(text) or ""
    return text


# ------------------------------------------------------------------------------------------------------
# Running one completion

@lru_cache(maxsize=1)
def _program_head() -> str:
    """The start of every program: the harness from the workers' prelude, else from its source (formatted once)."""
    return "try:\n    from mentor_prelude import mentor_harness\nexcept ImportError:\n    exec(%r)\n" % harness_source()


def build_program(code: str, test: str, entry_point: str, prompt: str = "", nonce: str = "") -> str:
    """The sandboxed program that runs `code` against `test`. The harness comes precompiled from the
    workers' prelude; its source rides along as a string (cheap to compile) for pools without it."""
    rewritten, n_asserts = rewrite_tests(test)
    return _program_head() + ("mentor_harness(%r, %r, %r, %r, %r, %r, %r, %r)\n"
                              % (nonce, code, prompt or "", test, rewritten, n_asserts, entry_point,
                                 prompt_params(prompt, entry_point) if prompt else None))


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


# ------------------------------------------------------------------------------------------------------
# Reading the reference: tests, canonical solution


def _candidate_calls(test: str, entry_point: str) -> list[dict[str, Any]]:
    """The asserts of `test` that call the function: the call's source and the expected value's source."""
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return []
    names = {"candidate", entry_point}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        calls = [n for n in ast.walk(node.test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id in names]
        if not calls:
            continue
        inside = {id(x) for c in calls for x in ast.walk(c)}
        expected = []
        for n in ast.walk(node.test):
            if id(n) in inside:
                continue
            if isinstance(n, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)) or (
                    isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant)):
                seg = ast.get_source_segment(test, n)
                if seg is not None:
                    expected.append(seg)
        out.append({"calls": [ast.get_source_segment(test, c) or "" for c in calls],
                    "args": [", ".join(ast.get_source_segment(test, a) or "" for a in c.args) for c in calls],
                    "expected": expected, "line": node.lineno})
    return out


_SOLUTION_KEYS = ("canonical_solution", "solution")


def _solution_code(reference: dict[str, Any]) -> str:
    for key in _SOLUTION_KEYS:
        v = reference.get(key)
        if isinstance(v, str) and v.strip():
            return v
    return ""


def _features(solution: str, prompt: str = "") -> list[tuple[str, str]]:
    """What a correct solution uses, in words (no code): (short name, phrase)."""
    full = solution
    try:
        tree = ast.parse(full)
    except SyntaxError:
        try:
            tree = ast.parse((prompt if prompt.endswith("\n") else prompt + "\n") + solution)
        except SyntaxError:
            return []
    found: list[tuple[str, str]] = []
    calls = Counter()
    loops = 0
    nested = False
    recursion = False
    fn_names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            calls[name] += 1
            if name in fn_names:
                recursion = True
        if isinstance(n, (ast.For, ast.While, ast.comprehension)):
            loops += 1
            for m in ast.walk(n):
                if m is not n and isinstance(m, (ast.For, ast.While, ast.comprehension)):
                    nested = True
    table = [
        (("sorted", "sort"), "sorting", "sort the values first, so that neighbours or extremes are easy to find"),
        (("set",), "a set", "a set to remember what has been seen"),
        (("Counter", "count"), "counting", "count how often each item occurs"),
        (("dict", "get", "items"), "a dictionary", "a dictionary that maps each key to what you need"),
        (("enumerate",), "indices", "walk through the items together with their positions"),
        (("zip",), "pairs", "walk through two sequences side by side"),
        (("split", "join"), "string splitting", "split the text into parts and join the result"),
        (("abs",), "absolute values", "absolute differences"),
        (("min", "max"), "extremes", "the smallest or largest value"),
        (("sum",), "sums", "a running or total sum"),
        (("isdigit", "isalpha", "isupper", "islower", "lower", "upper", "ord", "chr"), "characters",
         "test or convert each character"),
        (("range",), "a counted loop", "a loop over the needed range of positions or values"),
        (("any", "all"), "a condition over all items", "check a condition over every item"),
    ]
    for names, short, phrase in table:
        if any(calls[n] for n in names):
            found.append((short, phrase))
    if nested:
        found.append(("nested loops", "compare every pair of items with two nested loops"))
    elif loops:
        found.append(("a loop", "a single pass over the input"))
    if recursion:
        found.append(("recursion", "a recursive helper"))
    if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(tree)):
        found.append(("remainders", "the remainder operator to test divisibility or wrap around"))
    if any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) and n.slice.step is not None
           for n in ast.walk(tree)):
        found.append(("slicing", "slicing with a step (for instance to reverse)"))
    return found[:4]


# ------------------------------------------------------------------------------------------------------
# Leak detection helpers

_COMMON_LITERALS = {"true", "false", "none", "0", "1", "-1", "2", "[]", "()", "{}", "''", '""', "0.0", "1.0"}


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip().lower()


def _nospace(s: str) -> str:
    return re.sub(r"\s+", "", s).lower()


def _code_tokens(text: str) -> list[str]:
    """Tokens of code or prose, identifiers folded to ID (so renamed variables still match)."""
    import keyword
    out = []
    for m in re.finditer(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?|==|!=|<=|>=|//|\*\*|[-+*/%<>=()\[\]{}:,.]", text):
        t = m.group(0)
        if re.match(r"[A-Za-z_]", t) and not keyword.iskeyword(t):
            t = "ID"
        out.append(t)
    return out


def _longest_code_run(a: list[str], b: list[str]) -> int:
    """Longest common run of tokens with at least three symbols (so prose alone never matches)."""
    if not a or not b:
        return 0
    best = 0
    prev = [0] * (len(b) + 1)
    sym_prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        sym = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                sym[j] = sym_prev[j - 1] + (0 if ai == "ID" or ai.isalnum() else 1)
                if sym[j] >= 3 and cur[j] > best:
                    best = cur[j]
        prev, sym_prev = cur, sym
    return best


def _looks_like_code(hint: str) -> bool:
    if "```" in hint:
        return True
    lines = [ln for ln in hint.splitlines() if ln.strip()]
    run = 0
    for ln in lines:
        s = ln.strip()
        code = False
        if re.match(r"(def|for|while|if|elif|else|return|import|from|class|try|except|with)\b", s) or \
                re.search(r"[=(\[]", s):
            try:
                ast.parse(s + ("\n    pass" if s.endswith(":") else ""))
                code = bool(re.search(r"[=():\[\]]", s))
            except SyntaxError:
                code = False
        run = run + 1 if code else 0
        if run >= 2:
            return True
    return False


# ------------------------------------------------------------------------------------------------------
# The task


_CACHE: OrderedDict[str, dict[str, Any]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


class CodeTask(Task):
    """Python code generation checked by tests in the sandbox.

    Args:
        partial_credit: reward the share of passed asserts instead of all-or-nothing.
        timeout_s: wall-clock limit per completion.
        memory_mb: memory limit per completion.
        pool: a `mentor.sandbox.SandboxPool` (default: the process-wide pool).
        cache_size: feedback kept per (code, tests), so no completion runs twice.
    """

    name = "code"
    taxonomy = TAXONOMY
    reference_fields = ("test", "entry_point")
    optional_reference_fields = ("prompt", "canonical_solution", "solution", "task_id")

    def __init__(self, partial_credit: bool = False, timeout_s: float = 5.0, memory_mb: int = 512,
                 pool: Any = None, cache_size: int = 4096):
        self.partial_credit = partial_credit
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self._pool = pool
        # Shared by every CodeTask of the process (the key holds the limits), so feedback the mentor
        # asks for is free when `code_reward` already ran that completion.
        self._cache = _CACHE
        self._cache_size = cache_size
        self._lock = _CACHE_LOCK

    # --- running ---------------------------------------------------------------------------------------
    @property
    def pool(self):
        if self._pool is None:
            from mentor.sandbox import get_pool
            return get_pool()
        return self._pool

    def _key(self, code: str, reference: dict[str, Any]) -> str:
        h = hashlib.sha256()
        for part in (code, reference.get("test", ""), reference.get("entry_point", ""),
                     prompt_code(reference.get("prompt", "")), repr(self.timeout_s), repr(self.memory_mb)):
            h.update(str(part).encode("utf-8", "replace"))
            h.update(b"\x00")
        return h.hexdigest()

    def run_many(self, completions: list[Any], references: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Feedback for each (completion, reference), running what is not cached concurrently."""
        out: list[dict[str, Any] | None] = [None] * len(completions)
        jobs = []
        for i, (c, ref) in enumerate(zip(completions, references)):
            missing = self.missing_reference(ref)
            if missing:
                raise InputError(f"code problem lacks {missing}: the code task needs 'test' and 'entry_point'")
            text = completion_text(c)
            code = extract_code(text, ref["entry_point"])
            if code is None:
                out[i] = {"kind": "no_code", "passed": 0, "failed": 1, "total": 1, "all_passed": False,
                          "status": "not run", "entry_point": ref["entry_point"],
                          "message": "no code found in the completion"}
                continue
            key = self._key(code, ref)
            with self._lock:
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
            if hit is not None:
                out[i] = dict(hit)
                continue
            nonce = secrets.token_hex(16)
            try:
                program = build_program(code, ref["test"], ref["entry_point"], prompt_code(ref.get("prompt", "")),
                                        nonce)
            except SyntaxError as e:  # the dataset's tests, not the completion: no completion could pass them
                raise InputError(f"the 'test' of the code problem with entry_point {ref['entry_point']!r} is not valid "
                                 f"Python (line {e.lineno}: {e.msg}); fix or drop that dataset row") from None
            jobs.append((i, key, nonce, program, ref))
        if jobs:
            results = self.pool.map([j[3] for j in jobs], timeout_s=self.timeout_s, memory_mb=self.memory_mb)
            for (i, key, nonce, _, ref), r in zip(jobs, results):
                fb = feedback_from_run(r, nonce, ref["test"], ref["entry_point"])
                out[i] = fb
                if fb.get("status") in ("ok", "error", "timeout") or fb["kind"] == "resource_limit":
                    with self._lock:
                        self._cache[key] = dict(fb)
                        while len(self._cache) > self._cache_size:
                            self._cache.popitem(last=False)
        return out  # type: ignore[return-value]

    def reward_of(self, fb: dict[str, Any], partial_credit: bool | None = None) -> float:
        partial = self.partial_credit if partial_credit is None else partial_credit
        if fb.get("all_passed"):
            return 1.0
        if partial and fb.get("total"):
            return round(fb.get("passed", 0) / fb["total"], 6)
        return 0.0

    # --- training ----------------------------------------------------------------------------------------
    def reward(self, completions: list[Any], partial_credit: bool | None = None, **columns: Any) -> list[float | None]:
        """Rewards of a batch; None (unscorable to TRL) for a row whose `test` or `entry_point` is None, NaN or blank,
        counted in `mentor/reward_no_reference`: a row without tests must not pay, nor stop the run."""
        refs = self.references_from_columns(len(completions), _map_prompt_column(columns))
        scored = [i for i, ref in enumerate(refs) if not self.missing_reference(ref)]
        out: list[float | None] = [None] * len(refs)
        for i, fb in zip(scored, self.run_many([completions[i] for i in scored], [refs[i] for i in scored])):
            out[i] = self.reward_of(fb, partial_credit)
        log_no_reference(out, columns.get("log_metric"))
        return out

    def score(self, completion: str, reference: dict[str, Any]) -> float:
        return self.reward_of(self.run_many([completion], [reference])[0])

    # --- the four nodes' rules ---------------------------------------------------------------------------
    def feedback(self, completion: str, reference: dict[str, Any]) -> dict[str, Any]:
        return self.run_many([completion], [reference])[0]

    def classify(self, attempt: Attempt, reference: dict[str, Any]) -> str:
        fb = attempt.feedback
        if not isinstance(fb, dict) or "kind" not in fb:
            fb = self.feedback(attempt.completion, reference)
            attempt.feedback = fb
        kind = fb.get("kind", "other")
        return kind if kind in TAXONOMY else "other"

    def analyse(self, group: FailedGroup, classes: list[str]) -> tuple[str, int | None]:
        ref = group.reference
        entry = ref.get("entry_point", "the function")
        if not classes:
            return "no attempts to analyse", None
        counts = Counter(classes)
        top = min(counts, key=lambda c: (-counts[c], _PRIORITY.index(c) if c in _PRIORITY else 99))
        fbs = [a.feedback or {} for a, c in zip(group.attempts, classes) if c == top]
        share = f" ({counts[top]} of {len(classes)} attempts)" if len(classes) > 1 else ""
        detail = _most_common_detail(top, fbs)
        call = detail.get("call")
        step = None
        if top == "no_code":
            cause = "the attempts contain no code, only prose"
        elif top == "syntax_error":
            s = detail.get("syntax") or {}
            step = s.get("line")
            cause = f"the code does not parse: {s.get('message', 'invalid syntax')} at line {s.get('line')}"
        elif top == "missing_function":
            names = ", ".join(detail.get("defined") or []) or "nothing callable"
            cause = f"the code never defines `{entry}` (it defines {names})"
        elif top == "wrong_signature":
            e = detail.get("exception") or {}
            sig = (detail.get("signature") or {}).get("got")
            cause = f"`{entry}` is defined with parameters the tests do not use" + (f" ({sig})" if sig else "") + \
                (f": {e.get('type')}: {e.get('message')}" if e else "")
        elif top == "definition_error":
            e = detail.get("exception") or {}
            step = e.get("line")
            cause = f"the code fails before the tests run: {e.get('type')}: {e.get('message')}"
        elif top == "early_exit":
            cause = "the code ends the process (exit, sys.exit, os._exit) before the tests finish"
        elif top == "timeout":
            cause = f"`{entry}` does not finish in time" + (f" on `{call}`" if call else "") + \
                ": an infinite loop or an algorithm too slow for the input"
        elif top == "resource_limit":
            cause = f"the code exceeds a resource limit ({detail.get('message', 'memory or output')})"
        elif top == "runtime_error":
            e = detail.get("exception") or {}
            step = e.get("line")
            cause = f"`{entry}` raises {e.get('type', 'an exception')} ({e.get('message', '')})" + \
                (f" when called as `{call}`" if call else "") + (f", at line {step} of the code" if step else "")
        elif top == "wrong_answer":
            cause = f"`{entry}` returns a wrong value" + (f" for `{call}`" if call else "") + \
                (f" (it returned {detail['got']})" if detail.get("got") else "")
            if detail.get("note"):
                cause += f"; {detail['note']}"
        else:
            cause = "the attempts fail for a reason the verifier did not recognise"
        return cause + share, step

    def choose_tier(self, group: FailedGroup, diagnosis: Diagnosis, retry: int) -> int:
        return super().choose_tier(group, diagnosis, retry)

    def compose(self, group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
        ref = group.reference
        entry = ref.get("entry_point", "the function")
        cls = diagnosis.error_class if diagnosis.error_class in TAXONOMY else "other"
        fbs = [a.feedback or {} for a in group.attempts if (a.feedback or {}).get("kind") == cls] or \
            [a.feedback or {} for a in group.attempts]
        detail = _most_common_detail(cls, fbs)
        # After a leak verdict, say less: no concrete call, no returned value, no solution features.
        careful = feedback is not None
        call = None if careful else detail.get("call")
        got = None if careful else detail.get("got")
        feats = [] if careful else _features(_solution_code(ref), prompt_code(ref.get("prompt", "")))
        approach = (" A correct solution can use " + " and ".join(p for _, p in feats[:2]) + ".") if feats else ""
        first_step = (" Start with this step: " + feats[0][1] + ".") if feats else ""
        params = _params_from_prompt(ref.get("prompt", ""), entry)
        on = f" on `{call}`" if call else " on one of the tests"
        tier = max(1, min(3, int(tier)))

        if cls == "no_code":
            hints = ["Answer with Python code, not only an explanation.",
                     f"Write the complete function `{entry}` in a single ```python block.",
                     f"Give the full definition of `{entry}`" + (f" with parameters {params}" if params else "")
                     + " in one ```python block, with no text inside the block."]
        elif cls == "syntax_error":
            s = detail.get("syntax") or {}
            where = f"line {s.get('line')}" if s.get("line") else "one line"
            hints = ["The code must be valid Python: check indentation, brackets, quotes and colons.",
                     f"Your code does not parse at {where}: {s.get('message', 'invalid syntax')}.",
                     f"Fix {where} ({s.get('message', 'invalid syntax')}); check that every block header ends "
                     "with a colon and every bracket and string is closed."]
        elif cls == "missing_function":
            hints = [f"The tests call a function named `{entry}`; your code must define it under exactly that name.",
                     f"Define `{entry}` itself (your code defines "
                     f"{', '.join(detail.get('defined') or []) or 'no function'}), with the parameters from the problem.",
                     f"Name the function `{entry}`" + (f" and give it the parameters {params}" if params else "")
                     + ", as in the problem statement; keep any helpers as separate functions."]
        elif cls == "wrong_signature":
            hints = ["Check how the function is called: the number and order of its parameters must match the problem.",
                     f"The tests call `{entry}`" + (f" with the parameters {params}" if params else "")
                     + "; your definition does not accept that call.",
                     f"Define `{entry}` with exactly the parameters " + (params or "given in the problem statement")
                     + ", in that order, and no extra required ones."]
        elif cls == "definition_error":
            e = detail.get("exception") or {}
            hints = ["Only define the function: code at the top level runs before any test and must not fail.",
                     f"Your code fails before `{entry}` is called ({e.get('type')}: {e.get('message')}); "
                     "remove top-level examples, input() calls and imports of modules that are not in the "
                     "standard library.",
                     f"Keep only imports from the standard library and the definition of `{entry}` at the top level; "
                     f"the failing statement is at line {e.get('line')}." if e.get("line") else
                     f"Keep only standard-library imports and the definition of `{entry}` at the top level."]
        elif cls == "early_exit":
            hints = ["Do not end the program: no exit(), sys.exit() or os._exit(); just define the function.",
                     f"Return values from `{entry}` instead of printing them and exiting.",
                     f"Remove every call that stops the interpreter and make `{entry}` return its result."]
        elif cls == "timeout":
            hints = ["Make sure every loop ends: each iteration must move toward the exit condition, and the "
                     "algorithm must be fast enough for the input sizes.",
                     f"Your function does not finish{on}. Check each loop's condition and what changes in it; "
                     "if it does finish, the approach is too slow." + approach,
                     f"Trace{on} by hand for a few iterations and watch the loop variable: find why it never reaches "
                     "the stop condition." + first_step]
        elif cls == "resource_limit":
            hints = ["Use memory proportional to the input: avoid building huge lists or strings.",
                     f"Your code exceeds the limits ({detail.get('message', 'memory or output')}); do not print in loops "
                     "and do not create very large intermediate structures.",
                     "Compute the result incrementally instead of materialising every intermediate value." + first_step]
        elif cls == "runtime_error":
            e = detail.get("exception") or {}
            etype = e.get("type", "an exception")
            concept = _EXC_CONCEPT.get(etype, "Check which inputs your code can receive and make sure every "
                                              "operation is valid for all of them, including edge cases.")
            hints = [concept,
                     f"Your function raises {etype}{on}. Find which operation fails for that input and handle "
                     "that case before it." + approach,
                     f"Trace{on} by hand" + (f" up to line {e.get('line')}" if e.get("line") and not careful else "")
                     + f": see why {etype} is raised there, handle that input first, then keep your logic for the "
                     "general case." + first_step]
        elif cls == "wrong_answer":
            got_s = f" (your code returns {got})" if got and len(str(got)) <= 60 else ""
            hints = ["Re-read the specification and its examples: check exactly what must be returned, including "
                     "edge cases and the type of the result.",
                     f"Your function returns a wrong value{on}{got_s}. Work through that input by hand against the "
                     "problem statement to see where your logic departs from it." + approach,
                     f"Trace{on} step by step and compare each intermediate value with what the statement implies; "
                     "the first step that differs is the one to fix." + first_step]
        else:
            hints = ["Re-read the problem statement and test your function on its examples.",
                     "Check the edge cases: empty inputs, single elements, negative numbers." + approach,
                     "Work through one example by hand and compare with your code." + first_step]
        return hints[tier - 1]

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict:
        detectors, reasons = [], []
        if _looks_like_code(hint):
            detectors.append("code_in_hint")
            reasons.append("the hint contains code (a code block or lines of Python)")
        solution = _solution_code(reference)
        if solution:
            public = {_norm(ln) for ln in prompt_code(reference.get("prompt", "")).splitlines()}
            hint_ns = _nospace(hint)
            for ln in solution.splitlines():
                n = _norm(ln)
                if len(n) >= 12 and n not in public and _nospace(ln) in hint_ns:
                    detectors.append("solution_copy")
                    reasons.append(f"the hint copies a line of the reference solution ({ln.strip()[:60]!r})")
                    break
            else:
                run = _longest_code_run(_code_tokens(hint), _code_tokens(solution))
                if run >= 8:
                    detectors.append("solution_copy")
                    reasons.append(f"the hint reproduces {run} consecutive tokens of the reference solution")
        test = reference.get("test")
        if isinstance(test, str) and test:
            hit = _test_output_leak(hint, test, reference.get("entry_point", ""))
            if hit:
                detectors.append("test_output")
                reasons.append(hit)
        return LeakVerdict(bool(detectors), detectors, "; ".join(reasons))


_EXC_CONCEPT = {
    "IndexError": "Think about the boundary cases of the input, such as an empty or one-element sequence: "
                  "every index you use must exist.",
    "KeyError": "A dictionary lookup fails when the key is missing: decide what should happen for keys you "
                "have not stored yet.",
    "ZeroDivisionError": "Division by zero happens when a divisor can be 0, for example the length of an "
                         "empty input: handle that case separately.",
    "TypeError": "Check the types you combine: mixing numbers, strings, lists or None in one operation fails.",
    "ValueError": "A conversion or unpacking fails on some inputs: check what values can actually occur.",
    "AttributeError": "A value is not the type you expect (for example None, or a list instead of a string).",
    "RecursionError": "A recursion needs a base case that every call eventually reaches.",
    "NameError": "A name is used before it is defined, or it is misspelled.",
    "UnboundLocalError": "A variable is read before it is assigned in some path through the function.",
    "StopIteration": "An iterator is exhausted: check what happens when there are no more items.",
}


def _most_common_detail(cls: str, fbs: list[dict[str, Any]]) -> dict[str, Any]:
    """The feedback of the attempt with the most common concrete detail for the class, plus `call`."""
    if not fbs:
        return {}
    def key(fb):
        e = fb.get("exception") or {}
        return (e.get("type"), fb.get("failing_test"), (fb.get("syntax") or {}).get("message"))
    counts = Counter(key(fb) for fb in fbs)
    best = max(fbs, key=lambda fb: counts[key(fb)])
    out = dict(best)
    test = best.get("failing_test") or ""
    m = re.search(r"(candidate|[A-Za-z_]\w*)\s*\(", test)
    if m:
        call = _balanced_call(test, m.start())
        if call and len(call) <= 160:
            out["call"] = call
    return out


def _balanced_call(text: str, start: int) -> str | None:
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def _params_from_prompt(prompt: Any, entry: str) -> str:
    code = prompt_code(prompt)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        m = re.search(rf"def\s+{re.escape(entry)}\s*\(([^)]*)\)", code or "")
        return f"({m.group(1)})" if m else ""
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry:
            return "(" + ", ".join(a.arg for a in n.args.posonlyargs + n.args.args) + ")"
    return ""


def _test_output_leak(hint: str, test: str, entry: str) -> str:
    hint_ns = _nospace(hint)
    hint_tokens = set(re.findall(r"-?\d+(?:\.\d+)?|\w+|'[^']*'|\"[^\"]*\"", hint.lower()))
    for case in _candidate_calls(test, entry):
        for exp in case["expected"]:
            e = _nospace(exp)
            if not e:
                continue
            bare = e.strip("'\"")
            distinctive = e not in _COMMON_LITERALS and (len(e) >= 4 or
                                                        (e[:1] in "'\"" and len(bare) >= 3))
            if distinctive and (e in hint_ns or (e[:1] in "'\"" and len(bare) >= 4 and bare in hint_ns)):
                return f"the hint states the expected output {exp[:60]!r} of a hidden test"
            # A short expected value counts when the test's input is given with it.
            args = [_nospace(a) for a in case["args"] if len(_nospace(a)) >= 2]
            short_hit = e in hint_tokens or bare in hint_tokens or e in hint_ns and len(e) >= 3
            if short_hit and args and any(a in hint_ns for a in args):
                return f"the hint gives a hidden test's input together with its expected output {exp[:40]!r}"
    return ""


def _map_prompt_column(columns: dict[str, Any]) -> dict[str, Any]:
    """TRL passes the prompt column as `prompts`; the task reads it as `prompt`."""
    if "prompt" not in columns and "prompts" in columns:
        columns = dict(columns)
        columns["prompt"] = columns["prompts"]
    return columns


__all__ = ["TAXONOMY", "CodeTask", "build_program", "extract_code", "feedback_from_run"]
