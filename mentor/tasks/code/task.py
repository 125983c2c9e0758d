"""The code task adapter: runs completions in the sandbox (cached), and the four nodes' rules."""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import Counter, OrderedDict
from typing import Any

from mentor.sandbox.harness import harness_source
from mentor.tasks.base import Task, completion_text
from mentor.tasks.code.extract import extract_code, prompt_code
from mentor.tasks.code.feedback import feedback_from_run
from mentor.tasks.code.hints import compose_hint, most_common_detail
from mentor.tasks.code.leaks import code_leak_check
from mentor.tasks.code.program import build_program
from mentor.tasks.code.taxonomy import TAXONOMY
from mentor.types import Attempt, Diagnosis, FailedGroup, InputError, LeakVerdict

_CACHE: OrderedDict[str, dict[str, Any]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


class CodeTask(Task):
    """Python code generation checked by tests in the sandbox.

    Args:
        partial_credit: reward the share of passed asserts instead of all-or-nothing.
        timeout_s: wall-clock limit per completion.
        memory_mb: memory limit per completion.
        pool: a `mentor.sandbox.SandboxPool`, best started with `prelude=harness_source()` (default: the
            process-wide pool with that prelude).
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
            return get_pool(prelude=harness_source())
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
        counted in `mentor/reward_no_reference` (mentor/rewards.py): a row without tests must not pay, nor stop the run."""
        refs = self.references_from_columns(len(completions), map_prompt_column(columns))
        scored = [i for i, ref in enumerate(refs) if not self.missing_reference(ref)]
        out: list[float | None] = [None] * len(refs)
        for i, fb in zip(scored, self.run_many([completions[i] for i in scored], [refs[i] for i in scored])):
            out[i] = self.reward_of(fb, partial_credit)
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
        top = self.dominant_class(counts)  # the analyst node's `error_class`: one tie-break for both
        fbs = [a.feedback or {} for a, c in zip(group.attempts, classes) if c == top]
        share = f" ({counts[top]} of {len(classes)} attempts)" if len(classes) > 1 else ""
        detail = most_common_detail(top, fbs)
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

    def compose(self, group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
        return compose_hint(group, diagnosis, tier, feedback)

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict:
        return code_leak_check(hint, reference)


def map_prompt_column(columns: dict[str, Any]) -> dict[str, Any]:
    """TRL passes the prompt column as `prompts`; the task reads it as `prompt`."""
    if "prompt" not in columns and "prompts" in columns:
        columns = dict(columns)
        columns["prompt"] = columns["prompts"]
    return columns
