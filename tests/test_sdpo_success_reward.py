"""`success_reward` under a real SDPOTrainer (issue 57 class 1): beside a format reward that pays every row, the named
accuracy reward alone says which groups collapsed, so a group the policy solved gets no hint.

The batch is 3 groups of G = 4 of the dataset's first 3 problems (no shuffle), on tests/tiny_grpo.py's tiny policy.
The accuracy reward pays the even rows of the first problem only; SDPO takes no demonstration
(`use_successful_as_teacher=False`), so only the mentor's feedback builds a teacher.
"""

import re

import pytest
import torch
from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

from mentor import Mentor
from mentor.config import MentorConfig
from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy
from mentor.traces import TraceStore
from mentor.trl.batch import BatchRules
from mentor.types import InputError
from tiny_grpo import G, TeacherSpy

DATASET = make_dataset("hard", 16, seed=0)
SOLVED = DATASET[0]["problem_id"]
FEEDBACK_HEADER = "feedback from your unsuccessful earlier attempt"


def accuracy_reward(completions, problem_id, **kwargs):
    return [float(i % 2 == 0 and pid == SOLVED) for i, pid in enumerate(problem_id)]


def format_reward(completions, **kwargs):
    return [1.0] * len(completions)


def sdpo_trainer(tmp_path, spy):
    """An SDPOTrainer of tests/tiny_grpo.py's settings (`make_sdpo_trainer` takes one reward) with both rewards."""
    model, tokenizer = build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    args = SDPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, num_generations=G, max_completion_length=6,
                      max_steps=1, logging_steps=1, learning_rate=1e-2, report_to="none", seed=0, disable_tqdm=True,
                      per_device_train_batch_size=3 * G, save_strategy="no", shuffle_dataset=False,
                      include_environment_feedback=True, teacher_model_kind="live", use_successful_as_teacher=False)
    return SDPOTrainer(model=model, reward_funcs=[accuracy_reward, format_reward], args=args,
                       processing_class=tokenizer, train_dataset=DATASET, callbacks=[spy])


def test_a_group_solved_by_the_success_reward_gets_no_hint_whatever_the_format_reward_gives(tmp_path):
    spy = TeacherSpy()
    trainer = sdpo_trainer(tmp_path, spy)
    Mentor.from_config({"success_reward": "accuracy_reward"}).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/collapse_rate_before"] == 2 / 3  # groups 1 and 2: every row wrong, however well formatted
    records = {r["group"]: r for r in TraceStore(tmp_path, readonly=True)}
    assert sorted(records) == [1, 2] and all(r["hint"] for r in records.values())
    assert log["mentor/feedback_groups"] == 2
    # The solved group keeps its plain prompt: no feedback, so no teacher; the hinted groups are taught.
    assert spy.batch["self_distillation_mask"].tolist() == [0.0] * G + [1.0] * 2 * G
    width = spy.batch["teacher_input_ids"].size(1) - spy.batch["completion_ids"].size(1)
    solved = trainer.processing_class.decode(spy.batch["teacher_input_ids"][0, :width])
    assert FEEDBACK_HEADER not in solved


def test_a_success_reward_that_selects_no_reward_column_raises_never_reads_as_failed(tmp_path):
    trainer = sdpo_trainer(tmp_path, TeacherSpy())
    with pytest.raises(InputError, match=r"success_reward: \['accuracy'\] is not among this trainer's reward "
                                         r"functions \['accuracy_reward', 'format_reward'\]"):
        Mentor.from_config({"success_reward": "accuracy"}).attach(trainer)
    # Rules that were not told the reward names (as the SDPO hook's were) must refuse, not count every row failed.
    config = MentorConfig.load({"success_reward": "accuracy_reward"})
    rewards = torch.tensor([[1.0, 1.0]] * G)
    for names in ([], ["correctness_reward", "format_reward"]):
        rules = BatchRules(config, None, G, torch.ones(2), reward_names=names)
        message = "success_reward: ['accuracy_reward'] selects no reward column of this batch (its reward functions: "
        with pytest.raises(InputError, match=re.escape(f"{message}{names})")):
            rules.collapsed(rewards)
