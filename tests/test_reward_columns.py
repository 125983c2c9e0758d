"""`columns:` renames the mentor's reference fields, not the arguments TRL passes to a reward: a reward that needs a
column the dataset lacks is refused when the mentor attaches, with the way to pass it, not at step 1."""

import pytest

from mentor import Mentor
from mentor.lab.data import make_dataset
from mentor.rewards import arithmetic_reward
from mentor.types import InputError
from tiny_grpo import RecordingReward, make_trainer


def test_a_column_mapped_for_the_mentor_but_read_by_the_reward_is_refused_saying_how_to_pass_it(tmp_path):
    dataset = make_dataset("hard", 8, seed=0).rename_column("answer", "gold")
    trainer = make_trainer(tmp_path, arithmetic_reward, dataset=dataset)
    with pytest.raises(InputError) as caught:
        Mentor.from_config({"columns": {"answer": "gold"}}).attach(trainer)
    message = str(caught.value)
    assert "reward function arithmetic_reward needs argument(s) ['answer']" in message
    assert "dataset.rename_column('gold', 'answer')" in message
    assert "def my_reward(completions, gold, **kw): return arithmetic_reward(completions, gold, **kw)" in message
    assert not getattr(trainer, "_mentor_attached", False)  # nothing installed


def test_the_fix_the_message_gives_trains(tmp_path):
    dataset = make_dataset("hard", 8, seed=0).rename_column("answer", "gold")

    def my_reward(completions, gold, **kw):
        return arithmetic_reward(completions, gold, **kw)

    trainer = make_trainer(tmp_path, my_reward, dataset=dataset)
    callback = Mentor.from_config({"columns": {"answer": "gold"}}).attach(trainer)
    trainer.train()
    assert callback.totals.get("mentor/interventions", 0) > 0  # the mentor read `gold` as the reference


def test_a_reward_reading_only_columns_the_dataset_has_attaches(tmp_path):
    Mentor.from_config(None).attach(make_trainer(tmp_path, RecordingReward()))
