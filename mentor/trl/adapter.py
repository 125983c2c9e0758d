"""The one file that speaks to TRL's private trainer surface: it wraps `_generate_and_score_completions`,
`_generate` and `_calculate_rewards` on one trainer instance (no TRL code is copied or changed), calls the
originals, and reads what the batch logic needs (group size, reward weights, chat template, tokenizer).

A new TRL version or another trainer changes this file only; mentor/trl/batch.py and mentor/trl/hook.py never
touch the trainer's private names.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from typing import Callable

import torch

from mentor.trl.batch import Generation


class TrainerAdapter:
    """TRL's private generation methods of one trainer instance, and the few attributes the hook reads.

    Args:
        trainer: the GRPOTrainer (or subclass) instance.
    """

    def __init__(self, trainer):
        self.trainer = trainer
        self.generate_raw = trainer._generate
        self.score_raw = trainer._calculate_rewards
        self.generate_and_score_raw = trainer._generate_and_score_completions

    def install(self, generate_and_score: Callable, generate: Callable, calculate_rewards: Callable) -> None:
        """Puts the hook's three methods in place of the trainer's own (on this instance only)."""
        self.trainer._generate_and_score_completions = generate_and_score
        self.trainer._generate = generate
        self.trainer._calculate_rewards = calculate_rewards

    # --- what the hook reads ---------------------------------------------------------------------------------
    @property
    def num_generations(self) -> int:
        return self.trainer.num_generations

    @property
    def reward_weights(self) -> torch.Tensor:
        return self.trainer.reward_weights

    @property
    def model(self):
        return self.trainer.model

    @property
    def tokenizer(self):
        return self.trainer.processing_class

    @property
    def training(self) -> bool:
        """Whether the policy is in training mode (False while the trainer evaluates)."""
        return self.trainer.model.training

    @property
    def global_step(self) -> int:
        return self.trainer.state.global_step

    @property
    def per_device_batch_size(self) -> int:
        return self.trainer.args.per_device_train_batch_size

    # --- the calls ------------------------------------------------------------------------------------------
    def generate(self, prompts: list) -> Generation:
        """The trainer's own generation (transformers, vLLM colocate or server alike)."""
        return Generation(*self.generate_raw(prompts))

    def output(self, gen: Generation) -> tuple:
        """`gen` as the trainer's `_generate` returns it."""
        return gen.astuple()

    def score(self, rows: list[dict], prompts: list, completions: list, completion_ids: list) -> torch.Tensor:
        """The trainer's reward functions over the rows: the whole batch's rewards per function (gathered)."""
        return self.score_raw(rows, prompts, completions, completion_ids)

    @contextlib.contextmanager
    def extra_logs_kept(self):
        """Keeps the completions table's pending columns as they were: values logged while scoring re-attempts would
        misalign the batch's table."""
        pending = copy.deepcopy(getattr(self.trainer, "_pending_extra_logs", None))
        try:
            yield
        finally:
            if pending is not None:
                self.trainer._pending_extra_logs = pending

    def log_column(self, name: str, values: list) -> None:
        """A column of the completions table (`log_completions`)."""
        self.trainer._log_completion_extra(name, values)

    def render(self, prompt: list[dict]) -> str:
        """The text the policy continues for a conversational prompt: the trainer's chat template with its
        generation prompt, as TRL renders it, less a leading BOS that tokenizing the text adds again."""
        tokenizer = self.tokenizer
        text = tokenizer.apply_chat_template(prompt, chat_template=self.trainer.chat_template, tokenize=False,
                                             add_generation_prompt=True, **self.trainer.chat_template_kwargs)
        if self.tokenizer_adds_bos and text.startswith(tokenizer.bos_token):
            text = text[len(tokenizer.bos_token):]
        return text

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` without special tokens."""
        return self.tokenizer(text=text, add_special_tokens=False)["input_ids"]

    def prompt_ids(self, text: str) -> list[int]:
        """The ids TRL gives a plain prompt `text`."""
        return self.tokenizer(text=text)["input_ids"]

    @functools.cached_property
    def tokenizer_adds_bos(self) -> bool:
        """Whether tokenizing text, as TRL does for a plain prompt, puts the BOS token first by itself."""
        tokenizer = self.tokenizer
        return bool(getattr(tokenizer, "bos_token", None)) and \
            tokenizer(text="")["input_ids"][:1] == [tokenizer.bos_token_id]

    def log_metrics(self, metrics: dict[str, float]) -> None:
        """Values into the trainer's logs for this step, so every reporter sees them."""
        for name, value in metrics.items():
            self.trainer._metrics["train"][name].append(float(value))
