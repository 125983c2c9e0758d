"""The one file that speaks to TRL's private trainer surface: it wraps `_generate_and_score_completions`,
`_generate` and `_calculate_rewards` on one trainer instance (no TRL code is copied or changed), calls the
originals, and reads what the batch logic needs (group size, reward weights, chat template, tokenizer).

A new TRL version or another trainer changes this file only; mentor/trl/batch.py and mentor/trl/hook.py never
touch the trainer's private names. The differences it holds (docs/configuration.md, "TRL versions, trainers and
options"):
- GRPOTrainer's `_generate` returns eight per-row outputs; RLOOTrainer's returns three (prompt ids, completion
  ids, completions), and RLOOTrainer has no `chat_template` attribute (it renders with the tokenizer's own).
- TRL 1.14.x to 1.16.x share these private methods. TRL 1.15.x without Triton cannot train at all (its chunked
  log-prob kernel is None), with or without the mentor: `check_trl` refuses it at attach, naming TRL's bug.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from typing import Callable

import torch

from mentor.dependencies import version_range
from mentor.placement import special_token_texts
from mentor.trl.batch import Generation

TESTED_TRL = version_range("trl")  # [lowest, highest) TRL versions whose private generation API the hook wraps
SUPPORTED_TRAINERS = ("GRPOTrainer", "RLOOTrainer")  # and their subclasses
# TRL's private methods the hook wraps (the first three) or calls (`_log_completion_extra`: the hint column)
HOOKED_METHODS = ("_generate", "_generate_and_score_completions", "_calculate_rewards", "_log_completion_extra")


def trainer_kind(trainer) -> str:
    """Which supported TRL trainer `trainer` is (or subclasses): "GRPOTrainer" or "RLOOTrainer"; a TypeError
    naming the supported ones otherwise."""
    import trl

    for name in SUPPORTED_TRAINERS:
        if isinstance(trainer, getattr(trl, name)):
            return name
    raise TypeError(f"Mentor.attach needs a trl.GRPOTrainer, trl.RLOOTrainer or trl.experimental.sdpo.SDPOTrainer "
                    f"(or a subclass of one), got {type(trainer).__name__}; the mentor supports "
                    f"{', '.join(SUPPORTED_TRAINERS)}, SDPOTrainer")


def check_trl_version() -> None:
    """Refuses a TRL outside the tested range, naming the fix (every trainer the mentor attaches to)."""
    import trl
    from packaging.version import Version

    low, high = TESTED_TRL
    if not Version(low) <= Version(trl.__version__) < Version(high):
        raise RuntimeError(f"mentor is tested with TRL >= {low}, < {high}; this is TRL {trl.__version__}. "
                           f"Install a tested version: pip install 'trl>={low},<{high}'")


def check_trl(trainer) -> None:
    """Refuses a TRL outside the tested range, a TRL that cannot train here whatever the mentor does, and a
    trainer that lacks the private methods the hook wraps; each error names the fix."""
    import trl

    check_trl_version()
    from trl.trainer import utils as trl_utils

    if "_ChunkedLogProbFunction" in vars(trl_utils) and trl_utils._ChunkedLogProbFunction is None:
        raise RuntimeError(f"TRL {trl.__version__} cannot train here, with or without the mentor: its chunked "
                           "log-prob kernel (trl.trainer.utils._ChunkedLogProbFunction) is None because Triton is "
                           "not installed, and the trainer calls it at the first loss (TRL's own bug, fixed in "
                           "1.16.0). Install Triton, or a TRL without the bug: pip install 'trl>=1.16.0,<1.17.0' "
                           "(or 'trl>=1.14.0,<1.15.0')")
    missing = [m for m in HOOKED_METHODS if not callable(getattr(trainer, m, None))]
    if missing:
        raise RuntimeError(f"this {type(trainer).__name__} lacks {missing}, which the mentor's in-step hook uses")


class TrainerReads:
    """What every TRL trainer the mentor attaches to (GRPO, RLOO, SDPO: mentor/trl/sdpo.py) gives its hook alike.

    Args:
        trainer: the trainer instance.
    """

    def __init__(self, trainer):
        self.trainer = trainer

    @property
    def num_generations(self) -> int:
        return self.trainer.num_generations

    @property
    def reward_weights(self) -> torch.Tensor:
        return self.trainer.reward_weights

    @property
    def reward_names(self) -> list[str]:
        """The reward functions' names, in `reward_weights`' order: a function's `__name__`, a reward model's id."""
        return list(self.trainer.reward_func_names)

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
    def special_tokens(self) -> list[str]:
        """The texts the tokenizer turns into special tokens (`mentor.placement.special_token_texts`)."""
        return special_token_texts(self.tokenizer)

    def log_metrics(self, metrics: dict[str, float]) -> None:
        """Values into the trainer's logs for this step, so every reporter sees them."""
        for name, value in metrics.items():
            self.trainer._metrics["train"][name].append(float(value))


class TrainerAdapter(TrainerReads):
    """TRL's private generation methods of one trainer instance, and the few attributes the hook reads.

    Args:
        trainer: a GRPOTrainer or RLOOTrainer (or subclass) instance.
    """

    def __init__(self, trainer):
        super().__init__(trainer)
        self.kind = trainer_kind(trainer)
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
    def per_device_batch_size(self) -> int:
        return self.trainer.args.per_device_train_batch_size

    @property
    def corrects_sampling(self) -> bool:
        """Whether TRL corrects each row by its sampling log-probs itself (vLLM with its importance sampling on)."""
        return bool(getattr(self.trainer, "use_vllm", False)
                    and getattr(self.trainer.args, "vllm_importance_sampling_correction", False))

    @property
    def importance_bounds(self) -> tuple[float, float]:
        """TRL's bounds on an importance ratio, (floor, cap): `vllm_importance_sampling_clip_min` (0 when unset) and
        `vllm_importance_sampling_clip_max` (`vllm_importance_sampling_cap` in earlier TRL; 3.0 when unset)."""
        args = self.trainer.args
        cap = getattr(args, "vllm_importance_sampling_clip_max", None) or getattr(args, "vllm_importance_sampling_cap",
                                                                                  None)
        return getattr(args, "vllm_importance_sampling_clip_min", None) or 0.0, cap or 3.0

    @property
    def seed(self) -> int:
        return self.trainer.args.seed

    @property
    def train_size(self) -> int:
        return len(self.trainer.train_dataset)

    def train_row(self, index: int) -> dict:
        """Row `index` of the training set, as the trainer's data loader hands rows to `_generate_and_score`."""
        return dict(self.trainer.train_dataset[index])

    # --- the calls ------------------------------------------------------------------------------------------
    def generate(self, prompts: list) -> Generation:
        """The trainer's own generation (transformers, vLLM colocate or server alike)."""
        out = self.generate_raw(prompts)
        if self.kind == "RLOOTrainer":
            prompt_ids, completion_ids, completions = out
            return Generation(prompt_ids, completion_ids, None, completions, None, {}, None, [])
        return Generation(*out)

    def output(self, gen: Generation) -> tuple:
        """`gen` as the trainer's `_generate` returns it."""
        if self.kind == "RLOOTrainer":
            return gen.prompt_ids, gen.completion_ids, gen.completions
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
        text = tokenizer.apply_chat_template(prompt, chat_template=getattr(self.trainer, "chat_template", None),
                                             tokenize=False,
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
