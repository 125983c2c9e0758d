"""Issue 17's two training metrics in real GRPOTrainer steps on the tiny in-memory policy: `mentor/graduated`
(problems hinted at an earlier step whose group now earns reward unhinted) and `mentor/reliance` (HiLL's hint
reliance on the step's correct hinted rows, every `reliance_every` steps); and the `mentor/*` metrics reaching a
reporter (`report_to: tensorboard`)."""

import json
import struct
from pathlib import Path

import pytest
import torch

from mentor import Mentor
from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy
from mentor.tasks import get_task
from mentor.traces import TraceStore
from tiny_grpo import G, RecordingReward, ScheduledReward, make_trainer


def mentor_logs(trainer) -> list[dict]:
    return [log for log in trainer.state.log_history if "mentor/interventions" in log]


def test_a_problem_hinted_earlier_graduates_when_its_group_earns_reward_unhinted(tmp_path):
    dataset = make_dataset("hard", 2, seed=0)  # both problems in every batch of 2 groups
    hinted_one, never_hinted = dataset["problem_id"]
    # `hinted_one` collapses at step 0 (hinted) and is solved unhinted at step 1 only; `never_hinted` earns reward
    # unhinted at every step, so it is never hinted and never graduates.
    solved = {hinted_one: {1}, never_hinted: {0, 1, 2}}
    trainer = make_trainer(tmp_path, ScheduledReward(solved), max_steps=2, dataset=dataset, save_strategy="steps",
                           save_steps=2)
    callback = Mentor.from_config({}).attach(trainer)
    trainer.train()
    logs = mentor_logs(trainer)
    assert [log["mentor/interventions"] for log in logs] == [1, 0]
    assert [log["mentor/graduated"] for log in logs] == [0, 1]
    assert [log["mentor/graduated_total"] for log in logs] == [0, 1]
    assert callback.graduated == {hinted_one: 1} and never_hinted not in callback.hint_history
    assert [s["mentor/graduated"] for s in TraceStore(tmp_path, readonly=True).steps()] == [0, 1]
    state = json.loads((tmp_path / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["stateful_callbacks"]["MentorCallback"]["attributes"]["graduated"] == {hinted_one: 1}

    # Resumed: at step 2 the problem collapses again (hinted, not graduated); the run's count is restored.
    resumed = make_trainer(tmp_path, ScheduledReward(solved), max_steps=3, dataset=dataset, save_strategy="no")
    fresh = Mentor.from_config({}).attach(resumed)
    resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-2"))
    last = mentor_logs(resumed)[-1]
    assert last["mentor/interventions"] == 1 and last["mentor/graduated"] == 0
    assert last["mentor/graduated_total"] == 1 and fresh.graduated == {hinted_one: 1}


def logprob(model, context: list[int], scored: list[int]) -> float:
    """Log p(scored | context) under `model`, one unpadded sequence: the test's own computation."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context + scored])).logits[0].float()
    return sum(torch.log_softmax(logits[len(context) - 1 + t], dim=-1)[token].item() for t, token in enumerate(scored))


@pytest.mark.parametrize("placement", ["prompt", "prefix"])
def test_reliance_is_logged_on_the_reliance_every_steps_and_equals_a_direct_computation(tmp_path, placement):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=4)
    Mentor.from_config({"reliance_every": 2, "hint_placement": placement}).attach(trainer)
    batches, inner = {}, trainer._generate_and_score_completions

    def generate_and_score(inputs):  # the weights the step generated with, and the rows it trains on
        weights = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
        out = inner(inputs)
        batches[trainer.state.global_step] = (weights, out)
        return out

    trainer._generate_and_score_completions = generate_and_score
    trainer.train()
    steps = TraceStore(tmp_path, readonly=True).steps()
    assert [s["step"] for s in steps if "mentor/reliance" in s] == [0, 2]
    assert all("mentor/reliance_s" in s for s in steps if "mentor/reliance" in s)
    assert not any("mentor/reliance" in s or "mentor/reliance_s" in s for s in steps if s["step"] in (1, 3))
    # In the trainer's logs, each entry is the step after its update.
    assert [log["step"] for log in trainer.state.log_history if "mentor/reliance" in log] == [1, 3]

    tokenizer, records = trainer.processing_class, TraceStore(tmp_path, readonly=True).interventions()
    model, task = build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)[0], get_task("arithmetic")
    model.eval()
    for step in (0, 2):
        weights, out = batches[step]
        model.load_state_dict(weights)
        plain = {(task.hinted_prompt(r["prompt"], r["hint"]) if placement == "prompt"
                  else r["prompt"] + task.response_prefix(r["hint"])): tokenizer(text=r["prompt"])["input_ids"]
                 for r in records if r["step"] == step}
        terms = []
        for p, pm, c, cm, advantage in zip(out["prompt_ids"], out["prompt_mask"], out["completion_ids"],
                                           out["completion_mask"], out["advantages"]):
            hinted, completion = p[pm.bool()].tolist(), c[cm.bool()].tolist()
            text = tokenizer.decode(hinted, skip_special_tokens=True)
            if text in plain and advantage > 0:  # a hinted row whose re-attempt earned reward
                # With `prefix` placement the response y is the prefix the hinted prompt adds, then the continuation.
                prefix = hinted[len(plain[text]):] if placement == "prefix" else []
                assert not prefix or hinted[:len(plain[text])] == plain[text]
                response = prefix + completion
                unhinted = logprob(model, plain[text], response)
                terms.append((unhinted - logprob(model, hinted, completion)) / len(response))
        assert len(terms) == 2 * G // 2  # two hinted groups, each with its even rows paid
        logged = next(s["mentor/reliance"] for s in steps if s["step"] == step)
        assert logged == pytest.approx(sum(terms) / len(terms), abs=2e-6)  # float32 sums of ~6 log-probs


def forward_modes(model) -> list[tuple[bool, bool]]:
    """(training, grad enabled) of every forward call of `model` from now on."""
    calls = []
    model.register_forward_hook(lambda module, args, output: calls.append((module.training, torch.is_grad_enabled())))
    return calls


@pytest.mark.parametrize("config", [{}, {"reliance_every": 0}], ids=["default", "zero"])
def test_reliance_is_off_by_default_with_no_extra_forward_pass(tmp_path, config):
    runs = {}
    for name, mentor in (("off", config), ("on", {"reliance_every": 1})):
        trainer = make_trainer(tmp_path / name, RecordingReward())
        Mentor.from_config(mentor).attach(trainer)
        runs[name] = forward_modes(trainer.model)
        trainer.train()
        runs[name + "_log"] = trainer.state.log_history[0]
    assert "mentor/reliance" not in runs["off_log"] and "mentor/reliance_s" not in runs["off_log"]
    assert isinstance(runs["on_log"]["mentor/reliance"], float)
    # The same seeded step, less the two reliance passes (unhinted and hinted; eval mode, no gradient).
    assert len(runs["on"]) == len(runs["off"]) + 2
    assert runs["on"].count((False, False)) == runs["off"].count((False, False)) + 2


def test_a_reliance_pass_that_fails_is_counted_and_training_goes_on(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr("mentor.trl.choice.reliance_terms", broken)
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2)
    Mentor.from_config({"reliance_every": 1}).attach(trainer)
    trainer.train()
    logs = mentor_logs(trainer)
    assert trainer.state.global_step == 2 and [log["mentor/reliance_errors"] for log in logs] == [1, 1]
    assert not any("mentor/reliance" in log for log in logs)
    assert [log["mentor/collapse_rate_after"] for log in logs] == [0.0, 0.0]  # the hints still trained


def event_scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the TensorBoard event files under `folder` as (step, value), by tag, read back from the file's
    records (each: an 8-byte length, its 4-byte CRC, the Event proto, its 4-byte CRC)."""
    from tensorboardX.proto.event_pb2 import Event

    scalars: dict[str, list[tuple[int, float]]] = {}
    for path in folder.rglob("events.out.tfevents.*"):
        data, at = path.read_bytes(), 0
        while at < len(data):
            (length,) = struct.unpack("<Q", data[at:at + 8])
            event = Event.FromString(data[at + 12:at + 12 + length])
            at += 12 + length + 4
            for value in event.summary.value:
                scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    return scalars


def test_report_to_tensorboard_writes_the_mentor_metrics(tmp_path):
    """Tagged `train/mentor/...` (transformers' callback prefixes `train/`), at the step after the update: 1 for the
    first step, whose records the trace store keeps as step 0 (docs/configuration.md, Metrics)."""
    trainer = make_trainer(tmp_path, RecordingReward(), report_to="tensorboard")
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    scalars = event_scalars(tmp_path)
    assert scalars["train/mentor/interventions"] == [(1, 2.0)]
    assert scalars["train/mentor/collapse_rate_before"] == [(1, 1.0)]
    assert scalars["train/mentor/recovered"] == [(1, 1.0)] and "train/reward" in scalars  # beside TRL's own
    assert [s["step"] for s in TraceStore(tmp_path, readonly=True).steps()] == [0]
