"""`hint_memory` on a real GRPOTrainer (tests/tiny_grpo.py): a random tiny policy fails every problem, so every group
collapses each step; the training set has two problems, so both come back every step. A hint whose re-attempt
recovered is given again with no graph run, dropped once it fails, kept across a checkpoint, and offered to
`hint_choice: learning` by its error class."""

import json

import pytest

from mentor import Mentor
from mentor.config import MentorConfig
from mentor.lab.data import make_dataset
from mentor.traces import TraceStore
from mentor.types import InputError
from tiny_grpo import RecordingReward, make_trainer

TWO = make_dataset("hard", 2, seed=0)  # 8 rows a step: both problems' groups, every step


class PaidUntil(RecordingReward):
    """Pays every other hinted row (so a hinted group recovers) at the steps before `last`, and nothing after."""

    def __init__(self, last: int):
        super().__init__()
        self.last = last

    def __call__(self, prompts, completions, answer, trainer_state, mentor_hint=None, **kwargs):
        paid = super().__call__(prompts, completions, answer, mentor_hint, **kwargs)
        return paid if trainer_state.global_step < self.last else [0.0] * len(paid)


def records(path) -> list[dict]:
    return TraceStore(path, readonly=True).interventions()


def test_a_rescuing_hint_is_given_again_with_no_graph_run(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=3, dataset=TWO)
    callback = Mentor.from_config({"hint_memory": True}).attach(trainer)
    trainer.train()
    by_step = {}
    for r in records(tmp_path):
        by_step.setdefault(r["step"], []).append(r)
    first, later = by_step[min(by_step)], [r for step in sorted(by_step)[1:] for r in by_step[step]]
    assert all(r["backend"].get("hint_source") != "memory" and r["nodes"] and r["recovered"] for r in first)
    assert len(later) == 4 and all(r["backend"]["hint_source"] == "memory" and r["nodes"] == [] for r in later)
    hints = {r["problem_id"]: r["hint"] for r in first}
    for r in later:  # the problem's own hint, named with the step and problem it came from
        assert r["hint"] == hints[r["problem_id"]] and r["memory"] == {"step": first[0]["step"],
                                                                      "problem_id": r["problem_id"]}
    logs = [log for log in trainer.state.log_history if "mentor/memory_hits" in log]
    assert [log["mentor/memory_hits"] for log in logs] == [0, 2, 2]
    assert [log["mentor/graph_runs_saved"] for log in logs] == [0, 2, 2]
    assert [log["mentor/memory_rescues"] for log in logs] == [0, 2, 2]
    assert set(callback.ledger.memory) == set(hints)
    library = {e["hint"] for entries in callback.ledger.library.values() for e in entries}
    assert library == set(hints.values())  # kept by error class too
    assert set(callback.ledger.library) == {r["diagnosis"]["error_class"] for r in first}


def test_a_remembered_hint_that_fails_is_dropped_and_the_graph_runs_again(tmp_path):
    trainer = make_trainer(tmp_path, PaidUntil(last=1), max_steps=3, dataset=TWO)
    callback = Mentor.from_config({"hint_memory": True}).attach(trainer)
    trainer.train()
    sources = {}
    for r in records(tmp_path):
        sources.setdefault(r["step"], set()).add(r["backend"].get("hint_source", "graph"))
    steps = sorted(sources)
    assert "memory" not in sources[steps[0]]  # the graph's hints recovered: remembered
    assert sources[steps[1]] == {"memory"}  # tried first, and failed (nothing is paid any more): forgotten
    assert "memory" not in sources[steps[2]]  # so the graph runs again
    assert callback.ledger.memory == {}


def test_the_memory_is_saved_in_checkpoints_and_restored(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=1, dataset=TWO, save_strategy="steps",
                           save_steps=1)
    callback = Mentor.from_config({"hint_memory": True}).attach(trainer)
    trainer.train()
    memory = json.loads(json.dumps(callback.ledger.memory))
    assert len(memory) == 2
    state = json.loads((tmp_path / "checkpoint-1" / "trainer_state.json").read_text())
    assert state["stateful_callbacks"]["MentorCallback"]["attributes"]["memory"] == memory

    resumed = make_trainer(tmp_path, RecordingReward(), max_steps=2, dataset=TWO, save_strategy="no")
    Mentor.from_config({"hint_memory": True}).attach(resumed)
    resumed.train(resume_from_checkpoint=str(tmp_path / "checkpoint-1"))
    after = [r for r in records(tmp_path) if r["step"] >= 1]
    assert after and all(r["backend"]["hint_source"] == "memory" for r in after)  # the restored memory served


def test_learning_takes_the_class_library_as_candidates(tmp_path):
    trainer = make_trainer(tmp_path, RecordingReward(), max_steps=2, dataset=TWO)
    Mentor.from_config({"hint_memory": True, "hint_choice": "learning", "graph_draws": 2}).attach(trainer)
    trainer.train()
    later = [r for r in records(tmp_path) if r["step"] >= 1 and r.get("candidates")]
    sources = {c["source"] for r in later for c in r["candidates"]}
    assert any(s.startswith("memory:") for s in sources)
    # A group the memory served names its first candidates `memory`, not `graph`: no graph ran for it.
    served = [r for r in later if r["backend"].get("hint_source") == "memory"]
    assert served and all([c["source"] for c in r["candidates"][:2]] == ["memory", "memory#2"] for r in served)
    assert all(r["candidates"][0]["source"] == "graph" for r in records(tmp_path)
               if r["step"] == 0 and r.get("candidates"))


def test_the_memory_is_refused_where_no_re_attempt_says_what_rescued():
    with pytest.raises(InputError, match="hint_memory: true remembers the hints whose in-step re-attempt"):
        MentorConfig(hint_memory=True, mode="next_attempt")
    with pytest.raises(InputError, match="hint_memory_size: 0 is out of range"):
        MentorConfig.load({"hint_memory_size": 0})
