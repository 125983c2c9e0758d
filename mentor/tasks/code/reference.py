"""Reading the reference: the tests' calls and expected values, the canonical solution and its features."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any


def candidate_calls(test: str, entry_point: str) -> list[dict[str, Any]]:
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


def solution_code(reference: dict[str, Any]) -> str:
    for key in _SOLUTION_KEYS:
        v = reference.get(key)
        if isinstance(v, str) and v.strip():
            return v
    return ""


def solution_features(solution: str, prompt: str = "") -> list[tuple[str, str]]:
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
