"""The mentor inside real GRPOTrainer steps on CPU, with a tiny policy built in memory (tests/tiny_grpo.py).

A random policy never answers a hard addition, so every group collapses. These tests check the mechanics
with a reward that pays hinted rows (it reads the `mentor_hint` column, as any reward function can);
test_lab.py checks that a pre-trained policy really earns reward from the arithmetic mentor's hints.
"""

import json

import pytest
import torch

from mentor import Mentor, MentorCallback
from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy
from mentor.tasks import get_task
from mentor.traces import TraceStore
from mentor.types import InputError
from tiny_grpo import G, RecordingReward, make_trainer


def weights(model):
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def moved(model, before):
    return sum(not torch.equal(p.detach(), before[name]) for name, p in model.named_parameters())


def test_without_the_mentor_a_collapsed_batch_does_not_move_the_policy(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward())
    before = weights(trainer.model)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["frac_reward_zero_std"] == 1.0 and log["grad_norm"] == 0.0
    assert moved(trainer.model, before) == 0


def test_with_the_mentor_collapsed_groups_are_rescued_in_the_step(tmp_path):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward)
    before = weights(trainer.model)
    callback = Mentor.from_config({}).attach(trainer)
    assert isinstance(callback, MentorCallback) and callback in trainer.callback_handler.callbacks
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/collapse_rate_before"] == 1.0
    assert log["mentor/collapse_rate_after"] < log["mentor/collapse_rate_before"]
    assert log["mentor/interventions"] == 2 and log["mentor/recovered"] == 1.0
    assert log["mentor/tier_mean"] == 3 and log["mentor/error_class/no_answer"] == 2
    assert log["grad_norm"] > 0 and moved(trainer.model, before) > 0
    # Each completion is scored once: 8 first attempts, then 8 re-attempts; TRL's own call hit the cache.
    assert [len(c["completions"]) for c in reward.calls] == [8, 8]
    assert all(h == "" for h in reward.calls[0]["hints"]) and all(reward.calls[1]["hints"])


def test_traces_are_readable_from_the_run_directory(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2)
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    store = TraceStore(tmp_path, readonly=True)
    assert store.count() == 4
    assert [s["step"] for s in store.steps()] == [0, 1]
    first = store.interventions(limit=1)[0]
    assert first["step"] == 0 and len(first["attempts"]) == G and len(first["reattempt"]) == G
    assert first["hint"] and first["recovered"] is True
    assert [n["node"] for n in first["nodes"]] == ["error_classifier", "root_cause_analyst", "hint_composer",
                                                    "leakage_checker"]
    assert first["strip_hint"] is False and first["train_prefix"] is False  # on-policy, and labelled so
    # The record carries its group (the reference the mentor judged by) and the prompt the policy was sent.
    row = next(r for r in make_dataset("hard", 16, seed=0) if r["problem_id"] == first["problem_id"])
    assert first["reference"] == {"answer": row["answer"], "operands": row["operands"]}
    assert first["hinted_prompt"] == get_task("arithmetic").hinted_prompt(first["prompt"], first["hint"])
    assert first["previous_hints"] == [] and store.interventions(step_min=1)[0]["hinted_prompt"]
    assert store.interventions(step_min=1) == store.interventions(after_id=2)
    assert store.get(first["id"])["problem_id"] == first["problem_id"]


