"""Expressions of a hint equivalent to a symbolic or irrational answer, and problems that state one."""

from __future__ import annotations

import re
from functools import lru_cache

from mentor.leakage.context import answer_context, normalise_hint
from mentor.mathtext.answer import Answer, analyse_answer
from mentor.mathtext.ascii import compact
from mentor.mathtext.cost import MAX_EXPR_CHARS
from mentor.mathtext.value import MATH_FN, at_points, close_enough, variables
from mentor.mathtext.verify import mv_equal, mv_parse, numeric_screen

MAX_MV_CANDIDATES = 6  # math-verify comparisons per hint at most


_RUN = re.compile(r"(?:(?:sqrt|floor|ceil|binom)(?=\s*\()|C(?=\()|%s|(?<![A-Za-z])(?:[A-Za-z]|pi|oo)(?![A-Za-z])"
                  r"|[\d_^*/+\-()!%%]|\.(?=\d)|,(?!\s)|[ \t])+" % MATH_FN)


def math_runs(t: str) -> list[tuple[str, int, int]]:
    """(expression, start, end) of each run of math in a normalised hint, split at `=`, `<`, `>`."""
    out = []
    for m in _RUN.finditer(t):
        for piece in re.finditer(r"[^=<>]+", m.group()):
            text = piece.group()
            stripped = text.strip(" \t.,")
            if stripped and len(stripped) <= MAX_EXPR_CHARS:
                start = m.start() + piece.start() + text.find(stripped)
                out.append((stripped, start, start + len(stripped)))
    return out


def symbolic_leak(t: str, ans: Answer, literal_only: bool = False) -> str | None:
    """An expression of the normalised hint `t` equivalent to the symbolic or irrational answer, or None.
    Expressions are compared as text, then (unless `literal_only`) by exact values at fixed points;
    math-verify is the fallback for answers this module cannot evaluate."""
    target, fallback = compact(ans.symbolic), []
    for cand, start, end in math_runs(t):
        if ans.short and not answer_context(t, start, end):
            continue
        if compact(cand) == target:
            return cand
        if literal_only or variables(cand) != ans.symbols or not re.search(r"[\d^/*+\-(]", cand):
            continue
        if ans.samples is None:
            if not re.search(r"\.\.\.|…|±", ans.symbolic):  # forms math-verify cannot compare either
                fallback.append(cand)
            continue
        got = at_points(cand, ans.symbols)
        if got is not None and all(close_enough(x, y) for x, y in zip(ans.samples, got)):
            return cand
    gold = list(_symbolic_gold(ans.symbolic)) if fallback else []
    for cand in sorted(fallback, key=len, reverse=True)[:MAX_MV_CANDIDATES]:
        got = mv_parse(cand)
        try:
            if gold and got and numeric_screen(gold[0], got[0]) and mv_equal(gold, got):
                return cand
        except Exception:
            continue
    return None


@lru_cache(maxsize=1024)
def _symbolic_gold(answer: str) -> tuple:
    return tuple(mv_parse(answer))


@lru_cache(maxsize=1024)
def problem_states_answer(problem: str, answer: str) -> bool:
    """Whether the problem text holds an expression equivalent to a symbolic answer (`factor x^9+x^4-x-1`):
    then rewriting the problem's expression is no leak, and only a literal copy of the answer counts."""
    ans = analyse_answer(answer)
    if ans.samples is None:
        return False
    for cand, _, _ in math_runs(normalise_hint(problem)):
        if variables(cand) == ans.symbols and re.search(r"[\d^/*+\-(]", cand):
            got = at_points(cand, ans.symbols)
            if got is not None and all(close_enough(x, y) for x, y in zip(ans.samples, got)):
                return True
    return False
