"""A row without a usable reference (None, NaN, blank) never pays a reward (issue 15.7): every reward function
gives it None, which TRL treats as unscorable, and counts it in `mentor/reward_no_reference`."""

from __future__ import annotations

import pytest
from trl import GRPOConfig, GRPOTrainer

from mentor.data.humaneval import load_humaneval
from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy
from mentor.rewards import NO_REFERENCE_METRIC, arithmetic_reward, code_reward, math_reward
from mentor.tasks import get_task
from mentor.tasks.base import usable

BLANK = {"none": None, "nan": float("nan"), "empty": "", "blank": "  "}


def logger():
    logged: list[tuple[str, float]] = []
    return logged, lambda name, value: logged.append((name, value))


def test_usable():
    assert not any(usable(v) for v in BLANK.values()) and not usable([])
    assert all(usable(v) for v in ("None", "nan", "0", 0, 0.0, [1]))


@pytest.mark.parametrize("blank", BLANK.values(), ids=BLANK.keys())
def test_arithmetic_reward_without_an_answer(blank):
    logged, log_metric = logger()
    completions = [" 0579", " None", " nan", " ", ""]
    rewards = arithmetic_reward(completions, answer=[blank] * 4 + ["0579"], log_metric=log_metric)
    assert rewards == [None] * 4 + [0.0] and logged == [(NO_REFERENCE_METRIC, 4.0)]
    assert arithmetic_reward([" 0579"], answer=["0579"]) == [1.0]  # without log_metric, as when called directly
    assert get_task("arithmetic").score(" None", {"answer": blank, "operands": [123, 456]}) == 0.0


def test_arithmetic_reward_is_the_tasks_reward_which_reads_the_answer_only():
    columns = {"answer": ["0579", "0579", None], "operands": [[123, 456]] * 3}
    completions = [" 0579", " 0578", " 0579"]
    assert arithmetic_reward(completions, **columns) == get_task("arithmetic").reward(completions, **columns) \
        == [1.0, 0.0, None]
    assert get_task("arithmetic").reward([" 0579"], answer=["0579"]) == [1.0]  # no operands: the mentor's need


@pytest.mark.parametrize("field", ["test", "entry_point"])
@pytest.mark.parametrize("blank", BLANK.values(), ids=BLANK.keys())
def test_code_reward_without_tests(field, blank):
    p = load_humaneval()[12]
    full = p["prompt"] + p["canonical_solution"]
    cols = {"test": [p["test"]] * 2, "entry_point": [p["entry_point"]] * 2, "prompts": [p["prompt"]] * 2}
    cols[field] = [blank, cols[field][1]]
    logged, log_metric = logger()
    assert code_reward([full, full], **cols, log_metric=log_metric) == [None, 1.0]
    assert logged == [(NO_REFERENCE_METRIC, 1.0)]


@pytest.mark.parametrize("blank", BLANK.values(), ids=BLANK.keys())
def test_math_reward_without_an_answer(blank):
    logged, log_metric = logger()
    completions = ["\\boxed{None}", "The answer is none", "\\boxed{nan}", "\\boxed{}", "\\boxed{7}"]
    assert math_reward(completions, answer=[blank] * 4 + ["7"], log_metric=log_metric) == [None] * 4 + [1.0]
    assert logged == [(NO_REFERENCE_METRIC, 4.0)]


def test_a_grpo_step_pays_no_row_without_an_answer(tmp_path):
    r"""In a real GRPOTrainer step every completion answers `\boxed{None}`: the G rows of the problem whose answer
    is None would earn 1.0 if they were scored; the G rows of the other problem earn 0.0."""
    def boxed_none(prompts, completions, answer, **kwargs):
        return math_reward(["\\boxed{None}"] * len(completions), answer=answer, **kwargs)

    G = 4
    dataset = make_dataset("hard", 2, seed=0).map(lambda row, i: {"answer": None if i else row["answer"]},
                                                  with_indices=True)
    assert dataset["answer"][1] is None
    model, tokenizer = build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, beta=0.0, num_generations=G,
                      max_completion_length=4, max_steps=1, logging_steps=1, report_to="none", seed=0,
                      disable_tqdm=True, per_device_train_batch_size=2 * G, save_strategy="no")
    trainer = GRPOTrainer(model=model, reward_funcs=[boxed_none], args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log[NO_REFERENCE_METRIC] == G, log  # one reward call per step, G rows without an answer
    assert log["reward"] == 0.0, f"a row without an answer was paid: mean reward {log['reward']}"
