r"""The final answer of a completion: the last `\boxed{}`, else `#### x`, else "the answer is x", else the last number."""

from __future__ import annotations

import re

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")


def boxed_contents(text: str) -> list[str]:
    r"""Contents of every `\boxed{...}` / `\fbox{...}` in `text` (balanced braces), in order; an
    unclosed one (a truncated completion) is skipped.

    Every brace is matched in one pass (a stack), so a run of unclosed boxes costs linear time; scanning on from
    each box to its closing brace was quadratic.

    >>> boxed_contents(r"so \boxed{\frac{1}{2}} and \boxed{3}")
    ['\\frac{1}{2}', '3']
    """
    opens = [m.end() - 1 for m in _BOX.finditer(text)]  # the index of each box's `{`
    if not opens:
        return []
    closing, stack = {}, []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            closing[stack.pop()] = m.start()
    return [text[i + 1:closing[i]].strip() for i in opens if i in closing]


_HASH = re.compile(r"####\s*([^\n]+)")
# Possessive `\s*+`: with `\s*:?\s*`, a phrase followed by a run of newlines tried every split of the run (quadratic).
_PHRASE = re.compile(r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*+:?\s*+([^\n]+)", re.I)
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:\s*/\s*\d+)?")


def _clean(ans: str) -> str:
    r"""The answer without a leading math opener (`$`, `\(`, `\[`), a trailing closer and end punctuation.

    Written with str methods, not one regex: the pattern `(?:\$+|...)?\s*[.;,]?\s*$` tried every split of a run of
    spaces from every start, cubic in the run's length (3,000 spaces took 70 s)."""
    ans = ans.strip()
    ans = ans[2:] if ans.startswith(("\\(", "\\[")) else ans.lstrip("$")
    ans = ans.rstrip()
    ans = ans[:-1].rstrip() if ans.endswith((".", ";", ",")) else ans
    ans = ans[:-2] if ans.endswith(("\\)", "\\]")) else ans.rstrip("$")
    return ans.strip().rstrip(".").strip()


def stated_answers(text: str, limit: int = 6) -> list[str]:
    r"""Answers `text` states outright, at most `limit`: each `\boxed{}`, `#### x` and "the answer is x", in that order
    (the last number is no statement).

    >>> stated_answers("So x = 5, and the final answer is 7.")
    ['7']
    """
    found = boxed_contents(text) + [_clean(a)[:200] for pattern in (_HASH, _PHRASE) for a in pattern.findall(text)]
    return [a for a in found if a][:limit]


def answer_and_extraction(completion: str) -> tuple[str | None, str | None]:
    r"""(final answer, how it was found) of a completion: the last `\boxed{}` ("boxed"), else `#### x`
    ("hash"), else "the answer is x" ("phrase"), else the last number ("last_number"); (None, None)."""
    boxed = boxed_contents(completion)
    if boxed:
        return boxed[-1], "boxed"
    for pattern, how in ((_HASH, "hash"), (_PHRASE, "phrase")):
        found = pattern.findall(completion)
        if found and _clean(found[-1])[:200]:
            return _clean(found[-1])[:200], how
    numbers = _NUMBER.findall(completion)
    return (numbers[-1].replace(",", "").replace(" ", ""), "last_number") if numbers else (None, None)


_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


def answer_only(text: str) -> str | None:
    r"""The answer when `text` is nothing but one (`525`, `$525$`, `\boxed{\frac{1}{2}}`, `No`): one line, no `=`,
    at most four words; None for a worked solution, however short (`2 + 2 = 4`).

    >>> answer_only("$525$"), answer_only(r"\boxed{\frac{1}{2}}"), answer_only("2 + 2 = 4"), answer_only("1\n2")
    ('525', '\\frac{1}{2}', None, None)
    """
    body = text.strip()
    for opening, closing in _DELIMITERS:
        if len(body) > len(opening) + len(closing) and body.startswith(opening) and body.endswith(closing):
            body = body[len(opening):-len(closing)].strip()
            break
    boxed = boxed_contents(body)
    if len(boxed) == 1 and body.startswith(("\\boxed", "\\fbox")) and body.endswith("}"):
        body = boxed[0]
    if not any(c.isalnum() for c in body) or "\n" in body or "=" in body or len(body.split()) > 4:
        return None
    return body
