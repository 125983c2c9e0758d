"""A real GRPOTrainer (or SDPOTrainer) on CPU with a tiny lab policy built in memory, and a reward that pays hinted
rows.

A random policy never answers a hard addition, so every group collapses; the reward reads the `mentor_hint`
column (as any reward function can) to pay every other hinted row.
"""

from transformers import TrainerCallback
from trl import GRPOConfig, GRPOTrainer, RLOOConfig, RLOOTrainer

from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy

G = 4


class RecordingReward:
    """Pays every other hinted row; records what it was asked to score."""

    __name__ = "recording_reward"

    def __init__(self):
        self.calls: list[dict] = []

    def __call__(self, prompts, completions, answer, mentor_hint=None, **kwargs):
        mentor_hint = mentor_hint or [""] * len(completions)
        self.calls.append({"completions": list(completions), "hints": list(mentor_hint)})
        return [1.0 if hint and i % 2 == 0 else 0.0 for i, hint in enumerate(mentor_hint)]


def make_trainer(tmp_path, reward, max_steps=1, dataset=None, policy=None, rloo=False, eval_dataset=None,
                 peft_config=None, **overrides):
    """A GRPOTrainer (or RLOOTrainer) on CPU with a tiny policy, G generations per group and 6-token completions.

    Args:
        tmp_path: the output directory.
        reward: the one reward function, or a list of them.
        max_steps: training steps (default 1).
        dataset: the training set (default: 16 hard lab problems).
        policy: a (model, tokenizer) pair (default: a fresh tiny lab policy of seed 0).
        rloo: build an RLOOTrainer (default False: a GRPOTrainer).
        eval_dataset, peft_config: passed to the trainer (default None).
        overrides: GRPOConfig (RLOOConfig) arguments over these defaults (8 rows per device, no checkpoints, no
            reporter).
    """
    model, tokenizer = policy or build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    config, trainer = (RLOOConfig, RLOOTrainer) if rloo else (GRPOConfig, GRPOTrainer)
    args = config(output_dir=str(tmp_path), use_cpu=True, bf16=False, num_generations=G,
                  max_completion_length=6, max_steps=max_steps, logging_steps=1, learning_rate=1e-2,
                  gradient_checkpointing=False, seed=0, disable_tqdm=True,
                  **{"beta": 0.0, "per_device_train_batch_size": 8, "save_strategy": "no", "report_to": "none",
                     **overrides})
    dataset = dataset if dataset is not None else make_dataset("hard", 16, seed=0)
    return trainer(model=model, reward_funcs=reward if isinstance(reward, list) else [reward], args=args,
                   train_dataset=dataset, eval_dataset=eval_dataset, processing_class=tokenizer,
                   peft_config=peft_config)


class TeacherSpy(TrainerCallback):
    """SDPOTrainer's own callback event: the batch the loss sees, teacher inputs and self-distillation mask included
    (the last generation batch's)."""

    def on_self_distillation_batch_prepared(self, args, state, control, **batch):
        self.batch = batch


def make_sdpo_trainer(tmp_path, reward, dataset=None, policy=None, callbacks=None, **overrides):
    """An SDPOTrainer on CPU with a tiny policy, G generations per group, 6-token completions, no shuffle, reading
    feedback; its `live` teacher is the policy itself (SDPO's default `ema` teacher is reloaded from the model's
    name, which a model built in memory lacks).

    Args:
        tmp_path: the output directory.
        reward: the one reward function.
        dataset: the training set (default: 16 hard lab problems).
        policy: a (model, tokenizer) pair (default: a fresh tiny lab policy of seed 0).
        callbacks: passed to the trainer.
        overrides: SDPOConfig arguments over these defaults (12 rows per device, no checkpoints).
    """
    from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

    model, tokenizer = policy or build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    args = SDPOConfig(**{"output_dir": str(tmp_path), "use_cpu": True, "bf16": False, "num_generations": G,
                         "max_completion_length": 6, "max_steps": 1, "logging_steps": 1, "learning_rate": 1e-2,
                         "report_to": "none", "seed": 0, "disable_tqdm": True, "per_device_train_batch_size": 3 * G,
                         "save_strategy": "no", "shuffle_dataset": False, "include_environment_feedback": True,
                         "teacher_model_kind": "live", **overrides})
    return SDPOTrainer(model=model, reward_funcs=[reward], args=args, processing_class=tokenizer, callbacks=callbacks,
                       train_dataset=dataset if dataset is not None else make_dataset("hard", 16, seed=0))


class ScheduledReward(RecordingReward):
    """Pays even hinted rows, and the even unhinted rows of problem `p` at the global steps `solved[p]` holds."""

    def __init__(self, solved: dict[str, set[int]]):
        super().__init__()
        self.solved = solved

    def __call__(self, prompts, completions, answer, problem_id, trainer_state, mentor_hint=None, **kwargs):
        hinted = super().__call__(prompts, completions, answer, mentor_hint, **kwargs)
        step = trainer_state.global_step
        return [1.0 if paid or (i % 2 == 0 and step in self.solved.get(pid, ())) else 0.0
                for i, (paid, pid) in enumerate(zip(hinted, problem_id))]
