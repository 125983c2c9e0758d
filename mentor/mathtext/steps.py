"""The words and the steps of a worked solution."""

from __future__ import annotations

import re


def word_list(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def split_steps(text: str) -> list[str]:
    r"""Steps of a worked solution: its non-empty lines, or its sentences when it is one line.

    >>> split_steps("First add.\nThen divide.")
    ['First add.', 'Then divide.']
    """
    lines = [ln.strip() for ln in text.strip().split("\n") if ln.strip()]
    if len(lines) > 1:
        return lines
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip()) if s]