# Each strategy's picks and splice are unit-tested in test_batch_logic.py; one runs here through a real trainer.
@pytest.mark.parametrize("strategy,extra,hinted_rows", [
    ("replace_k", {"k": 1}, 1),
])
def test_strategies_put_the_right_rows_in_the_batch(tmp_path, strategy, extra, hinted_rows, loss_spy):
    trainer = make_trainer(tmp_path, RecordingReward())
    Mentor.from_config({"strategy": strategy, **extra}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    tokenizer = trainer.processing_class
    prompts = tokenizer.batch_decode(seen["prompt_ids"], skip_special_tokens=True)
    hinted = sum("Hint:" in p for p in prompts)
    assert hinted == 2 * hinted_rows  # two collapsed groups
    log = trainer.state.log_history[0]
    assert log["mentor/collapse_rate_after"] == 0.0 and seen["advantages"].abs().sum() > 0


def test_strip_hint_trains_the_hinted_completion_after_the_original_prompt(tmp_path, loss_spy):
    trainer = make_trainer(tmp_path, RecordingReward())
    Mentor.from_config({"strip_hint": True}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    prompts = trainer.processing_class.batch_decode(seen["prompt_ids"], skip_special_tokens=True)
    assert not any("Hint:" in p for p in prompts)
    assert trainer.state.log_history[0]["mentor/collapse_rate_after"] == 0.0


def test_prefix_placement_trains_the_prefix_tokens_when_asked(tmp_path, loss_spy):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward)
    Mentor.from_config({"hint_placement": "prefix", "strip_hint": True, "train_prefix": True}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    tokenizer = trainer.processing_class
    completions = tokenizer.batch_decode(seen["completion_ids"], skip_special_tokens=True)
    prompts = tokenizer.batch_decode(seen["prompt_ids"], skip_special_tokens=True)
    hints = {row["prompt"]: row["hint"] for row in TraceStore(tmp_path, readonly=True)}
    assert len(hints) == 2 and all("Hint" not in p for p in prompts)
    # The reward pays every other re-attempt: each success trains its partial answer as completion tokens after the
    # original prompt; each failure stays as generated, so its loss never pushes the true partial answer down.
    successes = [c for p, c in zip(prompts, completions) if p.strip() in hints and c.startswith(" " + hints[p.strip()])]
    failures = [p for p in prompts if p.strip() in {f"{q} {h}" for q, h in hints.items()}]
    assert len(successes) == len(failures) == G
    # The verifier judged the whole response, prefix included.
    assert all(c.startswith(" ") for c in reward.calls[1]["completions"])


def test_next_attempt_mode_hints_the_problem_when_it_comes_back(tmp_path):
    reward = RecordingReward()
    dataset = make_dataset("hard", 2, seed=0)  # two problems: each batch sees both again
    trainer = make_trainer(tmp_path, reward, max_steps=2, dataset=dataset)
    callback = Mentor.from_config({"mode": "next_attempt"}).attach(trainer)
    trainer.train()
    first, second = reward.calls[0], reward.calls[1]
    assert len(reward.calls) == 2  # no re-generation inside the step
    assert not any(first["hints"]) and all(second["hints"])
    assert len(callback.hint_history) == 2


def test_next_attempt_with_prefix_placement_scores_the_whole_response(tmp_path):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward, max_steps=2, dataset=make_dataset("hard", 2, seed=0))
    Mentor.from_config({"mode": "next_attempt", "hint_placement": "prefix"}).attach(trainer)
    trainer.train()
    second = reward.calls[1]
    assert all(h and c.startswith(" " + h) for h, c in zip(second["hints"], second["completions"]))


ROLE_TEMPLATE = ("{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def chat_policy():
    """A tiny policy whose tokenizer adds BOS itself and whose chat template also writes it, as Llama 3's do."""
    from tokenizers.processors import TemplateProcessing

    model, tokenizer = build_policy(0, hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    tokenizer._tokenizer.post_processor = TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tokenizer.chat_template = ROLE_TEMPLATE
    return model, tokenizer


def chat_dataset(n=16):
    return make_dataset("hard", n, seed=0).map(lambda row: {"prompt": [{"role": "user", "content": row["prompt"]}]})


def test_prefix_placement_continues_the_assistant_turn_of_a_conversational_prompt(tmp_path, loss_spy):
    reward = RecordingReward()
    model, tokenizer = chat_policy()
    trainer = make_trainer(tmp_path, reward, dataset=chat_dataset(), policy=(model, tokenizer))
    Mentor.from_config({"hint_placement": "prefix", "strip_hint": True, "train_prefix": True}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    bos = tokenizer.bos_token_id
    prompts = [[t for t in ids if t != tokenizer.pad_token_id] for ids in seen["prompt_ids"]]
    completions = tokenizer.batch_decode(seen["completion_ids"], skip_special_tokens=True)
    hints = {row["prompt"]: row["hint"] for row in TraceStore(tmp_path, readonly=True)}
    originals = {q: tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                                  tokenize=True, return_dict=True)["input_ids"] for q in hints}
    assert len(hints) == 2 and all(ids.count(bos) == 1 and ids[0] == bos for ids in prompts)  # one BOS, not two
    # Every re-attempt continued `<|assistant|>` + the partial answer: the successes train it after the original
    # tokens of the chat prompt, the failures keep it on the prompt side.
    prefix_ids = {q: tokenizer(text=" " + h, add_special_tokens=False)["input_ids"] for q, h in hints.items()}
    successes = [q for q in hints for p, c in zip(prompts, completions)
                 if p == originals[q] and c.startswith(" " + hints[q])]
    failures = [q for q in hints for p in prompts if p == originals[q] + prefix_ids[q]]
    assert len(successes) == len(failures) == G
    # The reward functions see message lists, as for the rest of the batch, holding the whole response.
    rescored = reward.calls[1]
    assert all(isinstance(c, list) and c[0]["role"] == "assistant" for c in rescored["completions"])
    assert all(c[0]["content"].startswith(" " + h) for c, h in zip(rescored["completions"], rescored["hints"]))
    assert trainer.state.log_history[0]["mentor/collapse_rate_after"] == 0.0


def test_next_attempt_with_prefix_placement_renders_a_conversational_batch(tmp_path, loss_spy):
    reward = RecordingReward()
    trainer = make_trainer(tmp_path, reward, max_steps=2, dataset=chat_dataset(2), policy=chat_policy())
    Mentor.from_config({"mode": "next_attempt", "hint_placement": "prefix"}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    second = reward.calls[1]
    assert all(h and c[0]["content"].startswith(" " + h) for h, c in zip(second["hints"], second["completions"]))
    assert all(list(ids).count(trainer.processing_class.bos_token_id) == 1 for ids in seen["prompt_ids"])


@pytest.mark.parametrize("placement", ["prompt", "prefix"])
@pytest.mark.parametrize("turns", [["system"], ["system", "assistant"]], ids=["system", "system+assistant"])
def test_a_conversational_prompt_without_a_user_turn_gets_its_hint_where_the_config_says(tmp_path, placement, turns,
                                                                                        loss_spy):
    """TRL trains prompts of system and assistant turns only; the mentor hints them too: `prompt` placement in a new
    user turn at the end, `prefix` placement at the start of the assistant turn."""
    from mentor.placement import prompt_text

    def conversation(row):
        text = {"system": row["prompt"], "assistant": "Let me add the columns."}
        return {"prompt": [{"role": role, "content": text[role]} for role in turns]}

    dataset = make_dataset("hard", 16, seed=0).map(conversation)
    trainer = make_trainer(tmp_path, RecordingReward(), dataset=dataset, policy=chat_policy())
    Mentor.from_config({"hint_placement": placement}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/interventions"] == 2 and log["mentor/failures"] == 0 and log["mentor/skipped"] == 0
    assert log["mentor/collapse_rate_after"] == 0.0
    tokenizer, task = trainer.processing_class, get_task("arithmetic")
    prompts = tokenizer.batch_decode(seen["prompt_ids"], skip_special_tokens=True)
    by_text = {prompt_text(row["prompt"]): row["prompt"] for row in dataset}
    records = list(TraceStore(tmp_path, readonly=True))
    assert len(records) == 2
    for record in records:
        messages, hint = by_text[record["prompt"]], record["hint"]
        assert hint and messages[0]["content"] in record["prompt"]  # the problem reached the mentor
        if placement == "prompt":
            messages = messages + [{"role": "user", "content": task.hinted_prompt("", hint).strip()}]
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        text = text.removeprefix(tokenizer.bos_token) + (task.response_prefix(hint) if placement == "prefix" else "")
        assert prompts.count(text) == G, (text, prompts)  # the group's G re-attempts, hinted as the config says
        assert record["hinted_prompt"] == text  # the trace keeps the prompt text the re-attempts were generated from


class LastRowReward(RecordingReward):
    """Pays only the last row of each hinted group: under `mixed`, the rows spliced in all fail."""

    def __call__(self, prompts, completions, answer, mentor_hint=None, **kwargs):
        super().__call__(prompts, completions, answer, mentor_hint, **kwargs)
        return [1.0 if hint and i % G == G - 1 else 0.0 for i, hint in enumerate(mentor_hint or [""] * len(prompts))]


def test_mixed_escalates_while_the_spliced_group_still_scores_zero(tmp_path):
    trainer = make_trainer(tmp_path, LastRowReward())
    Mentor.from_config({"strategy": "mixed", "mixed_share": 0.5, "max_rounds": 2}).attach(trainer)
    trainer.train()
    rounds = sorted(r["round"] for r in TraceStore(tmp_path, readonly=True))
    assert rounds == [1, 1, 2, 2]  # round 1's re-attempts earned reward, but not in the rows spliced in


def test_hinted_rows_show_their_hint_in_the_completions_table(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward(), log_completions=True)
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    column = trainer._logs["extra"]["mentor_hint"]
    hints = {r["hint"] for r in TraceStore(tmp_path, readonly=True)}
    assert len(column) == len(trainer._logs["completion"]) == 8 and set(column) == hints


def test_checkpoint_then_resume_restores_the_mentor_state(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2, save_strategy="steps", save_steps=2)
    callback = Mentor.from_config({}).attach(trainer)
    trainer.train()
    history = json.loads(json.dumps(callback.hint_history))
    assert history and callback.totals["mentor/interventions"] == 4
    state = json.loads((tmp_path / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["stateful_callbacks"]["MentorCallback"]["attributes"]["hint_history"] == history

    resumed = make_trainer(tmp_path, RecordingReward(), max_steps=3, save_strategy="no")
    fresh = Mentor.from_config({}).attach(resumed)
    resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-2"))
    assert fresh.totals["mentor/interventions"] == 6  # 4 restored + 2 from step 3
    for pid, hints in history.items():
        assert fresh.hint_history[pid][:len(hints)] == hints


def test_a_mentor_that_fails_every_call_lets_training_finish(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("mentor down")

    monkeypatch.setattr(get_task("arithmetic"), "analyse", broken)
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2)
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    assert trainer.state.global_step == 2
    logs = [log for log in trainer.state.log_history if "mentor/failures" in log]
    assert [log["mentor/failures"] for log in logs] == [2, 2]
    assert all(log["mentor/collapse_rate_after"] == 1.0 for log in logs)


def test_a_slow_mentor_phase_logs_one_progress_line_per_step_on_rank_0(tmp_path, monkeypatch, caplog):
    # tests/stalling_graph.py sleeps SLOW_S (0.4 s) in each `slow-*` group: the step's mentor phase passes 0.1 s.
    from pathlib import Path

    import mentor.trl.hook

    monkeypatch.setattr(mentor.trl.hook, "SLOW_MENTOR_S", 0.1)
    rows = make_dataset("hard", 16, seed=0)
    rows = rows.map(lambda row, i: {"problem_id": f"slow-{i}"}, with_indices=True)
    trainer = make_trainer(tmp_path, RecordingReward(), dataset=rows)
    Mentor.from_config({"graph": f"{Path(__file__).parent / 'stalling_graph.py'}:graph"}).attach(trainer)
    with caplog.at_level("WARNING", logger="mentor"):
        trainer.train()
    lines = [r.getMessage() for r in caplog.records if "in the mentor graph" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("mentor: step 0: 2 group(s) took "), lines  # one line, not one a group
    assert lines[0].endswith("in the mentor graph (2 hinted, 0 llm fallbacks); the step goes on"), lines


def test_an_unreachable_llm_server_falls_back_to_rules_and_is_counted(tmp_path):
    config = {"nodes": {"hint_composer": "llm"},
              "llm": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "request_timeout_s": 2,
                      "max_retries": 0}}
    trainer = make_trainer(tmp_path, RecordingReward())
    Mentor.from_config(config).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/llm_fallbacks"] == 2 and log["mentor/collapse_rate_after"] == 0.0


def test_attach_refuses_what_it_cannot_serve(tmp_path):
    dataset = make_dataset("hard", 16, seed=0).remove_columns(["operands"])
    trainer = make_trainer(tmp_path, RecordingReward(), dataset=dataset)
    with pytest.raises(InputError, match=r"lacks column\(s\) \['operands'\]"):
        Mentor.from_config({"task": "arithmetic"}).attach(trainer)
    with pytest.raises(TypeError, match="GRPOTrainer"):
        Mentor.from_config({}).attach(object())
    renamed = make_dataset("hard", 16, seed=0).rename_column("answer", "gold")
    trainer = make_trainer(tmp_path, RecordingReward(), dataset=renamed.add_column("answer", renamed["gold"]))
    Mentor.from_config({"columns": {"answer": "gold"}}).attach(trainer)
    with pytest.raises(RuntimeError, match="already attached"):
        Mentor.from_config({}).attach(trainer)


def test_the_mentor_is_built_one_way_from_a_config_source():
    assert Mentor.from_config({"max_leak_retries": 1}).config.max_leak_retries == 1
    with pytest.raises(InputError, match=r"Mentor\(\.\.\.\) takes a loaded MentorConfig, got dict; .*Mentor\.from_config"):
        Mentor({"max_leak_retries": 1})


def test_attach_refuses_k_larger_than_the_group(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward())
    with pytest.raises(InputError, match=f"k: {G + 1} is out of range; .* num_generations = {G} rows: set k to an "
                                         f"integer from 1 to {G}"):
        Mentor.from_config({"strategy": "replace_k", "k": G + 1}).attach(trainer)
    Mentor.from_config({"strategy": "replace_k", "k": G}).attach(trainer)  # the whole group is allowed


def test_a_dripping_llm_server_is_cut_at_llm_request_timeout_s_and_the_step_gets_rules_hints(tmp_path, openai_server):
    from openai_server import Reply

    openai_server.behaviour = lambda req: Reply(drip_s=0.5)  # each read is quick: a per-read timeout never fires
    config = {"nodes": {"hint_composer": "llm"}, "timeout_s": 30,
              "llm": {"provider": "openai", "model": "m", "base_url": openai_server.base_url, "request_timeout_s": 2,
                      "max_retries": 1}}
    trainer = make_trainer(tmp_path, RecordingReward())
    Mentor.from_config(config).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/llm_fallbacks"] == 2 and log["mentor/failures"] == 0
    assert log["mentor/collapse_rate_after"] == 0.0  # both groups got a rules hint, and were rescued
    # Cut at 2 s (the records' fallbacks say so), not the 30 s group bound: one request a group, both at once.
    assert 2 <= log["mentor/mentor_s"], log["mentor/mentor_s"]
    assert openai_server.count() == 2 and openai_server.max_in_flight == 2
    records = list(TraceStore(tmp_path, readonly=True))
    assert all(r["fallbacks"] == ["hint_composer: TimeoutError: no answer within llm.request_timeout_s = 2 s"]
               for r in records) and len(records) == 2


def test_a_row_without_its_reference_is_skipped_and_counted(tmp_path):
    dataset = make_dataset("hard", 16, seed=0)
    dataset = dataset.map(lambda row: {"operands": []})
    trainer = make_trainer(tmp_path, RecordingReward(), dataset=dataset)
    Mentor.from_config({}).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/skipped"] == log["mentor/skipped/missing_reference"] == 2
    assert log["mentor/interventions"] == 0 and log["mentor/collapse_rate_after"] == 1.0


def test_a_math_rows_concepts_column_reaches_the_mentor_and_a_row_without_one_gets_a_counted_format_only_hint(tmp_path):
    from datasets import Dataset

    from mentor.rewards import math_reward
    from mentor.tasks.math.hints import FORMAT_HINT, FORMAT_HINT_TRUNCATED

    concept = "Split 645 by place value (600 + 40 + 5), multiply 356 by each part and add the products."
    rows = Dataset.from_list([
        {"problem_id": "bare", "prompt": "What is 356 * 645?", "answer": "229620", "concepts": []},
        {"problem_id": "taught", "prompt": "What is 356 * 645? ", "answer": "229620", "concepts": [concept]}])
    trainer = make_trainer(tmp_path, math_reward, dataset=rows)  # a random policy: both groups collapse
    Mentor.from_config({"task": "math"}).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/interventions"] == 2 and log["mentor/format_only_hints"] == 1
    records = {r["problem_id"]: r for r in TraceStore(tmp_path, readonly=True)}
    taught, bare = records["taught"], records["bare"]
    assert taught["reference"] == {"answer": "229620", "concepts": [concept]}  # the hook copied the column
    assert taught["hint"].endswith(f"Key idea: {concept}")  # after the format lead of a cut attempt, if any
    assert bare["hint"] in (FORMAT_HINT, FORMAT_HINT_TRUNCATED)


def test_the_version_guard_names_the_fix(tmp_path, monkeypatch):
    import trl

    trainer = make_trainer(tmp_path, RecordingReward())
    monkeypatch.setattr(trl, "__version__", "0.9.0")
    with pytest.raises(RuntimeError, match=r"TRL >= 1\.14\.0, < 1\.17\.0; this is TRL 0\.9\.0\. .*"
                                           "pip install 'trl>=1.14.0,<1.17.0'"):
        Mentor.from_config({}).attach(trainer)


def test_a_trl_that_cannot_train_here_is_refused_as_trls_own_bug(tmp_path, monkeypatch):
    """TRL 1.15.0 without Triton sets its chunked log-prob kernel to None and fails at the first loss, mentor or
    not (measured: AttributeError: 'NoneType' object has no attribute 'apply'). Attach says so, and the fix."""
    from trl.trainer import utils

    trainer = make_trainer(tmp_path, RecordingReward())
    monkeypatch.setattr(utils, "_ChunkedLogProbFunction", None, raising=False)
    with pytest.raises(RuntimeError, match=r"cannot train here, with or without the mentor: .*TRL's own bug.*"
                                           r"pip install 'trl>=1\.16\.0,<1\.17\.0'"):
        Mentor.from_config({}).attach(trainer)
