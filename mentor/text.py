r"""Whether the strings a model or a node wrote are text: a lone surrogate (JSON's `"\ud800"` decodes to one) is a
Python string that no encoder accepts, so a tokenizer, SQLite or a page would raise on it far from its source.

The runtime refuses such a hint and repairs the rest of an intervention (mentor/runtime/intervention.py), an `llm` answer
holding one is unusable output (mentor/llm/client.py), and the trace store repairs what it is given."""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")  # one character class: linear
REPLACEMENT = "\ufffd"


def invalid_text(value: Any, where: str = "") -> str | None:
    r"""Where the first string in `value` (a string, or dicts and lists of them, keys included) holds a lone
    surrogate, as a path such as `hint` or `nodes[2].output.root_cause` (`where` is the prefix); None if none does.

    >>> invalid_text({"hint": "fine"}) is None
    True
    >>> invalid_text({"nodes": [{"output": {"root_cause": "x\ud800"}}]})
    'nodes[0].output.root_cause'
    """
    if not _holds_surrogate(value):  # the common case, walked without building paths
        return None
    stack = [(where, value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return path or "the text"
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                key = f"{path}.{k}" if path else str(k)
                if isinstance(k, str) and _SURROGATE.search(k):
                    return f"a key of {path or 'the object'}"
                stack.append((key, x))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{path}[{i}]", x) for i, x in reversed(list(enumerate(v))))
    return None


def _holds_surrogate(value: Any) -> bool:
    """Whether any string in `value` (keys included) holds a lone surrogate: the strings gathered, then one search
    over them all (a search per string cost more than the walk; JSON's C encoder as the walker, more again)."""
    texts, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            texts.append(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return _SURROGATE.search("".join(texts)) is not None


def repaired(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (dict keys included) replaced by U+FFFD; the same object when
    it holds none."""
    return _repair(value) if _holds_surrogate(value) else value


def _repair(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_repair(k): _repair(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_repair(v) for v in value)
    return value
