"""Shaped rewards (`success_reward`) and the retry control (`hint_source: none`) on a real GRPOTrainer with a tiny
policy (tests/tiny_grpo.py). The shaped run scores with TRL's own `trl.rewards.accuracy_reward` beside a format reward
that pays every completion: a policy whose answers are all well formatted and all wrong."""

import pytest
from trl.rewards import accuracy_reward

from mentor import Mentor
from mentor.lab.data import make_dataset
from mentor.traces import TraceStore
from mentor.trl.batch import REDRAW_MARKER
from mentor.types import InputError
from tiny_grpo import G, RecordingReward, make_trainer


def format_reward(completions, **kwargs):
    """Pays every completion: each is a well-formed assistant message."""
    return [1.0 if c[0]["role"] == "assistant" else 0.0 for c in completions]


def solution_dataset():
    """16 hard sums as chat prompts, with the `solution` column `accuracy_reward` reads."""
    return make_dataset("hard", 16, seed=0).map(lambda row: {"prompt": [{"role": "user", "content": row["prompt"]}],
                                                              "solution": row["answer"]})


@pytest.mark.parametrize("config, collapsed", [({}, 0.0), ({"success_reward": "accuracy_reward"}, 1.0),
                                               ({"success_reward": accuracy_reward}, 1.0)],
                         ids=["weighted_total", "success_reward", "success_reward_function"])
def test_well_formatted_wrong_answers_are_collapsed_only_under_success_reward(tmp_path, capsys, config, collapsed):
    trainer = make_trainer(tmp_path, [accuracy_reward, format_reward], dataset=solution_dataset())
    Mentor.from_config(config).attach(trainer)
    summary = capsys.readouterr().err  # the attach line names the choice, and the success test where one is set
    assert "mode=in_step hint_choice=graph" in summary and ("success_reward=accuracy_reward" in summary) == collapsed
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["reward"] == 1.0  # every row: accuracy 0, format 1
    assert log["mentor/collapse_rate_before"] == collapsed and log["mentor/interventions"] == 2 * collapsed
    records = list(TraceStore(tmp_path, readonly=True)) if collapsed else []
    # The hinted re-attempts are well formatted too, and still wrong: not a recovery.
    assert len(records) == 2 * collapsed and log["mentor/recovered"] == 0.0
    assert all(not r["recovered"] and {a["reward"] for a in r["reattempt"]} == {1.0} for r in records)


def test_a_success_reward_that_names_no_reward_function_is_refused_at_attach(tmp_path):
    trainer = make_trainer(tmp_path, [accuracy_reward, format_reward], dataset=solution_dataset())
    with pytest.raises(InputError, match=r"success_reward: \['acuracy_reward'\] is not among this trainer's reward "
                                         r"functions \['accuracy_reward', 'format_reward'\]; did you mean "
                                         r"accuracy_reward\?") as refused:
        Mentor.from_config({"success_reward": ["acuracy_reward"]}).attach(trainer)
    with pytest.raises(InputError) as unlike:  # nothing close: no reward is offered, the format reward least of all
        Mentor.from_config({"success_reward": "correctness"}).attach(trainer)
    assert "did you mean" not in str(unlike.value) and "e.g." not in str(unlike.value) + str(refused.value)


class RedrawReward(RecordingReward):
    """Pays every other row of the batches after the first: the re-draws of the collapsed groups."""

    def __call__(self, prompts, completions, answer, mentor_hint=None, **kwargs):
        super().__call__(prompts, completions, answer, mentor_hint, **kwargs)
        return [1.0 if len(self.calls) > 1 and i % 2 == 0 else 0.0 for i in range(len(completions))]


def test_hint_source_none_re_draws_collapsed_groups_unhinted_and_counts_them(tmp_path, loss_spy):
    reward = RedrawReward()
    trainer = make_trainer(tmp_path, reward)
    Mentor.from_config({"hint_source": "none"}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["mentor/interventions"] == 2 and log["mentor/recovered"] == 1.0
    assert log["mentor/collapse_rate_after"] == 0.0 and log["mentor/mentor_s"] == 0.0  # no graph ran
    # The 8 re-draws were scored without a hint, from the unhinted prompts, and trained.
    assert [len(c["completions"]) for c in reward.calls] == [8, 8] and reward.calls[1]["hints"] == [""] * 8
    prompts = trainer.processing_class.batch_decode(seen["prompt_ids"], skip_special_tokens=True)
    assert not any("Hint" in p for p in prompts) and seen["advantages"].abs().sum() > 0
    records = list(TraceStore(tmp_path, readonly=True))
    assert [r["hint"] for r in records] == [REDRAW_MARKER] * 2 and all(r["recovered"] for r in records)
    assert all(r["hinted_prompt"] == r["prompt"] and not r["nodes"] and len(r["reattempt"]) == G for r in records)
