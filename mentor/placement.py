"""Where a hint goes and what it may hold, shared by the in-step hook (mentor/trl/) and `mentor eval`
(mentor/evaluation/), so both place the same text and train or score the same ids: the problem text of a prompt,
a tokenizer's special tokens and a hint with them broken up, and the token ids of a response prefix. Free of torch
and TRL."""

from __future__ import annotations

import re
from typing import Any, Callable

from mentor.tasks.base import Task, completion_text


def prompt_text(prompt: Any) -> str:
    """The problem text of a plain or conversational prompt: its last user turn, else (system and assistant turns
    only) every turn's text, one per line.

    >>> prompt_text([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q: 2+2=? A:"}])
    'Q: 2+2=? A:'
    """
    if isinstance(prompt, str):
        return prompt
    return next((m["content"] for m in reversed(prompt) if m.get("role") == "user"),
                "\n".join(completion_text([m]) for m in prompt))


def special_token_texts(tokenizer) -> list[str]:
    """The texts `tokenizer` turns into special tokens: its named ones and every added token marked special."""
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    return list(getattr(tokenizer, "all_special_tokens", [])) + [t.content for t in added.values()
                                                                  if getattr(t, "special", False)]


def neutralised(text: str, special_tokens: list[str]) -> tuple[str, int]:
    """`text` with every occurrence of a tokenizer's special token (`<|im_end|>`, `</s>`...) broken by a space after
    its first character, so that tokenizing the text gives ordinary tokens and the hint cannot forge a chat turn;
    and how many it broke. One pass of one alternation: linear in the text's length (the longest token first).

    >>> neutralised("2 + 2 is 4<|im_end|><|im_start|>user", ["<|im_end|>", "<|im_start|>"])
    ('2 + 2 is 4< |im_end|>< |im_start|>user', 2)
    >>> neutralised("no special token here", ["<|im_end|>"])
    ('no special token here', 0)
    """
    tokens = sorted({t for t in special_tokens if isinstance(t, str) and len(t) > 1}, key=len, reverse=True)
    if not tokens or not any(t in text for t in tokens):
        return text, 0
    pattern = re.compile("|".join(map(re.escape, tokens)))
    broken, count = pattern.subn(lambda m: m.group(0)[0] + " " + m.group(0)[1:], text)
    if pattern.search(broken):  # a token that holds a space after its first character: no text of it is kept
        return pattern.sub("", broken), count
    return broken, count


def response_prefix_ids(task: Task, encode: Callable[[str], list[int]], original: list[int], hinted: list[int],
                        hint: str) -> list[int]:
    """Token ids of a response prefix (`hint_placement: prefix`): what the hinted prompt's ids add to the original
    prompt's; where tokenizing the two texts apart changed the ids at the seam, the prefix
    (`task.response_prefix(hint)`) tokenized by itself. The in-step hook and `mentor eval` both use it, so both
    train or score the same ids.

    >>> from mentor.tasks import get_task
    >>> response_prefix_ids(get_task("arithmetic"), list, [1, 2], [1, 2, 7, 8], "hint")  # the hinted ids' tail
    [7, 8]
    """
    if list(hinted[:len(original)]) == list(original):
        return list(hinted[len(original):])
    return list(encode(task.response_prefix(hint)))
