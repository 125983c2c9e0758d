"""Whether a hint quotes the reference solution's code, its local names renamed or not.

Both texts become tokens, lowercased (a hint may start a sentence with `Return`), with every name the solution binds
(parameters, assigned and loop variables, comprehension and lambda variables) folded to ID; the names it only uses
(builtins, methods, the functions of the prompt) stay as they are. So `[s for s in strings if substring in s]`
matches `[x for x in strings if substring in x]`, while `len(s)` is not `sorted(s)`. Three checks, each a linear
scan of the hint:

- a line of the solution of 6+ tokens copied as written, spaces aside;
- probes: a `return` with something computed (`return n*n`: a one-line solution is short), a returned expression
  of two operations or more and 6+ tokens (`len(set(string.lower()))`), and a comprehension that filters or maps
  (`[x for x in strings if substring in x]`), each quoted whole;
- runs: 8 consecutive tokens of the solution with at least three symbols among them (quotes aside), other than
  a loop's header alone (`for i, x in enumerate(numbers):` is an idiom).

A probe or run that the public prompt also has (its code, its docstring) is not a leak, and neither is a name alone:
the function, its parameters and an idiom (`len(s)`, `x % 2`, `for i in range(n)`) are shorter than any probe."""

from __future__ import annotations

import ast
import keyword
import re
import textwrap

RUN = 8  # tokens in a copied run
RUN_SYMBOLS = 3  # symbols in it, so that prose (names and keywords alone) never counts
RICH_TOKENS = 6  # a returned expression quoted alone: at least this many tokens...
RICH_OPERATIONS = 2  # ...and operations (calls, operators, subscripts, attributes)
COMPREHENSION_TOKENS = 7
RETURN_TOKENS = 4  # `return n*n`; not `return n`, `return []`, `return -1`
LINE_TOKENS = 6  # a line copied as written: not `return False`, `return result`

