"""The test harness that runs *inside* the sandbox for the `code` task: source text, never imported by
the trainer for execution (`harness_source()` reads this file; `mentor_harness` is defined and called
only in the sandboxed program).

What it does, in one program:
1. picks the code to run: the completion alone when it defines the entry point (after the prompt's import
   lines, as prompt + completion would have them), else the problem's prompt followed by the completion
   (HumanEval-style function bodies);
2. runs it as a module named `__mentor_solution__` (so `if __name__ == "__main__":` blocks stay off);
3. runs the tests in a separate namespace with a snapshot of the builtins, every `assert` rewritten into
   a counted check that records the first failure (the call, what it returned, the exception) and goes
   on, so the share of passed asserts is known;
4. writes one result record, tagged with a per-run nonce, as the last line of stdout, then `os._exit`.

A program that exits early (`sys.exit`, `os._exit`, killing itself) writes no record and earns nothing;
redefining `check` or the helpers does not help (the tests run after it, in their own namespace); a
returned object with a lying `__eq__` fails the check. Code that deliberately inspects the harness's
frames to steal the nonce could forge a record: the sandbox contains it, but the reward is then only as
trustworthy as Python's in-process isolation, which is none. docs/sandbox.md discusses this.
"""

from __future__ import annotations

import os
from functools import lru_cache

RESULT_TAG = "\x1eMENTOR-RESULT "
PROGRESS_TAG = "\x1eMENTOR-AT "


def _rewrite_asserts(tree):
    """Every `assert` becomes `_mentor_at(line)` plus a try/except that records the outcome and goes on;
    `assert x == y` keeps both sides, so the harness can check their types and report what was returned."""
    import ast

    count = [0]

    class Rewrite(ast.NodeTransformer):
        def visit_Assert(self, node):
            if isinstance(node.test, ast.Constant):  # `assert True`: nothing to count
                return ast.copy_location(ast.Pass(), node)
            count[0] += 1
            ln = ast.Constant(node.lineno)

            def call(f, args):
                return ast.Expr(ast.Call(ast.Name(f, ast.Load()), args, []))

            test = node.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                body = [ast.Assign([ast.Name("_mentor_l", ast.Store())], test.left),
                        ast.Assign([ast.Name("_mentor_r", ast.Store())], test.comparators[0])]
                after = call("_mentor_record_eq", [ast.Name("_mentor_l", ast.Load()),
                                                   ast.Name("_mentor_r", ast.Load()), ln])
            else:
                body = [ast.Assign([ast.Name("_mentor_ok", ast.Store())], test)]
                after = call("_mentor_record", [ast.Name("_mentor_ok", ast.Load()), ln])
            handler = ast.ExceptHandler(ast.Name("BaseException", ast.Load()), "_mentor_e",
                                        [call("_mentor_record_exc", [ast.Name("_mentor_e", ast.Load()), ln])])
            at = call("_mentor_at", [ln])
            return [ast.copy_location(at, node), ast.copy_location(ast.Try(body, [handler], [after], []), node)]

    # the new nodes inside `at` and the Try take the assert's location from them
    return ast.fix_missing_locations(Rewrite().visit(tree)), count[0]


@lru_cache(maxsize=4096)
def rewrite_tests(test: str) -> tuple[str, int]:
    """The tests with counted asserts, as source, and how many asserts they have. Tests are trusted
    dataset text; the rewrite runs once per distinct test in the trainer (cached), so the sandboxed
    program only compiles it. Raises SyntaxError for tests that do not parse."""
    import ast

    tree, n = _rewrite_asserts(ast.parse(test))
    return ast.unparse(tree), n


def prompt_params(prompt: str, entry_point: str) -> list[str] | None:
    """The positional parameters the prompt declares for the entry point (None if it declares none)."""
    import ast

    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            return [a.arg for a in node.args.posonlyargs + node.args.args]
    return None


def harness_source() -> str:
    """The source of `mentor_harness` (everything below the marker line in this file)."""
    with open(os.path.abspath(__file__)) as f:
        text = f.read()
    return text.split("# ---- harness (runs in the sandbox) ----\n", 1)[1]


