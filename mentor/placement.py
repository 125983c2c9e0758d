"""Where a hint goes and what it may hold. One `Placement` answers every such question for the in-step hook
(mentor/trl/) and `mentor eval` (mentor/evaluation/), so both place the same text and train or score the same ids:
the hinted prompt, the whole response the verifier judges, the token ids of a response prefix, and the hint with a
tokenizer's special tokens broken up. Free of torch and TRL."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
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


@dataclass
class Placement:
    """Where a hint goes for one policy (`hint_placement`): in the last user turn (`prompt`), or as the start of the
    response (`prefix`, after a conversational prompt's generation prompt, as text).

    Args:
        where: `prompt` or `prefix`.
        task: the task adapter that formats a hinted user turn and a response prefix.
        render: a conversational prompt -> the text the policy continues (its chat template).
        encode: text -> its token ids without special tokens.
        special_tokens: the tokenizer's special tokens, which no hint may add to a prompt (default none).
    """

    where: str
    task: Task
    render: Callable[[list[dict]], str]
    encode: Callable[[str], list[int]]
    special_tokens: list[str] = field(default_factory=list)

    def safe_hint(self, hint: str) -> tuple[str, int]:
        """The hint as the policy may see it: special tokens' text broken up (`neutralised`); and how many."""
        return neutralised(hint, self.special_tokens)

    def rendered(self, prompt: Any) -> str:
        """The text the policy continues for `prompt`: a plain prompt as it is, a conversational one rendered."""
        return prompt if isinstance(prompt, str) else self.render(prompt)

    def hinted_prompt(self, prompt: Any, hint: str) -> Any:
        """The prompt the policy re-attempts: the hint in the last user turn, or as the start of the response. A
        conversational prompt with no user turn (system and assistant messages only) gets a new user turn at its end
        carrying the hint. Without a hint (""), the prompt unchanged.

        >>> from mentor.tasks import get_task
        >>> Placement("prefix", get_task("arithmetic"), str, list).hinted_prompt("Q: 2+2=? A:", "")
        'Q: 2+2=? A:'
        """
        if not hint:
            return prompt
        if self.where == "prefix":
            return self.rendered(prompt) + self.task.response_prefix(hint)
        if isinstance(prompt, str):
            return self.task.hinted_prompt(prompt, hint)
        prompt = copy.deepcopy(prompt)
        users = [i for i, m in enumerate(prompt) if m.get("role") == "user" and isinstance(m.get("content"), str)]
        if not users:
            return prompt + [{"role": "user", "content": self.task.hinted_prompt("", hint).strip()}]
        prompt[users[-1]]["content"] = self.task.hinted_prompt(prompt[users[-1]]["content"], hint)
        return prompt

    def hinted_batch(self, prompts: list, hints: list[str]) -> list:
        """A generation batch's prompts, each with its hint ("" for none). Under `prefix` with any hint, every
        prompt is rendered text: one batch holds one prompt type, as TRL reads the type of its first."""
        if any(hints) and self.where == "prefix":
            prompts = [self.rendered(p) for p in prompts]
        return [self.hinted_prompt(p, h) for p, h in zip(prompts, hints)]

    def whole_responses(self, originals: list, hints: list[str], completions: list) -> list:
        """What the verifier judges: under `prefix`, each hinted row's prefix followed by its completion (the
        continuation generated after it), as a message list where the row's original prompt is one (a rendered
        prompt came back as text); otherwise the completions as they are. `hints` is "" for a row without one."""
        if self.where != "prefix":
            return completions
        whole = []
        for prompt, hint, completion in zip(originals, hints, completions):
            if isinstance(completion, str):
                completion = (self.task.response_prefix(hint) if hint else "") + completion
                if not isinstance(prompt, str):
                    completion = [{"role": "assistant", "content": completion}]
            whole.append(completion)
        return whole

    def prefix_ids(self, original: list[int], hinted: list[int], hint: str) -> list[int]:
        """Token ids of the response prefix (`response_prefix_ids`): what the hinted prompt's ids add to the
        original's; none under `prompt` placement, where the hint is in the prompt."""
        if self.where != "prefix":
            return []
        return response_prefix_ids(self.task, self.encode, original, hinted, hint)
