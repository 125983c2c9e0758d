"""The code task's own leak detectors, run after the generic ones of `mentor.leakage`."""

from __future__ import annotations

import ast
import re
from typing import Any

from mentor.leakage.fold import fold_for_detectors
from mentor.tasks.code.copies import solution_copy
from mentor.tasks.code.extract import prompt_code
from mentor.tasks.code.reference import candidate_calls, solution_code
from mentor.types import LeakVerdict

_COMMON_LITERALS = {"true", "false", "none", "0", "1", "-1", "2", "[]", "()", "{}", "''", '""', "0.0", "1.0"}


def _nospace(s: str) -> str:
    return re.sub(r"\s+", "", s).lower()


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
            except (SyntaxError, ValueError, RecursionError, MemoryError):  # 4,000 nested brackets: RecursionError
                code = False
        run = run + 1 if code else 0
        if run >= 2:
            return True
    return False


def test_output_leak(hint: str, test: str, entry: str) -> str:
    hint_ns = _nospace(hint)
    hint_tokens = set(re.findall(r"-?\d+(?:\.\d+)?|\w+|'[^']*'|\"[^\"]*\"", hint.lower()))
    for case in candidate_calls(test, entry):
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


def code_leak_check(hint: str, reference: dict[str, Any]) -> LeakVerdict:
    """Code in the hint, a copied line or run of the reference solution, or a hidden test's expected output."""
    hint = fold_for_detectors(hint)  # `\u200b` inside a copied line hides it from `_nospace` alone
    detectors, reasons = [], []
    if _looks_like_code(hint):
        detectors.append("code_in_hint")
        reasons.append("the hint contains code (a code block or lines of Python)")
    solution = solution_code(reference)
    copied = solution_copy(hint, solution, prompt_code(reference.get("prompt", ""))) if solution else ""
    if copied:
        detectors.append("solution_copy")
        reasons.append(copied)
    test = reference.get("test")
    if isinstance(test, str) and test:
        hit = test_output_leak(hint, test, reference.get("entry_point", ""))
        if hit:
            detectors.append("test_output")
            reasons.append(hit)
    return LeakVerdict(bool(detectors), detectors, "; ".join(reasons))
