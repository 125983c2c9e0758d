"""The mentor under the TRL options real configs use, and under RLOOTrainer, each on a real trainer with a tiny policy
(tests/tiny_grpo.py). Every test checks what the loss saw: the hinted re-attempts, with the advantages their rewards
give under that option, not just that training finished. docs/configuration.md's table names these tests.

Every first attempt fails, so every group collapses and is hinted (`replace_group`); RecordingReward pays rows 0 and 2
of each re-attempted group, so each hinted group's rewards are [1, 0, 1, 0].
"""

import pytest
import torch

from mentor import Mentor
from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy
from mentor.traces import TraceStore
from tiny_grpo import G, RecordingReward, make_trainer

PAID = [1.0, 0.0, 1.0, 0.0]  # one hinted group's rewards


def spy_every_loss(trainer) -> list[dict]:
    """Every batch `_compute_loss` sees, in order (prompt ids, completion ids and mask, advantages)."""
    seen, original = [], trainer._compute_loss

    def compute_loss(model, inputs):
        seen.append({k: inputs[k].detach().clone() for k in ("prompt_ids", "completion_ids", "completion_mask",
                                                              "advantages")})
        return original(model, inputs)

    trainer._compute_loss = compute_loss
    return seen


def hinted_rows(trainer, seen: list[dict]) -> list[float]:
    """The advantages of the rows the loss saw whose prompt holds a hint, sorted."""
    tokenizer, advantages = trainer.processing_class, []
    for batch in seen:
        prompts = tokenizer.batch_decode(batch["prompt_ids"], skip_special_tokens=True)
        advantages += [float(a) for p, a in zip(prompts, batch["advantages"].view(-1)) if "Hint:" in p]
    return sorted(advantages)


def grpo_advantages(groups: int, scale_rewards: str = "group", rewards=PAID) -> list[float]:
    """GRPO's advantages of `groups` hinted groups of `rewards` each, sorted (TRL's formula, its 1e-4 guard)."""
    batch = torch.tensor(rewards * groups)
    centred = batch - batch.view(-1, G).mean(dim=1).repeat_interleave(G)
    std = {"group": batch.view(-1, G).std(dim=1).repeat_interleave(G), "batch": batch.std().expand_as(batch),
           "none": None}[scale_rewards]
    return sorted((centred if std is None else centred / (std + 1e-4)).tolist())


def assert_rescued(trainer, seen, expected: list[float], times: int = 1) -> None:
    """The loss saw every hinted row `times` times, with the expected advantages; the mentor logged the rescue."""
    assert hinted_rows(trainer, seen) == pytest.approx(sorted(expected * times), abs=1e-4)
    log = next(log for log in trainer.state.log_history if "mentor/interventions" in log)
    assert log["mentor/collapse_rate_before"] == 1.0 and log["mentor/collapse_rate_after"] == 0.0


@pytest.mark.parametrize("overrides,steps,groups,times", [
    ({"steps_per_generation": 2, "gradient_accumulation_steps": 2}, 1, 4, 1),  # 16 rows generated, 2 losses of 8
    ({"num_iterations": 2}, 2, 2, 2),  # one generation, two steps: the loss sees each spliced row twice
], ids=["steps_per_generation+grad_accumulation", "num_iterations"])
def test_the_spliced_batch_reaches_every_loss_it_feeds(tmp_path, overrides, steps, groups, times):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=steps, **overrides)
    Mentor.from_config({}).attach(trainer)
    seen = spy_every_loss(trainer)
    trainer.train()
    assert_rescued(trainer, seen, grpo_advantages(groups), times)
    assert len(TraceStore(tmp_path, readonly=True).interventions()) == groups  # one mentor run per generation


@pytest.mark.parametrize("overrides,scale", [
    ({"loss_type": "dapo", "scale_rewards": "batch"}, "batch"),
    ({"loss_type": "dr_grpo", "scale_rewards": "none"}, "none"),
    ({"loss_type": "grpo", "beta": 0.04}, "group"),  # a reference model (below)
    ({"importance_sampling_level": "sequence", "top_entropy_quantile": 0.5}, "group"),
    ({"mask_truncated_completions": True}, "group"),
], ids=["dapo+batch", "dr_grpo+none", "beta", "sequence_is+top_entropy", "mask_truncated"])
def test_grpo_loss_options_train_the_hinted_rows_with_their_advantages(tmp_path, overrides, scale):
    policy = None
    if overrides.get("beta"):  # TRL builds the reference model from the policy's name: give it a saved one
        from transformers import AutoModelForCausalLM

        model, tokenizer = build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
        model.save_pretrained(tmp_path / "policy")
        policy = (AutoModelForCausalLM.from_pretrained(tmp_path / "policy"), tokenizer)
    trainer = make_trainer(tmp_path, RecordingReward(), policy=policy, **overrides)
    Mentor.from_config({}).attach(trainer)
    seen = spy_every_loss(trainer)
    trainer.train()
    assert_rescued(trainer, seen, grpo_advantages(2, scale))
    if overrides.get("beta"):
        assert trainer.ref_model is not None and "kl" in trainer.state.log_history[0]
    if overrides.get("mask_truncated_completions"):  # 6-token completions never end: every row is masked out
        assert all(int(batch["completion_mask"].sum()) == 0 for batch in seen)


