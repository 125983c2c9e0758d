"""The mentor inside real SDPOTrainer steps (TRL's self-distillation with privileged context) on CPU, with the tiny
policy of tests/tiny_grpo.py (its `live` teacher): the hint of a collapsed group becomes its privileged context, and no
re-attempt is made.

The batch is 3 groups of G = 4 of the dataset's first 3 problems (no shuffle). The reward pays the even rows of the
first problem only, so group 0 has a successful rollout (SDPO's own teacher) and groups 1 and 2 collapse.
"""

import sys

import pytest
from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

from mentor import Mentor
from mentor.lab.data import make_dataset
from mentor.tasks import get_task
from mentor.traces import TraceStore
from mentor.types import InputError
from tiny_grpo import G, TeacherSpy, make_sdpo_trainer

DATASET = make_dataset("hard", 16, seed=0)
SOLVED = DATASET[0]["problem_id"]
FEEDBACK_HEADER = "feedback from your unsuccessful earlier attempt"


class FirstProblemReward:
    __name__ = "first_problem_reward"

    def __call__(self, prompts, completions, problem_id, **kwargs):
        return [float(i % 2 == 0 and pid == SOLVED) for i, pid in enumerate(problem_id)]


def sdpo_trainer(tmp_path, dataset=DATASET, **overrides):
    """tests/tiny_grpo.py's SDPOTrainer on `dataset`, paying the first problem, with a TeacherSpy."""
    spy = TeacherSpy()
    return make_sdpo_trainer(tmp_path, FirstProblemReward(), dataset, callbacks=[spy], **overrides), spy


def teacher_prompt_ids(batch) -> list[list[int]]:
    """Each row's teacher prompt ids, padding removed."""
    width = batch["teacher_input_ids"].size(1) - batch["completion_ids"].size(1)
    ids, mask = batch["teacher_input_ids"][:, :width], batch["teacher_attention_mask"][:, :width]
    return [row[m.bool()].tolist() for row, m in zip(ids, mask)]


def reprompt(args, prompt: str, hint: str) -> str:
    """SDPO's reprompt of a plain prompt with feedback and no solution, from its config's templates."""
    return args.reprompt_template.format(prompt=prompt, solution="",
                                         feedback=args.feedback_template.format(feedback_raw=hint))


def test_collapsed_groups_teach_with_the_mentors_hint_and_the_others_keep_sdpos_teacher(tmp_path):
    plain, plain_spy = sdpo_trainer(tmp_path / "plain")
    plain.train()
    trainer, spy = sdpo_trainer(tmp_path / "mentor")
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    tokenizer, batch = trainer.processing_class, spy.batch
    records = {r["group"]: r for r in TraceStore(tmp_path / "mentor", readonly=True)}
    assert sorted(records) == [1, 2] and all(r["hint"] and r["recovered"] is None for r in records.values())
    teacher = teacher_prompt_ids(batch)
    for g, record in records.items():  # the hint, placed by SDPO's own templates, is what the teacher reads
        expected = tokenizer(text=reprompt(trainer.args, DATASET[g]["prompt"], record["hint"]))["input_ids"]
        assert all(teacher[g * G + j] == expected for j in range(G))
        assert record["teacher_prompt"] == tokenizer.decode(expected) and record["reattempt"] == []
    for j in range(G):  # the solved group: SDPO's demonstration, no feedback
        text = tokenizer.decode(teacher[j])
        assert "Correct solution" in text and FEEDBACK_HEADER not in text
    assert batch["self_distillation_mask"].tolist() == [1.0] * 3 * G
    assert plain_spy.batch["self_distillation_mask"].tolist() == [1.0] * G + [0.0] * 2 * G  # no teacher without it
    assert teacher[:G] == teacher_prompt_ids(plain_spy.batch)[:G]
    log, plain_log = trainer.state.log_history[0], plain.state.log_history[0]
    assert log["loss"] != plain_log["loss"]
    assert log["mentor/interventions"] == log["mentor/feedback_groups"] == 2 and log["mentor/collapse_rate_before"] == 2 / 3
    assert log["self_distillation/feedback_used_fraction"] == 2 / 3 and plain_log["self_distillation/feedback_used_fraction"] == 0
    assert "mentor/recovered" not in log and "mentor/regen_s" not in log  # no re-attempt, so no re-attempt figures


def test_a_leaking_hint_never_reaches_the_teacher_nor_does_the_datasets_feedback(tmp_path, monkeypatch):
    leaky = DATASET[1]
    compose = get_task("arithmetic").compose

    def leaking_for_one(group, diagnosis, tier, feedback):
        return f"it is {leaky['answer']}" if group.problem_id == leaky["problem_id"] else compose(
            group, diagnosis, tier, feedback)

    monkeypatch.setattr(get_task("arithmetic"), "compose", leaking_for_one)
    # A dataset whose static feedback states the answer: a collapsed group gets the mentor's hint or nothing.
    dataset = DATASET.map(lambda row: {"privileged_context": f"the answer is {row['answer']}"})
    trainer, spy = sdpo_trainer(tmp_path, dataset=dataset)
    # At this threshold the solved group (rewards 1, 0, 1, 0) counts as collapsed too: it keeps SDPO's teacher.
    Mentor.from_config({"collapse_threshold": 1.0}).attach(trainer)
    trainer.train()
    tokenizer, batch = trainer.processing_class, spy.batch
    teacher = [tokenizer.decode(ids) for ids in teacher_prompt_ids(batch)]
    assert all("Correct solution" in t for t in teacher[:G])
    records = {r["group"]: r for r in TraceStore(tmp_path, readonly=True)}
    assert records[1]["withheld"] and records[1]["teacher_prompt"] is None and records[1]["leak"]["leaked_drafts"]
    assert records[2]["hint"] and records[2]["teacher_prompt"] == teacher[2 * G]
    assert all(t == leaky["prompt"] for t in teacher[G:2 * G])  # the plain prompt: no feedback, so no teacher
    assert all(DATASET[g]["answer"] not in t for g in (1, 2) for t in teacher[g * G:(g + 1) * G])
    assert batch["self_distillation_mask"].tolist() == [1.0] * G + [0.0] * G + [1.0] * G
    log = trainer.state.log_history[0]
    assert log["mentor/withheld"] == 1 and log["mentor/feedback_groups"] == 1
    assert log["mentor/skipped/successful_rollout"] == 1 and sorted(records) == [1, 2]