_TOKEN = re.compile(r"[a-z_][a-z_0-9]*|\d+(?:\.\d+)?|\*\*|//|==|!=|<=|>=|[-+*/%<>=()\[\]{}:,.'\"]")
_KEYWORDS = {k.lower() for k in keyword.kwlist}
_OPERATIONS = (ast.BinOp, ast.BoolOp, ast.Compare, ast.Call, ast.Subscript, ast.Attribute, ast.IfExp, ast.Lambda,
               ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def tokens(text: str, kept: set[str] | None) -> list[str]:
    """The tokens of `text`: keywords and the names in `kept` as written, other names ID (all of them when `kept`
    is None), both quotes as `'`."""
    out = []
    for t in _TOKEN.findall(text.lower()):
        if t[0].isalpha() or t[0] == "_":
            t = t if t in _KEYWORDS or (kept is not None and t in kept) else "ID"
        out.append("'" if t == '"' else t)
    return out


def _spaceless(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _is_symbol(t: str) -> bool:
    return t not in ("ID", "'") and not (t[0].isalnum() or t[0] == "_")


def _parse(solution: str, prompt_code: str) -> tuple[ast.AST, str, int] | None:
    """The solution's syntax tree, the text it was parsed from and the line the solution starts at in it: after the
    prompt (a HumanEval body), alone (a whole function), or dedented."""
    after_prompt = prompt_code.rstrip("\n") + "\n" + solution if prompt_code else ""
    for text, start in ((after_prompt, after_prompt.count("\n", 0, len(after_prompt) - len(solution)) + 1),
                        (solution, 1), (textwrap.dedent(solution), 1)):
        if text:
            try:
                return ast.parse(text), text, start
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
    return None


def _kept_names(tree: ast.AST) -> set[str]:
    """The names the solution uses but does not bind (builtins, methods, modules, functions), lowercased."""
    bound, used = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.Name):
            (used if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.Attribute):
            used.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            used.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            used.add(n.name)
        elif isinstance(n, ast.alias):
            used.add((n.asname or n.name).split(".")[0])
    return {x.lower() for x in used - bound}


def _operations(node: ast.AST) -> int:
    return sum(isinstance(n, _OPERATIONS) for n in ast.walk(node))


def _probes(tree: ast.AST, text: str, solution_start: int, kept: set[str]) -> list[tuple[list[str], str]]:
    """(tokens, source) of each part of the solution that leaks when quoted whole (see the module's docstring)."""
    found = []
    for n in ast.walk(tree):
        if getattr(n, "lineno", 0) < solution_start:  # the prompt's own code is public
            continue
        if isinstance(n, ast.Return) and n.value is not None and _operations(n.value):
            value = ast.get_source_segment(text, n.value) or ""
            toks = tokens(value, kept)
            if len(toks) + 1 >= RETURN_TOKENS:
                found.append((["return", *toks], "return " + value))
            if _operations(n.value) >= RICH_OPERATIONS and sum(t != "'" for t in toks) >= RICH_TOKENS:
                found.append((toks, value))
        elif isinstance(n, _COMPREHENSIONS):
            element = n.key if isinstance(n, ast.DictComp) else n.elt
            maps = ast.dump(element) not in {ast.dump(g.target) for g in n.generators}
            source = ast.get_source_segment(text, n) or ""
            toks = tokens(source, kept)
            if (maps or any(g.ifs for g in n.generators)) and len(toks) >= COMPREHENSION_TOKENS:
                found.append((toks, source))
    return found


def _loop_headers(tree: ast.AST, text: str, solution_start: int) -> list[str]:
    """`for i, x in enumerate(numbers):`, `while i < len(s):` and a comprehension's `for i in range(len(xs))`:
    idioms, not the solution, when quoted alone."""
    headers = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno >= solution_start:
            headers.append(f"for {ast.get_source_segment(text, n.target)} in {ast.get_source_segment(text, n.iter)}:")
        elif isinstance(n, ast.While) and n.lineno >= solution_start:
            headers.append(f"while {ast.get_source_segment(text, n.test)}:")
        elif isinstance(n, _COMPREHENSIONS) and n.lineno >= solution_start:
            headers += [f"for {ast.get_source_segment(text, g.target)} in {ast.get_source_segment(text, g.iter)}"
                        for g in n.generators]
    return headers


def _joined(toks: list[str]) -> str:
    """The tokens as one string to search, without parentheses: `[(e + 1) for e in l]` is `[e + 1 for e in l]`."""
    return " " + " ".join(t for t in toks if t not in ("(", ")")) + " "


def _ngrams(toks: list[str]) -> set[tuple[str, ...]]:
    return {tuple(toks[i:i + RUN]) for i in range(len(toks) - RUN + 1)}


def _longest_run(hint: list[str], solution: set[tuple[str, ...]]) -> int:
    """The longest stretch of the hint covered by RUN-grams of the solution with RUN_SYMBOLS symbols: linear."""
    best = end = start = 0
    for i in range(len(hint) - RUN + 1):
        gram = tuple(hint[i:i + RUN])
        if gram in solution:
            start = start if i < end else i
            end = i + RUN
            best = max(best, end - start)
    return best


def _copied_line(hint: str, solution: str, prompt_code: str) -> str:
    """A line of the solution, spaces aside, of 6+ tokens, that is neither in the prompt nor a loop's header."""
    public = {_spaceless(ln) for ln in prompt_code.splitlines()}
    hint = _spaceless(hint)
    for ln in solution.splitlines():
        line = _spaceless(ln)
        if (len(tokens(ln, None)) >= LINE_TOKENS and line not in public and line in hint
                and not (line.startswith(("for", "while")) and line.endswith(":"))):
            return ln.strip()
    return ""


def solution_copy(hint: str, solution: str, prompt_code: str = "") -> str:
    """Why `hint` quotes `solution` (a reason for the composer), or "" when it does not."""
    line = _copied_line(hint, solution, prompt_code)
    if line:
        return f"the hint copies a line of the reference solution ({line[:60]!r})"
    parsed = _parse(solution, prompt_code)
    kept = _kept_names(parsed[0]) if parsed else None  # unparsed: every name folded
    public_tokens = tokens(prompt_code, kept)
    hint_tokens = tokens(hint, kept)
    grams = {g for g in _ngrams(tokens(solution, kept)) if sum(map(_is_symbol, g)) >= RUN_SYMBOLS}
    grams -= _ngrams(public_tokens)
    if parsed:
        tree, text, start = parsed
        public, quoted = _joined(public_tokens), _joined(hint_tokens)
        for toks, source in _probes(tree, text, start, kept):
            probe = _joined(toks)
            if probe in quoted and probe not in public:
                return f"the hint quotes the reference solution's {' '.join(source.split())[:60]!r}"
        for header in _loop_headers(tree, text, start):
            grams -= _ngrams(tokens(header, kept))
    run = _longest_run(hint_tokens, grams)
    if run:
        return f"the hint reproduces {run} consecutive tokens of the reference solution"
    return ""
