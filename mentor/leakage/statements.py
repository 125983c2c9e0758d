r"""Answers a hint states outright: every `\boxed{}`, `#### x` and "the answer is x", each read whole.

The checker shows each one, boxed alone, to the task's own detector (`checker._task_verdict`), so a task that reads
only a hint's first statements, or one line of each, cannot let a later or a multi-line one through."""

from __future__ import annotations

import re

from mentor.leakage.context import box_spans

_PHRASE = re.compile(r"####|answer\s*+(?:is|:|=)\s*+:?\s*+", re.I)  # as the math reward's extraction reads it
# A math block opened in a statement: `$$`, `\[`, `\(`, `$`, `\begin{env}`; `\$` is a dollar sign, `\\[2pt]` a break.
_BLOCK = re.compile(r"(?<!\\)(?:\$\$|\\\[|\\\(|\$|\\begin\s*\{([^{}\s]{1,30})\})")
_CLOSERS = {"$$": "$$", "\\[": "\\]", "\\(": "\\)", "$": "$"}
_DELIMITERS = re.compile(r"(?<!\\)(?:\$+|\\[\[\]()])")


def stated_answers(hint: str) -> list[str]:
    r"""Each distinct answer `hint` states outright, in order: the boxed ones, then those after `####` or "answer
    is/:/=". A box inside a box is its own statement, left out of the outer one, and a phrase's statement ends at the
    next phrase: each character is in one boxed and one phrased statement at most, so reading them is linear.

    >>> stated_answers("The answer is\n$$\nx + 1\n$$.")
    ['x + 1']
    """
    found = _boxed(hint) + _phrased(hint)
    return list(dict.fromkeys(s for s in found if s))


def _boxed(text: str) -> list[str]:
    """The contents of the closed boxes, each without the boxes inside it (read on their own)."""
    spans = [s for s in box_spans(text) if s[2] < len(text)]  # an unclosed box states nothing yet
    holes: list[list[tuple[int, int]]] = [[] for _ in spans]  # per box, the boxes directly inside it
    parents: list[int] = []
    for i, (start, _, end) in enumerate(spans):  # in order of start: closed boxes nest or are apart
        while parents and spans[parents[-1]][2] < start:
            parents.pop()
        if parents:
            holes[parents[-1]].append((start, end + 1))
        parents.append(i)
    out = []
    for (_, content, end), inner in zip(spans, holes):
        cuts = [content] + [x for hole in inner for x in hole] + [end]
        out.append(" ".join(text[a:b] for a, b in zip(cuts[::2], cuts[1::2])).strip())
    return out


def _phrased(text: str) -> list[str]:
    """After each phrase, the rest of its line; a math block opened there that closes on a later line carries the
    statement to the block's end (a display `$$ ... $$`, a matrix laid out over lines). The next phrase ends it."""
    out, phrases = [], list(_PHRASE.finditer(text))
    for m, limit in zip(phrases, [p.start() for p in phrases[1:]] + [len(text)]):
        start = at = m.end()
        end = text.find("\n", start, limit)
        end = limit if end < 0 else end
        while block := _BLOCK.search(text, at, end):
            closer = _CLOSERS.get(block.group()) or f"\\end{{{block.group(1)}}}"
            close = text.find(closer, block.end(), limit)
            if close < 0:
                break  # unclosed: the rest of the line
            at = close + len(closer)
            if at > end:
                end = at
                break
        out.append(_clean(text[start:end]))
    return out


def _clean(statement: str) -> str:
    r"""The statement without its math delimiters (`$`, `\[`, `\]`, `\(`, `\)`) and end punctuation."""
    s = _DELIMITERS.sub(" ", statement).strip()
    return s[:-1].rstrip() if s.endswith((".", ";", ",")) else s
