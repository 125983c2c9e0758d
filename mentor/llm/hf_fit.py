"""Fitting a chat prompt to a local model's context, for the in-process `hf` provider.

A prompt longer than the model's context (a classifier prompt of 12,551 tokens for a context of 8,192) would run
past the model's positions. `fit_prompt` cuts the middle of the longest message (the attempts, usually; the role and
the format instruction at its ends are kept) by tokens until the prompt and the answer's budget fit, and says what
it cut."""

from __future__ import annotations

from typing import Any

CUT_MARK = "\n[... {n} tokens cut to fit the model's context of {context} ...]\n"


def context_length(lm: Any) -> int | None:
    """The model's context in tokens (`max_position_embeddings`, or what its config calls it), or None."""
    config = getattr(lm, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def prompt_tokens(tokenizer: Any, prompt: list[dict[str, str]]) -> int:
    """The prompt's length in tokens as `generate` gets it: the chat template's text, tokenized as it is."""
    text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def fit_prompt(tokenizer: Any, prompt: list[dict[str, str]], max_tokens: int, context: int | None
               ) -> tuple[list[dict[str, str]], str | None]:
    """`prompt` cut so that it and `max_tokens` fit in `context`, and a sentence saying what was cut (None if
    nothing). Raises ValueError when even an empty longest message would not fit (the caller falls back to rules)."""
    if context is None:
        return prompt, None
    room = context - max_tokens
    total = prompt_tokens(tokenizer, prompt)
    if total <= room:
        return prompt, None
    cut_total = 0
    for _ in range(4):  # a cut changes how the rest tokenizes by a token or two; it settles in one or two rounds
        over = total - room
        if over <= 0:
            break
        i = max(range(len(prompt)), key=lambda k: len(prompt[k]["content"]))
        ids = tokenizer.encode(prompt[i]["content"], add_special_tokens=False)
        mark_tokens = len(tokenizer.encode(CUT_MARK.format(n=10 ** 6, context=context), add_special_tokens=False))
        drop = over + mark_tokens + 2
        if drop >= len(ids):
            raise ValueError(f"the prompt ({total} tokens) and the answer's {max_tokens} tokens do not fit the "
                             f"model's context of {context} even with its longest message cut")
        keep_head = (len(ids) - drop) // 2
        head, tail = ids[:keep_head], ids[keep_head + drop:]
        cut_total += drop
        text = tokenizer.decode(head) + CUT_MARK.format(n=cut_total, context=context) + tokenizer.decode(tail)
        prompt = [*prompt[:i], {**prompt[i], "content": text}, *prompt[i + 1:]]
        total = prompt_tokens(tokenizer, prompt)
    if total > room:
        raise ValueError(f"the prompt could not be cut to fit the model's context of {context} ({total} tokens "
                         f"left for {room})")
    return prompt, (f"prompt cut by {cut_total} tokens (the middle of its longest message) to fit the model's context "
                    f"of {context} with the answer's {max_tokens}")
