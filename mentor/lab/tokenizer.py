"""A char-level tokenizer for the lab, built with `tokenizers` and wrapped as a `PreTrainedTokenizerFast`.

Vocabulary: 4 special tokens, newline, and printable ASCII (space..~), one token per character, so
prompts, answers and hint text all tokenize. No special token is added automatically (prompts are
tokenized the same with or without `add_special_tokens`); the EOS token ends every reference completion.
The chat template renders a user turn as its bare text and an assistant turn as its text plus EOS, so a
conversational prompt tokenizes exactly like the plain one.
"""

from __future__ import annotations

from typing import Sequence

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = [PAD, BOS, EOS, UNK]
CHARS = ["\n"] + [chr(c) for c in range(32, 127)]

CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}{{ message['content'] }}\n"
    "{%- elif message['role'] == 'user' -%}{{ message['content'] }}"
    "{%- elif message['role'] == 'assistant' -%}{{ message['content'] }}{{ eos_token }}"
    "{%- endif -%}"
    "{%- endfor -%}"
)


def build_tokenizer(model_max_length: int = 128):
    """The lab's tokenizer (deterministic: the same ids every time)."""
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + CHARS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    core.add_special_tokens(SPECIAL_TOKENS)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token=PAD, bos_token=BOS, eos_token=EOS,
                                  unk_token=UNK, model_max_length=model_max_length, padding_side="left",
                                  clean_up_tokenization_spaces=False)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def encode(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """The token ids of each text, one per character (the lab's tokenizer has a token for each)."""
    return [tokenizer.convert_tokens_to_ids(list(t)) for t in texts]