def test_attach_refuses_what_sdpo_cannot_do(tmp_path, monkeypatch):
    trainer, _ = sdpo_trainer(tmp_path)
    with pytest.raises(InputError, match=r"no hinted re-attempt is generated, so \{'strategy': 'mixed', 'strip_hint': "
                                         r"True\} would configure nothing: remove them"):
        Mentor.from_config({"strategy": "mixed", "strip_hint": True}).attach(trainer)
    with pytest.raises(InputError, match=r"\{'hint_choice': 'learning'\}.*remove it"):
        Mentor.from_config({"hint_choice": "learning", "graph_draws": 2}).attach(trainer)
    with pytest.raises(InputError, match=r"\{'hint_source': 'none'\}.*remove it"):  # the retry control re-draws
        Mentor.from_config({"hint_source": "none"}).attach(trainer)
    Mentor.from_config({"k": 3, "mixed_share": 0.25}).attach(trainer)  # inert at the defaults, as under GRPO
    deaf, _ = sdpo_trainer(tmp_path, include_environment_feedback=False)
    with pytest.raises(InputError, match="set include_environment_feedback=True"):
        Mentor.from_config({}).attach(deaf)
    other, _ = sdpo_trainer(tmp_path)
    monkeypatch.setitem(sys.modules, "trl.experimental.sdpo", None)  # a TRL without it, or that moved it
    with pytest.raises(RuntimeError, match=r"trl\.experimental\.sdpo\.SDPOTrainer of TRL >= 1\.14\.0, < 1\.17\.0.*"
                                           r"pip install 'trl>=1\.14\.0,<1\.17\.0'"):
        Mentor.from_config({}).attach(other)


@pytest.mark.slow  # the real model
def test_a_plain_sdpo_script_on_smollm2_trains_with_the_mentors_feedback_for_two_steps(tmp_path):
    """SmolLM2-135M-Instruct (ChatML), resolved by name, on a chat product it fails; SDPO's defaults (an EMA teacher
    reloaded from the model's directory). Only the last decoder layer trains, as in test_trl_hook_on_smollm2.py."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mentor import models
    from mentor.data.easy_arithmetic import products
    from mentor.leakage import check_leak
    from mentor.policy import torch_threads
    from mentor.rewards import math_reward

    path = models.resolve("HuggingFaceTB/SmolLM2-135M-Instruct")
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    last = f"model.layers.{model.config.num_hidden_layers - 1}."
    for name, p in model.named_parameters():
        p.requires_grad = name.startswith(last)
    row = products(1, seed=0)[0]
    args = SDPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, num_generations=G,
                      per_device_train_batch_size=G, max_completion_length=24, max_steps=2, logging_steps=1,
                      learning_rate=1e-6, report_to="none", save_strategy="no", seed=0, disable_tqdm=True,
                      include_environment_feedback=True)
    spy = TeacherSpy()
    trainer = SDPOTrainer(model=model, reward_funcs=[math_reward], args=args, processing_class=tokenizer,
                          train_dataset=Dataset.from_list([row]), callbacks=[spy])
    Mentor.from_config({}).attach(trainer)
    with torch_threads(1):
        trainer.train()
    logs = [log for log in trainer.state.log_history if "mentor/feedback_groups" in log]
    assert [log["mentor/collapse_rate_before"] for log in logs] == [1.0, 1.0]  # the model fails the product
    assert [log["mentor/feedback_groups"] for log in logs] == [1, 1]
    assert all(log["self_distillation/distillation_loss"] != 0 for log in logs), logs  # the teacher differs
    first, second = TraceStore(tmp_path, readonly=True).interventions()
    assert second["previous_hints"] == [{"tier": first["tier"], "hint": first["hint"]}]  # the hint history escalates
    question = row["prompt"][-1]["content"]
    for record in (first, second):
        assert not check_leak(record["hint"], record["reference"], get_task("math"), problem=question).leaked
    expected = tokenizer.apply_chat_template([{"role": "user", "content": reprompt(args, question, second["hint"])}],
                                             add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
    assert teacher_prompt_ids(spy.batch) == [expected] * G  # the last step's teacher: the ChatML reprompt, as built
    assert second["teacher_prompt"] == tokenizer.decode(expected) and "<|im_start|>user" in second["teacher_prompt"]
    assert spy.batch["self_distillation_mask"].tolist() == [1.0] * G
