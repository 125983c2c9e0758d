"""The one file that speaks to TRL's SDPOTrainer (`trl.experimental.sdpo`, self-distillation with privileged context):
what the SDPO hook (mentor/trl/sdpo_hook.py) wraps, reads and checks, as mentor/trl/adapter.py is for GRPOTrainer.

SDPOTrainer's public surface carries most of it: its teacher's reprompt is built by `trainer.teacher_context_builder`
(`build(output, prompts, rewards, feedbacks)`, the per-row feedbacks being each row's `privileged_context`), whose
`build` is replaced on this instance so the mentor's hint becomes a collapsed group's feedback. One private method
is wrapped: `_calculate_rewards(inputs, prompts, completions, completion_ids_list)`, the one place a step's dataset
rows, completion texts and gathered rewards meet. TRL 1.14.0 to 1.16.0 share both (checked against each wheel).
"""

from __future__ import annotations

import math
import sys
from typing import Callable

import torch

from mentor.trl.adapter import TESTED_TRL, TrainerReads
from mentor.types import InputError

MODULE = "trl.experimental.sdpo"


def is_sdpo(trainer) -> bool:
    """Whether `trainer` is an SDPOTrainer or a subclass, told by class name, so that TRL's experimental package
    (which warns on import) is never imported for a GRPO trainer, and an SDPOTrainer of a TRL that moved it is still
    recognised, to be refused by name in `check_sdpo`."""
    return any(cls.__name__ == "SDPOTrainer" for cls in type(trainer).__mro__)


def check_sdpo(trainer) -> None:
    """Refuses an SDPOTrainer the hook cannot serve, naming the fix: one not of `trl.experimental.sdpo` (a TRL
    without it), one lacking what the hook wraps, and one whose teacher would ignore feedback."""
    import trl

    low, high = TESTED_TRL
    module = sys.modules.get(MODULE)
    if module is None or not isinstance(trainer, getattr(module, "SDPOTrainer", ())):
        raise RuntimeError(f"the mentor attaches to trl.experimental.sdpo.SDPOTrainer of TRL >= {low}, < {high}; this "
                           f"TRL {trl.__version__} has no such class where {type(trainer).__name__} comes from. "
                           f"Install a tested version: pip install 'trl>={low},<{high}'")
    builder = getattr(trainer, "teacher_context_builder", None)
    if not callable(getattr(trainer, "_calculate_rewards", None)) or not callable(getattr(builder, "build", None)):
        raise RuntimeError(f"this {type(trainer).__name__} lacks `_calculate_rewards` or `teacher_context_builder."
                           f"build`, which the mentor's SDPO hook uses (TRL >= {low}, < {high} has both)")
    if not trainer.args.include_environment_feedback:
        raise InputError("SDPOConfig.include_environment_feedback is False, so SDPO's teacher ignores every "
                         "privileged context, the mentor's hints included: set include_environment_feedback=True")


class SDPOAdapter(TrainerReads):
    """An SDPOTrainer instance's two methods the hook replaces, and the few attributes it reads beyond the shared ones.

    Args:
        trainer: an SDPOTrainer (or subclass) instance that passed `check_sdpo`.
    """

    def __init__(self, trainer):
        super().__init__(trainer)
        self.score_raw = trainer._calculate_rewards
        self.build_raw = trainer.teacher_context_builder.build

    def install(self, calculate_rewards: Callable, build: Callable) -> None:
        """Puts the hook's methods in place of the trainer's (on this instance and its builder only)."""
        self.trainer._calculate_rewards = calculate_rewards
        self.trainer.teacher_context_builder.build = build

    @property
    def success_threshold(self) -> float:
        """The reward at which SDPO takes a rollout as its group's demonstration (inf: it takes none)."""
        args = self.trainer.args
        return args.success_reward_threshold if args.use_successful_as_teacher else math.inf

    def teacher_prompts(self, context: dict[str, torch.Tensor], completion_width: int, rows: list[int]) -> list[str]:
        """The text of the teacher's prompt of each of this rank's `rows`, decoded from the ids the builder returned
        (`teacher_input_ids` is the left-padded reprompt, then the `completion_width` completion columns), special
        tokens kept: what the teacher was conditioned on, as tokenized."""
        ids, mask = context["teacher_input_ids"], context["teacher_attention_mask"]
        width = ids.size(1) - completion_width
        return [self.tokenizer.decode(ids[r, :width][mask[r, :width].bool()].tolist(), skip_special_tokens=False)
                for r in rows]
