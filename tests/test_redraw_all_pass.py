"""`redraw_all_pass` on a real GRPOTrainer: the committed lab policy solves easy sums fully and fails hard ones, so a
batch holds both kinds of group with no gradient. Each group whose attempts all passed is replaced, before the
collapse check, by a fresh training row's group; the loss sees the replacement; the record, the metrics and the
draws say what happened, the same in a second run."""

import pytest
from datasets import concatenate_datasets
from test_trl_options import spy_every_loss

from mentor import Mentor
from mentor.command_files import read_failures
from mentor.config import MentorConfig
from mentor.lab.data import make_dataset
from mentor.models.checkpoint import COMMITTED_POLICY, load_checkpoint
from mentor.rewards import arithmetic_reward
from mentor.trace_format import is_all_pass
from mentor.traces import TraceStore
from mentor.types import InputError
from tiny_grpo import G, make_trainer
from viewer_page import cards, list_row, open_record

METRICS = ("mentor/all_pass_redrawn", "mentor/all_pass_zero_variance", "mentor/all_pass_collapsed")


def mixed_trainer(tmp_path, **mentor):
    """Three easy problems in four (the committed policy solves them), one hard one (it fails them), 16 rows a step."""
    dataset = concatenate_datasets([make_dataset("easy", 12, seed=0, split="all"), make_dataset("hard", 4, seed=0)])
    trainer = make_trainer(tmp_path, arithmetic_reward, max_steps=2, dataset=dataset,
                           policy=load_checkpoint(COMMITTED_POLICY), per_device_train_batch_size=16)
    Mentor.from_config(mentor).attach(trainer)
    return trainer


def logged(trainer) -> dict[str, float]:
    """The mentor's metrics summed over the run's steps."""
    logs = [log for log in trainer.state.log_history if "mentor/interventions" in log]
    return {key: sum(log.get(key, 0) for log in logs) for key in (*METRICS, "mentor/interventions")}


def test_all_pass_groups_are_replaced_by_fresh_rows_the_loss_sees(tmp_path):
    trainer = mixed_trainer(tmp_path / "run", redraw_all_pass=True)
    seen = spy_every_loss(trainer)
    trainer.train()
    records = TraceStore(tmp_path / "run", readonly=True).interventions()
    redraws = [r for r in records if is_all_pass(r)]
    metrics = logged(trainer)
    assert redraws and metrics["mentor/all_pass_redrawn"] == len(redraws)
    assert metrics["mentor/all_pass_zero_variance"] == sum(r["replacement"]["zero_variance"] for r in redraws)
    assert metrics["mentor/all_pass_collapsed"] == sum(r["replacement"]["collapsed"] for r in redraws)
    assert metrics["mentor/interventions"] == len(records) - len(redraws)  # a re-draw is no intervention
    tokenizer = trainer.processing_class
    loss_prompts = [p for batch in seen for p in tokenizer.batch_decode(batch["prompt_ids"], skip_special_tokens=True)]
    for r in redraws:
        assert len(r["attempts"]) == G and all(a["reward"] == 1.0 for a in r["attempts"])  # it all passed
        assert r["hint"] == "" and r["recovered"] is None and r["nodes"] == []  # no graph ran
        replacement = r["replacement"]
        assert len(replacement["attempts"]) == G and replacement["problem_id"].startswith("add-")
        assert sum(replacement["prompt"] in p for p in loss_prompts) >= G  # the loss trained the fresh row's group
        rewards = {a["reward"] for a in replacement["attempts"]}
        assert replacement["zero_variance"] == (len(rewards) == 1)
        assert replacement["collapsed"] == (rewards == {0.0})
    # A replacement that collapsed went to the mentor in the same step, as any collapsed group.
    mentored = {(r["step"], r["group"]) for r in records if not is_all_pass(r)}
    assert all((r["step"], r["group"]) in mentored for r in redraws if r["replacement"]["collapsed"])
    # mentor diagnose / eval read failures only: an all-pass group is none.
    groups, _ = read_failures(tmp_path / "run")
    assert len(groups) == len(records) - len(redraws)

    again = mixed_trainer(tmp_path / "again", redraw_all_pass=True)
    again.train()
    second = [r for r in TraceStore(tmp_path / "again", readonly=True).interventions() if is_all_pass(r)]
    assert [(r["step"], r["group"], r["replacement"]["problem_id"]) for r in second] == \
        [(r["step"], r["group"], r["replacement"]["problem_id"]) for r in redraws]  # seeded draws


def test_without_the_option_all_pass_groups_stay(tmp_path):
    trainer = mixed_trainer(tmp_path, redraw_all_pass=False)
    trainer.train()
    assert not any(is_all_pass(r) for r in TraceStore(tmp_path, readonly=True).interventions())
    assert all(key not in log for log in trainer.state.log_history for key in METRICS)


def test_the_option_is_refused_where_it_cannot_draw():
    with pytest.raises(InputError, match="redraw_all_pass: true draws a fresh group inside the step"):
        MentorConfig(redraw_all_pass=True, mode="next_attempt")


def test_an_iterable_training_set_is_refused(tmp_path):
    dataset = make_dataset("easy", 8, seed=0, split="all").to_iterable_dataset()
    trainer = make_trainer(tmp_path, arithmetic_reward, dataset=dataset, max_steps=1)
    with pytest.raises(InputError, match="redraw_all_pass: true draws replacement rows from the training set by index"):
        Mentor.from_config({"redraw_all_pass": True}).attach(trainer)


def test_the_viewer_shows_an_all_pass_group_and_its_replacement(tmp_path, browser):
    run = tmp_path / "run"
    mixed_trainer(run, redraw_all_pass=True).train()
    store = TraceStore(run, readonly=True)
    redraws = [r for r in store.interventions() if is_all_pass(r)]
    record = redraws[0]
    open_record(browser, store, tmp_path / "traces.html", record["id"])
    shown = cards(browser)
    assert shown["all-pass re-draws"] == str(len(redraws))
    assert shown["interventions"] == str(len(store.interventions()) - len(redraws))
    detail = browser.js("document.getElementById('detail').textContent")
    assert f"Attempts, all passed ({G})" in detail and "Replaced by a fresh row" in detail
    assert record["replacement"]["problem_id"] in detail and "Diagnosis" not in detail
    assert list_row(browser, record["id"])[4:7] == ["-", "-", "all passed: re-drawn"]  # class, tier, hint
    assert browser.problems() == []
