"""Extracting code from a completion, and the code part of a prompt."""

from __future__ import annotations

import re
from typing import Any

from mentor.tasks.base import completion_text

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
_CODE_HINT = re.compile(r"^\s*(def |class |import |from \S+ import |return\b|for |while |if )", re.M)


def extract_code(text: str, entry_point: str | None = None) -> str | None:
    """The Python code of a completion: the fenced block that defines `entry_point` (else the python
    blocks joined), or the plain text when it looks like code; None when there is no code.
    An unclosed fence (a truncated generation) runs to the end of the text."""
    if not isinstance(text, str):
        text = completion_text(text)
    text = _THINK.sub("", text)
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    if blocks:
        python = [b for lang, b in blocks if lang in ("", "python", "py", "python3")] or [b for _, b in blocks]
        if entry_point:
            for b in python:
                if re.search(rf"^\s*(async\s+)?def\s+{re.escape(entry_point)}\s*\(", b, re.M):
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
