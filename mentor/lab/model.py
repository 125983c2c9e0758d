"""The lab's policy: a small Llama-style causal LM (about 0.8M parameters) built from a config."""

from __future__ import annotations

from typing import Any

MODEL_DEFAULTS: dict[str, Any] = {
    "hidden_size": 128,
    "intermediate_size": 512,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "max_position_embeddings": 128,
    "rope_theta": 10000.0,
}


def build_config(tokenizer, **overrides):
    from transformers import LlamaConfig

    kw = {**MODEL_DEFAULTS, **overrides}
    rope_theta = kw.pop("rope_theta")
    return LlamaConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
                       bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                       tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": rope_theta},
                       **kw)


def build_policy(seed: int = 0, tokenizer=None, **overrides):
    """A freshly initialised policy (deterministic for the seed) and its tokenizer: `(model, tokenizer)`."""
    import torch
    from transformers import LlamaForCausalLM

    from mentor.lab.tokenizer import build_tokenizer

    tokenizer = tokenizer or build_tokenizer()
    torch.manual_seed(seed)
    model = LlamaForCausalLM(build_config(tokenizer, **overrides))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    return model, tokenizer
