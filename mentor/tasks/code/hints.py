"""The code task's hints, one per error class and tier, and the concrete detail they name."""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any

from mentor.tasks.base import clamp_tier
from mentor.tasks.code.extract import prompt_code
from mentor.tasks.code.reference import solution_code, solution_features
from mentor.tasks.code.taxonomy import TAXONOMY
from mentor.types import Diagnosis, FailedGroup


def compose_hint(group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
    """A hint at `tier` for the group's dominant error class; `feedback` (a leak verdict's reason) makes it say less."""
    ref = group.reference
    entry = ref.get("entry_point", "the function")
    cls = diagnosis.error_class if diagnosis.error_class in TAXONOMY else "other"
    fbs = [a.feedback or {} for a in group.attempts if (a.feedback or {}).get("kind") == cls] or \
        [a.feedback or {} for a in group.attempts]
    detail = most_common_detail(cls, fbs)
    # After a leak verdict, say less: no concrete call, no returned value, no solution features.
    careful = feedback is not None
    call = None if careful else detail.get("call")
    got = None if careful else detail.get("got")
    feats = [] if careful else solution_features(solution_code(ref), prompt_code(ref.get("prompt", "")))
    approach = (" A correct solution can use " + " and ".join(p for _, p in feats[:2]) + ".") if feats else ""
    first_step = (" Start with this step: " + feats[0][1] + ".") if feats else ""
    params = _params_from_prompt(ref.get("prompt", ""), entry)
    on = f" on `{call}`" if call else " on one of the tests"
    tier = clamp_tier(tier)

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


def most_common_detail(cls: str, fbs: list[dict[str, Any]]) -> dict[str, Any]:
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
