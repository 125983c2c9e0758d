"""`correct_off_policy` on a real GRPOTrainer (tests/tiny_grpo.py), transformers' generation: each row `strip_hint`
trains after the unhinted prompt has its advantage weighted by min(cap, pi(y|x) / pi(y|x,hint)), the ratio computed
by hand here with a copy of the policy that generated it; and the loss TRL computes equals the hand computation of
GRPO's loss from those weighted advantages."""

import math

import pytest
import torch
from test_trl_options import grpo_advantages

from mentor import Mentor
from mentor.lab.model import build_policy
from mentor.traces import TraceStore
from tiny_grpo import RecordingReward, make_trainer

CAP = 3.0  # TRL's default vllm_importance_sampling_clip_max, the cap this option shares


def logprob(model, context: list[int], response: list[int]) -> float:
    with torch.no_grad():
        ids = torch.tensor([context + response])
        logp = torch.log_softmax(model(input_ids=ids).logits[0, len(context) - 1:-1].float(), dim=-1)
        return logp.gather(1, torch.tensor(response)[:, None]).sum().item()


def run(tmp_path, correct: bool):
    trainer = make_trainer(tmp_path, RecordingReward(), loss_type="grpo")
    # The policy that generates, before the step's update: tiny_grpo's, built again from its seed. Not a deepcopy of
    # trainer.model: TRL's fused LM head (trl.trainer.utils.add_fused_lm_head) replaces its forward by a closure over
    # the original, so a copy would score with the trained weights once the step has run.
    policy = build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)[0].eval()
    Mentor.from_config({"strip_hint": True, "correct_off_policy": correct}).attach(trainer)
    seen, compute_loss = [], trainer._compute_loss

    def spy(model, inputs):
        loss = compute_loss(model, inputs)
        seen.append(({k: inputs[k].detach().clone() for k in ("prompt_ids", "prompt_mask", "completion_ids",
                                                              "completion_mask", "advantages")}, loss.item()))
        return loss

    trainer._compute_loss = spy
    trainer.train()
    return trainer, policy, seen, TraceStore(tmp_path, readonly=True).interventions()


def test_the_stripped_rows_advantages_carry_the_truncated_importance_ratio(tmp_path):
    trainer, policy, seen, records = run(tmp_path, correct=True)
    (inputs, loss), = seen
    tokenizer = trainer.processing_class
    hinted_ids = {r["problem_id"]: tokenizer(text=r["hinted_prompt"])["input_ids"] for r in records}
    plain = grpo_advantages(1)  # one hinted group's advantages, [1, 0, 1, 0] paid, sorted
    weights = []
    for i in range(inputs["advantages"].shape[0]):
        prompt = inputs["prompt_ids"][i][inputs["prompt_mask"][i].bool()].tolist()
        response = inputs["completion_ids"][i][inputs["completion_mask"][i].bool()].tolist()
        pid = next(r["problem_id"] for r in records if r["prompt"] in tokenizer.decode(prompt, skip_special_tokens=True))
        ratio = math.exp(logprob(policy, prompt, response) - logprob(policy, hinted_ids[pid], response))
        weights.append(min(CAP, ratio))
    # TRL shuffles the rows: a paid row has the group's positive advantage, an unpaid one the negative (w > 0).
    high, low = max(plain), min(plain)
    observed = inputs["advantages"].view(-1).tolist()
    expected = torch.tensor([w * (high if a > 0 else low) for w, a in zip(weights, observed)])
    assert observed == pytest.approx(expected.tolist(), rel=1e-4)
    assert any(abs(w - 1.0) > 1e-3 for w in weights)  # the weights are not all 1: the test can tell
    # GRPO's loss with one iteration (the ratio to the old policy is 1): the mean over rows of -A per token.
    mask = inputs["completion_mask"].float()
    by_hand = (-(expected.view(-1, 1) * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean().item()
    assert loss == pytest.approx(by_hand, rel=1e-4)
    log = next(log for log in trainer.state.log_history if "mentor/off_policy_rows" in log)
    assert log["mentor/off_policy_rows"] == inputs["advantages"].shape[0]  # replace_group: every row is hinted
    assert log["mentor/off_policy_weight"] == pytest.approx(sum(weights) / len(weights), rel=1e-4)
    assert log["mentor/off_policy_capped"] == sum(w >= CAP for w in weights)


def test_without_the_option_the_stripped_rows_train_unweighted(tmp_path):
    _, _, seen, _ = run(tmp_path, correct=False)
    (inputs, _), = seen
    assert sorted(inputs["advantages"].view(-1).tolist()) == pytest.approx(grpo_advantages(2), abs=1e-4)
