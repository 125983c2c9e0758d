r"""Answer contexts for short answers: `\boxed{}` spans, and the cues before and after a stated answer."""

from __future__ import annotations

import re

from mentor.mathtext.ascii import to_ascii_math

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def box_spans(text: str) -> list[tuple[int, int, int]]:
    r"""(start, content start, content end) of each `\boxed{` / `\fbox{` in `text`, in order; the content ends at the
    matching `}`, or at the end of `text` for an unclosed box. One pass over the braces (a stack): linear."""
    opens = {m.end() - 1: m.start() for m in _BOXED.finditer(text)}  # the box's `{` -> where `\boxed` starts
    if not opens:
        return []
    closing, stack = {}, []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            closing[stack.pop()] = m.start()
    return [(start, brace + 1, closing.get(brace, len(text))) for brace, start in opens.items()]


def normalise_hint(hint: str) -> str:
    r"""The hint with LaTeX/unicode math made ASCII (see `to_ascii_math`); `\boxed{` kept as `[[` ... `]]`."""
    out, i = [], 0
    for start, content, end in box_spans(hint):  # mark boxed spans so answer contexts survive normalisation
        if start < i:
            continue  # a box inside one already marked
        out += [hint[i:start], " [[", hint[content:end], "]] "]
        i = end + 1
    out.append(hint[i:])
    return to_ascii_math("".join(out))


_CUE_BEFORE = re.compile(
    r"(?:\b(?:answer|result|minimum|maximum|minimal|maximal|smallest|largest|greatest|least|limit|total|final|"
    r"value|count|sum|period)\b[^.;!?\n=\d()]{0,30}?(?:\bis\b|\bare\b|\bequals?\b|\bequal to\b|\bbe\b|(?<![<>!])=|:)|"
    r"\b(?:equals?|is equal to|evaluates to|comes to|comes out to|works out to|amounts to|yields|gives|get|obtain|"
    r"end up with|arrive at)|"
    r"\b(?:therefore|thus|hence|so)\b[^.;!?\n]{0,30}?\bis\b)"
    r"\s*(?:exactly|just|only|precisely|simply|then|therefore|thus|also|indeed)?\s*(?:\[\[\s*)?$", re.I)
_CUE_AFTER = re.compile(
    r"^\s*(?:\]\])?\s*(?:is|are|would be|will be|should be|must be)\s+(?:the\s+|your\s+)?(?:final\s+|correct\s+|right\s+)?"
    r"(?:answer|result|only|minimum|maximum|smallest|largest|limit|value|solution|count|total)\b", re.I)


def _in_boxed(t: str, start: int) -> bool:
    return t.rfind("[[", 0, start) > t.rfind("]]", 0, start)


def answer_context(t: str, start: int, end: int) -> bool:
    """Whether the number at t[start:end] is stated as the answer (boxed, or after/before an answer cue)."""
    if _in_boxed(t, start):
        return True
    before = re.split(r"[.;!?\n](?!\d)", t[max(0, start - 80):start])[-1]
    return bool(_CUE_BEFORE.search(before) or _CUE_AFTER.match(t[end:end + 60]))
