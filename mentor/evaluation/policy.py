"""The policy `mentor eval` samples: `lab`, a save_pretrained directory or a hub id, and its chat rendering."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mentor.placement import Placement, special_token_texts
from mentor.tasks.base import Task
from mentor.types import InputError

LAB_MAX_NEW_TOKENS = 6  # the lab's response: a space, 4 digits, EOS
DEFAULT_MAX_NEW_TOKENS = 256


@dataclass
class Policy:
    name: str
    model: Any
    tokenizer: Any
    max_new_tokens: int  # the default response length for this policy
    engine: Any = None  # a VllmEngine under --engine vllm; None: transformers' generate
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)  # a run's own (`enable_thinking`...)
    _placements: dict[tuple[str, str], Placement] = field(default_factory=dict, init=False, repr=False)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def prompt(self, problem: str) -> str | list[dict]:
        """A problem as a training dataset would hold it for this policy: one user turn where the tokenizer has a
        chat template (TRL renders it with the generation prompt), else the plain text. The lab's template renders
        a user turn as its bare text, so lab prompts are unchanged."""
        if not getattr(self.tokenizer, "chat_template", None):
            return problem
        return [{"role": "user", "content": problem}]

    def render(self, messages: list[dict]) -> str:
        """The text the policy continues for a conversational prompt: the chat template with its generation prompt.
        It is encoded with add_special_tokens=False, so a BOS the template writes is kept once, never doubled."""
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                  **self.chat_template_kwargs)

    def placement(self, where: str, task: Task) -> Placement:
        """Where a hint goes for this policy (`hint_placement`), as the in-step hook places it in training: one
        `Placement` per placement and task, built on first use (it reads the tokenizer's special tokens)."""
        key = (where, task.name)
        if key not in self._placements:
            self._placements[key] = Placement(where, task, self.render, self.encode, special_token_texts(self.tokenizer))
        return self._placements[key]


def load_policy(name: str, engine: str = "hf") -> Policy:
    """`lab` (the committed lab policy), a local save_pretrained directory, or a hub id (via mentor.models.resolve);
    `engine` "vllm" samples it through vLLM (mentor/evaluation/vllm_engine.py), "hf" through transformers."""
    from mentor.evaluation.vllm_engine import ENGINES, VllmEngine
    from mentor.models import resolve
    from mentor.models.checkpoint import COMMITTED_POLICY, load_checkpoint  # `lab` names the committed one

    if engine not in ENGINES:
        raise InputError(f"--engine {engine}: expected one of {', '.join(ENGINES)}")
    path = str(COMMITTED_POLICY) if name == "lab" else name if Path(name).exists() else resolve(name)
    if Path(path).exists() and not (Path(path) / "config.json").is_file():
        raise InputError(f"--policy {name}: {path} has no config.json; give `lab`, a save_pretrained directory or "
                         f"a hub id")
    vllm = VllmEngine(path) if engine == "vllm" else None  # refused here if vLLM is missing, before the load
    try:
        model, tokenizer = load_checkpoint(path)  # in eval mode
    except (OSError, ValueError) as e:
        raise InputError(f"--policy {name}: not `lab`, a save_pretrained directory or a loadable hub id "
                         f"({type(e).__name__}: {str(e).splitlines()[0][:200]})") from None
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    lab = (Path(path) / "meta.json").is_file() and "weights_key" in json.loads((Path(path) / "meta.json").read_text())
    return Policy(name, model, tokenizer, LAB_MAX_NEW_TOKENS if lab else DEFAULT_MAX_NEW_TOKENS, vllm)
