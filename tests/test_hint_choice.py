"""`hint_choice: learning` (mentor/trl/choice.py) in real GRPOTrainer steps: each hinted group tries the graph's hint
and its `hint_candidates` columns, and gets the one whose attempts' rewards vary most, less reliance."""

import math

import pytest

from mentor import Mentor, MentorConfig
from mentor.lab.data import make_dataset
from mentor.traces import TraceStore
from mentor.types import InputError
from tiny_grpo import G, make_trainer

HALF = "Line the digits up by place before you add."  # a candidate whose attempts half succeed
NONE = "Read the question once more."  # a candidate whose attempts never succeed


class HintReward:
    """Pays every row hinted by the graph, every other row hinted by HALF, none hinted by NONE or unhinted."""

    __name__ = "hint_reward"

    def __init__(self):
        self.hints: list[list[str]] = []

    def __call__(self, prompts, completions, mentor_hint=None, **kwargs):
        hints = mentor_hint or [""] * len(completions)
        self.hints.append(list(hints))
        return [0.0 if not h or h == NONE else (float(i % 2 == 0) if h == HALF else 1.0) for i, h in enumerate(hints)]


def dataset(**columns):
    rows = make_dataset("hard", 16, seed=0)
    for name, value in columns.items():
        rows = rows.add_column(name, [value] * len(rows))
    return rows


def test_the_group_gets_the_candidate_whose_rewards_vary_and_its_attempts_are_the_reattempt(tmp_path):
    reward = HintReward()
    trainer = make_trainer(tmp_path, reward, dataset=dataset(alt=HALF, dud=NONE))
    Mentor.from_config({"hint_choice": "learning", "hint_candidates": ["alt", "dud"]}).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    # 2 collapsed groups, each tried with 3 candidates: 2 x 2 x G extra attempts; HALF chosen over the graph's hint.
    assert log["mentor/interventions"] == 2 and log["mentor/candidate_attempts"] == 2 * 2 * G
    assert log["mentor/chosen_not_graph"] == 2 and log["mentor/candidates_leaking"] == 0
    assert log["mentor/collapse_rate_after"] == 0.0
    # Scored once each: 8 first attempts, then the 3 candidates of both groups in one generation.
    assert [len(h) for h in reward.hints] == [8, 3 * 2 * G]
    records = TraceStore(tmp_path, readonly=True).interventions()
    for record in records:
        assert record["hint"] == HALF and HALF in record["hinted_prompt"]
        tried = {c["source"]: c for c in record["candidates"]}
        assert list(tried) == ["graph", "alt", "dud"]
        assert (tried["graph"]["p"], tried["alt"]["p"], tried["dud"]["p"]) == (1.0, 0.5, 0.0)
        assert tried["dud"]["reliance"] is None and tried["dud"]["score"] == 0.0  # no correct attempt to lean on
        for c in (tried["graph"], tried["alt"]):  # p(1 - p), weighted by the reliance of the correct attempts
            assert c["reliance"] is not None and c["score"] == pytest.approx(
                c["p"] * (1 - c["p"]) * math.exp(min(0.0, c["reliance"])))
        assert [c["chosen"] for c in record["candidates"]] == [False, True, False]
        assert [a["reward"] for a in record["reattempt"]] == [1.0, 0.0] * (G // 2)  # HALF's attempts, spliced


def test_a_leaking_or_duplicate_candidate_is_left_out_and_ties_go_to_the_graph(tmp_path):
    reward = HintReward()
    rows = dataset(dud=NONE)
    rows = rows.add_column("leaky", [f"The answer is {a}." for a in rows["answer"]])
    trainer = make_trainer(tmp_path, reward, dataset=rows)
    Mentor.from_config({"hint_choice": "learning", "hint_candidates": ["leaky", "dud", "dud"]}).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/candidates_leaking"] == 2 and log["mentor/chosen_not_graph"] == 0
    for record in TraceStore(tmp_path, readonly=True).interventions():
        assert [c["source"] for c in record["candidates"]] == ["graph", "dud"]  # both score 0: the graph's wins
        assert record["hint"] not in (NONE, None) and "The answer is" not in record["hinted_prompt"]


def test_the_default_choice_tries_one_hint():
    assert MentorConfig().hint_choice == "graph"


@pytest.mark.parametrize("config,message", [
    ({"hint_choice": "learning"}, "hint_choice: learning needs hint_candidates.*or graph_draws"),
    ({"graph_draws": 0}, "graph_draws: 0 is out of range"),
    ({"hint_choice": "learning", "hint_candidates": ["a"], "mode": "next_attempt"}, "needs mode: in_step"),
    ({"hint_choice": "best"}, "hint_choice: 'best' is not one of"),
    ({"hint_candidates": "hint_step1"}, "hint_candidates: expected list"),
    ({"hint_candidates": [""]}, "must be a list of column names"),
    ({"reliance_penalty": -1}, "reliance_penalty: -1 is out of range"),
])
def test_a_bad_choice_config_names_the_key(config, message):
    with pytest.raises(InputError, match=message):
        MentorConfig.load(config)


def test_p_is_the_share_of_the_group_as_the_strategy_splices_it(tmp_path):
    # mixed, half the group: the graph's attempts fill 2 of 4 rows, all paid (p = 0.5); HALF's 1 of 4 (p = 0.25).
    trainer = make_trainer(tmp_path, HintReward(), dataset=dataset(alt=HALF))
    Mentor.from_config({"hint_choice": "learning", "hint_candidates": ["alt"], "strategy": "mixed",
                        "mixed_share": 0.5}).attach(trainer)
    trainer.train()
    assert trainer.state.log_history[0]["mentor/chosen_not_graph"] == 0
    for record in TraceStore(tmp_path, readonly=True).interventions():
        assert [(c["source"], c["p"], c["chosen"]) for c in record["candidates"]] == [
            ("graph", 0.5, True), ("alt", 0.25, False)]


def test_graph_draws_tries_the_graphs_own_hint_again_as_a_best_of_n_control(tmp_path):
    trainer = make_trainer(tmp_path, HintReward())
    Mentor.from_config({"hint_choice": "learning", "graph_draws": 2}).attach(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/candidate_attempts"] == 2 * G and log["mentor/chosen_not_graph"] == 0
    for record in TraceStore(tmp_path, readonly=True).interventions():
        tried = record["candidates"]
        assert [c["source"] for c in tried] == ["graph", "graph#2"] and tried[0]["hint"] == tried[1]["hint"]
        assert sum(c["chosen"] for c in tried) == 1 and record["hint"] == tried[0]["hint"]
        chosen = next(c for c in tried if c["chosen"])
        assert chosen["score"] == max(c["score"] for c in tried)