class OddHintReward(RecordingReward):
    """A second reward function: pays rows 1 and 3 of each hinted group."""

    __name__ = "odd_hint_reward"

    def __call__(self, prompts, completions, answer, mentor_hint=None, **kwargs):
        return [1.0 if hint and i % 2 == 1 else 0.0 for i, hint in enumerate(mentor_hint or [""] * len(prompts))]


def test_several_reward_functions_are_weighted_as_trl_weighs_them(tmp_path):
    trainer = make_trainer(tmp_path, [RecordingReward(), OddHintReward()], reward_weights=[1.0, 0.5])
    Mentor.from_config({}).attach(trainer)
    seen = spy_every_loss(trainer)
    trainer.train()
    assert_rescued(trainer, seen, grpo_advantages(2, rewards=[1.0, 0.5, 1.0, 0.5]))
    assert {r["reattempt"][1]["reward"] for r in TraceStore(tmp_path, readonly=True)} == {0.5}


def test_no_hint_reaches_the_generations_of_an_evaluation_during_training(tmp_path):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward, eval_dataset=make_dataset("hard", 8, seed=1), eval_strategy="steps",
                           eval_steps=1, per_device_eval_batch_size=8)
    Mentor.from_config({}).attach(trainer)
    seen = spy_every_loss(trainer)
    trainer.train()
    first, hinted, *evaluation = reward.calls  # the step's attempts, its re-attempts, then the evaluation's
    assert not any(first["hints"]) and all(hinted["hints"])
    assert sum(len(call["completions"]) for call in evaluation) >= 8
    assert not any(hint for call in evaluation for hint in call["hints"])
    assert_rescued(trainer, seen, grpo_advantages(2))
    eval_log = next(log for log in trainer.state.log_history if "eval_loss" in log or "eval_reward" in log)
    assert not any(key.startswith(("mentor/", "eval_mentor/")) for key in eval_log)
    assert len(TraceStore(tmp_path, readonly=True).interventions()) == 2


def test_a_lora_adapter_trains_on_the_hinted_rows(tmp_path):
    from peft import LoraConfig

    trainer = make_trainer(tmp_path, RecordingReward(),
                           peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    Mentor.from_config({}).attach(trainer)
    lora = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_B" in n}
    seen = spy_every_loss(trainer)
    trainer.train()
    assert_rescued(trainer, seen, grpo_advantages(2))
    assert lora and any(not torch.equal(p.detach(), lora[n]) for n, p in trainer.model.named_parameters() if n in lora)


def rloo_advantages(groups: int) -> list[float]:
    """RLOO's leave-one-out advantages of `groups` hinted groups of PAID each, sorted."""
    rewards = torch.tensor(PAID)
    baselines = (rewards.sum() - rewards) / (G - 1)
    return sorted((rewards - baselines).tolist() * groups)


def test_rloo_trainer_is_mentored_with_the_same_three_lines(tmp_path):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward, rloo=True)
    callback = Mentor.from_config({}).attach(trainer)
    seen = spy_every_loss(trainer)
    trainer.train()
    assert_rescued(trainer, seen, rloo_advantages(2))
    assert [len(c["completions"]) for c in reward.calls] == [8, 8]  # each completion scored once
    assert len(callback.hint_history) == 2 and len(TraceStore(tmp_path, readonly=True).interventions()) == 2


def test_rloo_with_prefix_placement_and_strip_hint_trains_the_prefix(tmp_path):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward, rloo=True)
    Mentor.from_config({"hint_placement": "prefix", "strip_hint": True, "train_prefix": True}).attach(trainer)
    seen = spy_every_loss(trainer)
    trainer.train()
    tokenizer = trainer.processing_class
    hints = {row["prompt"]: row["hint"] for row in TraceStore(tmp_path, readonly=True)}
    prompts = tokenizer.batch_decode(seen[0]["prompt_ids"], skip_special_tokens=True)
    completions = tokenizer.batch_decode(seen[0]["completion_ids"], skip_special_tokens=True)
    advantages = seen[0]["advantages"].view(-1).tolist()
    # The successes train the partial answer after the original prompt, with RLOO's positive advantage
    trained = [a for p, c, a in zip(prompts, completions, advantages)
               if p.strip() in hints and c.startswith(" " + hints[p.strip()])]
    assert trained == pytest.approx([max(rloo_advantages(1))] * 4, abs=1e-4)
    assert all(c.startswith(" ") for c in reward.calls[1]["completions"])  # the verifier judged the whole response


def test_attach_names_the_supported_trainers(tmp_path):
    with pytest.raises(TypeError, match=r"supports GRPOTrainer, RLOOTrainer"):
        Mentor.from_config({}).attach(object())
