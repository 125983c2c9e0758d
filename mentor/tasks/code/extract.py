"""Extracting code from a completion, and the code part of a prompt."""

from __future__ import annotations

import re
from typing import Any

from mentor.tasks.base import completion_text

# Patterns on model text must be linear in its length: `^\s*` under re.M crosses blank lines, so every line start of a
# run of newlines rescanned the rest of it (quadratic); `[^\S\n]*` stops at the line's end.
_CODE_HINT = re.compile(r"^[^\S\n]*(def |class |import |from \S+ import |return\b|for |while |if )", re.M)
_LANG = re.compile(r"[ \t]*([A-Za-z0-9_+.-]*)")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    r"""(language, body) of each ``` block; an unclosed one runs to the end of the text.

    A scan with str.find rather than one regex: a regex tries every ``` of a line with no newline after it and
    rescans to the line's end each time, quadratic on a line of backticks.

    >>> fenced_blocks("Here:\n```python\nx = 1\n```\nand ```\ny\n")
    [('python', 'x = 1\n'), ('', 'y\n')]
    """
    blocks, pos = [], 0
    while (start := text.find("```", pos)) >= 0:
        eol = text.find("\n", start + 3)
        if eol < 0:  # no line after the fence, and none after any later one either
            break
        end = text.find("```", eol + 1)
        blocks.append((_LANG.match(text, start + 3, eol).group(1), text[eol + 1:end if end >= 0 else len(text)]))
        if end < 0:
            break
        pos = end + 3
    return blocks


def without_think(text: str) -> str:
    r"""The text without its closed `<think>...</think>` spans (a scan, for the same reason as `fenced_blocks`).

    >>> without_think("<think>plan</think>answer")
    'answer'
    """
    parts, pos = [], 0
    while (start := text.find("<think>", pos)) >= 0 and (end := text.find("</think>", start + 7)) >= 0:
        parts.append(text[pos:start])
        pos = end + 8
    return "".join(parts) + text[pos:] if parts else text


def extract_code(text: str, entry_point: str | None = None) -> str | None:
    r"""The Python code of a completion: the fenced block that defines `entry_point` (else the text before the
    first fence if that defines it, else the python blocks joined), or the plain text when it looks like code; None
    when there is no code.
    An unclosed fence (a truncated generation) runs to the end of the text.

    >>> extract_code("Sure.\n```python\ndef f(a):\n    return a\n```", "f")
    'def f(a):\n    return a\n'
    >>> extract_code("def f(a):\n    return a\n```\nIt returns a.", "f")  # no opening fence
    'def f(a):\n    return a\n'
    >>> extract_code("The answer is to sort the list.") is None
    True
    """
    if not isinstance(text, str):
        text = completion_text(text)
    text = without_think(text)
    blocks = [(lang.lower(), body) for lang, body in fenced_blocks(text)]
    if blocks:
        python = [b for lang, b in blocks if lang in ("", "python", "py", "python3")] or [b for _, b in blocks]
        if entry_point:
            # The text before the first fence counts too: a function written without its opening fence, then a
            # closing one and prose (Qwen2.5-Coder at T = 1), would otherwise be read as the prose after it.
            for b in [*python, text[:text.find("```")]]:
                if re.search(rf"^[^\S\n]*(async\s+)?def\s+{re.escape(entry_point)}\s*\(", b, re.M):
                    return b.strip("\n") + "\n"
        code = "\n".join(b.strip("\n") for b in python if b.strip())
        return code + "\n" if code.strip() else None
    if not text.strip():
        return None
    if _CODE_HINT.search(text) or text.startswith((" ", "\t")):
        return text if text.endswith("\n") else text + "\n"
    return None


def prompt_code(prompt: Any) -> str:
    """The code part of a problem prompt (HumanEval's prompt is code; a chat prompt may fence it)."""
    text = completion_text(prompt) if not isinstance(prompt, str) else prompt
    if not text:
        return ""
    if "```" in text:
        return extract_code(text) or ""
    return text