# ---- harness (runs in the sandbox) ----
def mentor_harness(NONCE, CODE, PROMPT, TEST, TESTS_REWRITTEN, N_ASSERTS, ENTRY, EXPECTED_PARAMS,
                   MAX_DETAIL=300):
    import builtins as _b
    import linecache as _linecache
    import os as _os
    import sys as _sys
    import traceback as _tb
    import types as _types

    # Everything used after the solution has run is bound here, before it runs: patching builtins or
    # modules from the solution cannot change how the tests are counted or reported.
    _write, _exit, _repr, _len, _type, _isinstance, _str = _os.write, _os._exit, repr, len, type, isinstance, str
    _list, _dict, _sorted, _bool, _callable, _BaseException = list, dict, sorted, bool, callable, BaseException
    _getattr, _next, _extract_tb, _format_list = getattr, next, _tb.extract_tb, _tb.format_list
    _stdout, _stderr = _sys.stdout, _sys.stderr
    _builtins_snapshot = _dict(_b.__dict__)
    _FunctionType = _types.FunctionType
    _SEQS = (list, tuple, set, frozenset)
    _DICT = dict
    _PLAIN = frozenset((int, float, complex, bool, str, bytes, type(None), list, tuple, dict, set, frozenset, range,
                        _types.GeneratorType, map, filter, zip, enumerate, reversed,
                        type({}.keys()), type({}.values()), type({}.items()), type(iter([]))))
    res = {"kind": "other", "passed": 0, "failed": 0, "first_failure": None}
    counts = [0, 0]
    untrusted = []

    def short(x, n=MAX_DETAIL):
        try:
            s = _str(x)
        except _BaseException:
            s = "<unprintable>"
        return s if _len(s) <= n else s[: n - 3] + "..."

    def emit():
        res["passed"], res["failed"] = counts[0], counts[1]
        for stream in (_stdout, _stderr):
            try:
                stream.flush()
            except _BaseException:
                pass
        _write(1, ("\n" + "\x1eMENTOR-RESULT " + NONCE + " " + _repr(res) + "\n").encode("utf-8", "replace"))
        _exit(0)

    def exc_info(e, filename="<solution>"):
        try:
            frames = _extract_tb(e.__traceback__)
            mine = [f for f in frames if f.filename == filename]
            line = mine[-1].lineno if mine else None
            tail = "".join(_format_list(mine[-3:])) if mine else ""
        except _BaseException:
            mine, line, tail = [], None, ""
        name = _type(e).__name__
        return {"type": name, "message": short(e), "line": line,
                "traceback": short(tail + name + ": " + short(e), 1200), "in_solution": _bool(mine)}

    def plain(x, budget=10000):
        """Only builtin values (exact types, recursively): their == cannot be redefined by the solution."""
        stack = [x]
        while stack:
            budget -= 1
            if budget < 0:
                return True
            y = stack.pop()
            t = _type(y)
            if t not in _PLAIN:
                return False
            if t in _SEQS:
                stack.extend(y)
            elif t is _DICT:
                stack.extend(y.keys())
                stack.extend(y.values())
        return True

    # 0. the tests, compiled before any solution code runs -----------------------------------------
    test_lines = TEST.split("\n")

    def fail(lineno, got=None, exc=None, note=None):
        counts[1] += 1
        if res["first_failure"] is None:
            text = test_lines[lineno - 1].strip() if 0 < lineno <= _len(test_lines) else ""
            f = {"line": lineno, "test": short(text, 300)}
            if got is not None:
                f["got"] = got
            if exc is not None:
                f["exception"] = exc
            if note:
                f["note"] = note
            res["first_failure"] = f

    current = [0]

    def at(lineno):
        current[0] = lineno
        _write(2, ("\x1eMENTOR-AT " + NONCE + " %d %d %d\n" % (lineno, counts[0], counts[1])).encode())

    def record(ok, lineno):
        try:
            good = _bool(ok) is True
        except _BaseException as e:
            fail(lineno, exc=exc_info(e))
            return
        if good:
            counts[0] += 1
        else:
            fail(lineno)

    def record_eq(left, right, lineno):
        try:
            pl, pr = plain(left), plain(right)
            if pl != pr:
                fail(lineno, got=short(_repr(left)) if pl else "an object of type " + _type(left).__name__,
                     note="compared an object of a type defined by the solution, whose == cannot be trusted")
                return
            good = _bool(left == right) is True
        except _BaseException as e:
            fail(lineno, exc=exc_info(e))
            return
        if good:
            counts[0] += 1
        else:
            try:
                got = short(_repr(left))
            except _BaseException:
                got = "<unprintable>"
            fail(lineno, got=got)

    def record_exc(e, lineno):
        fail(lineno, exc=exc_info(e))

    try:
        tcode = compile(TESTS_REWRITTEN, "<tests>", "exec")
    except SyntaxError as e:
        res["harness_error"] = "the tests do not compile: " + short(e)
        emit()

    # 1. which code runs -------------------------------------------------------------------------
    res["stage"] = "parse"
    src, offset, err = None, 0, None
    first = _next((ln for ln in CODE.split("\n") if ln.strip()), "")
    body_only = first[:1] in (" ", "\t")
    prepended = False
    if not body_only or not PROMPT:
        try:
            compiled = compile(CODE, "<solution>", "exec")
            src = CODE
        except SyntaxError as e:
            err = e
    if src is None and PROMPT:  # not a module alone: a function body after the prompt?
        joined = PROMPT if PROMPT.endswith("\n") else PROMPT + "\n"
        try:
            compiled = compile(joined + CODE, "<solution>", "exec")
            src, offset, err, prepended = joined + CODE, joined.count("\n"), None, True
        except SyntaxError as e2:
            if body_only or err is None:  # a function body: report against prompt + body
                err, offset = e2, joined.count("\n")
    if src is None:
        line = (err.lineno or 0) - offset if err is not None else None
        res["kind"] = "syntax_error"
        res["syntax"] = {"message": short(_getattr(err, "msg", err)), "line": line,
                         "text": short((_getattr(err, "text", "") or "").strip(), 120)}
        emit()
    res["prompt_prepended"] = prepended
    res["line_offset"] = offset
    expected = EXPECTED_PARAMS

    # 2. define the solution ----------------------------------------------------------------------
    res["stage"] = "define"
    ns = {"__name__": "__mentor_solution__", "__builtins__": _b}
    if not prepended:  # the prompt's imports first, as HumanEval's prompt + completion would run them: a function
        # restated without `from typing import List` otherwise fails on its own annotations
        try:
            exec("".join(ln + "\n" for ln in PROMPT.split("\n") if ln.startswith(("import ", "from "))), ns)
        except _BaseException:
            pass
    imported = _dict(ns)  # what the prompt's imports bound: not the solution's own names (`defined` below)
    _linecache.cache["<solution>"] = (_len(src), None, src.splitlines(True), "<solution>")
    try:
        exec(compiled, ns)
    except SystemExit as e:
        res["kind"] = "early_exit"
        res["exception"] = {"type": "SystemExit", "message": short(e.code), "line": None, "traceback": ""}
        emit()
    except _BaseException as e:
        res["kind"] = "definition_error"
        res["exception"] = exc_info(e)
        emit()
    raw = ns.get(ENTRY)
    if raw is None or not _callable(raw):
        res["kind"] = "missing_function"
        res["defined"] = _sorted(k for k, v in ns.items() if not k.startswith("__") and _callable(v)
                                 and imported.get(k, ns) is not v)[:10]
        emit()
    code = _getattr(raw, "__code__", None)
    if code is not None:
        n = code.co_argcount + code.co_kwonlyargcount
        names = _list(code.co_varnames[:n])
        if code.co_flags & 4:
            names.append("*" + code.co_varnames[n])
        res["signature"] = {"got": short(ENTRY + "(" + ", ".join(names) + ")", 200), "expected": expected}
        if expected is not None:
            required = code.co_argcount - _len(_getattr(raw, "__defaults__", None) or ())
            accepts = code.co_argcount if not code.co_flags & 4 else 1 << 30
            if not (required <= _len(expected) <= accepts):
                res["signature"]["mismatch"] = True

    if _isinstance(raw, _FunctionType):
        def candidate(*args, **kwargs):
            out = raw(*args, **kwargs)
            if not untrusted and not plain(out):
                untrusted.append(_type(out).__name__)
            return out
    else:
        candidate = raw

    # 3. the tests -----------------------------------------------------------------------------------
    res["stage"] = "test"
    # The solution's names, less any that shadow a builtin: a global `abs = ...` would otherwise win over the
    # snapshot for the tests too (the solution's own functions still see it, through their own globals).
    tns = {k: v for k, v in ns.items() if not k.startswith("__") and k not in _builtins_snapshot}
    tns.update({"__name__": "__mentor_tests__", "__builtins__": _dict(_builtins_snapshot), "candidate": candidate,
                ENTRY: candidate, "_mentor_record": record, "_mentor_record_eq": record_eq,
                "_mentor_record_exc": record_exc, "_mentor_at": at})
    try:
        exec(tcode, tns)
        check = tns.get("check")
        if _callable(check) and _getattr(_getattr(check, "__code__", None), "co_filename", "") == "<tests>":
            check(candidate)
    except SystemExit as e:
        res["kind"] = "early_exit"
        res["exception"] = {"type": "SystemExit", "message": short(e.code), "line": None, "traceback": ""}
        counts[1] += 1
        emit()
    except _BaseException as e:
        fail(current[0], exc=exc_info(e))  # outside an assert: report the last assert reached
    f = res["first_failure"]
    if untrusted:
        counts[0] = 0
        if f is None:
            fail(0, got="an object of type " + untrusted[0],
                 note="returned an object of a type defined by the solution, which the tests cannot trust")
        res["kind"] = "wrong_answer"
    elif f is None and N_ASSERTS and not counts[0]:
        res["kind"] = "other"
        res["harness_error"] = "no test ran to completion"
        counts[1] += 1
    elif f is None:
        res["kind"] = "pass"
    elif "exception" in f:
        e = f["exception"]
        sig_err = e["type"] == "TypeError" and any(
            w in e["message"] for w in ("positional argument", "keyword argument", "required argument",
                                        "takes no arguments", "unexpected keyword"))
        if sig_err and (not e.get("in_solution") or e.get("line") is None or res.get("signature", {}).get("mismatch")):
            res["kind"] = "wrong_signature"
        elif e["type"] == "MemoryError":
            res["kind"] = "resource_limit"
        else:
            res["kind"] = "runtime_error"
    else:
        res["kind"] = "wrong_answer"
    res["stage"] = "done"
    emit()
