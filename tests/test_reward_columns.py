"""`columns:` renames the mentor's reference fields, not the arguments TRL passes to a reward: a reward that needs a
column the dataset lacks is refused when the mentor attaches, with the way to pass it, not at step 1."""

import pytest

from mentor import Mentor
from mentor.config import MentorConfig
from mentor.lab.data import make_dataset
from mentor.rewards import arithmetic_reward
from mentor.trl.attach import dataset_task
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


# A `columns` or `hint_candidates` entry that names nothing would train without it, silently: refused by name.
@pytest.mark.parametrize("columns", [{"answer": ["a", "b"]}, {"answer": ""}, {"answer": None}, {1: "gold"}])
def test_a_columns_entry_that_is_not_field_to_column_is_refused_at_load(columns):
    with pytest.raises(InputError, match=r"columns: .* must map one of the mentor's reference fields to one dataset "
                                         r"column"):
        MentorConfig.load({"columns": columns})


@pytest.mark.parametrize("config, dataset_columns, message", [
    ({"columns": {"anwser": "gold"}}, ["prompt", "gold"],
     r"columns: 'anwser' is not a reference field of task 'math' \(did you mean 'answer'\?\); its fields are "
     r"\['answer', 'solution', 'answer_aliases', 'concepts', 'hint'\]"),
    ({"columns": {"anwser": "gold"}}, None, r"columns: 'anwser' is not a reference field"),  # columns unknown
    ({"columns": {"answer": "gold", "solution": "worked"}}, ["prompt", "gold", "steps"],
     r"columns: solution: 'worked' is not a column of the training dataset \(its columns: \['prompt', 'gold', "
     r"'steps'\]\)"),
    ({"hint_choice": "learning", "hint_candidates": ["hint_step1", "hint_stpe2"]}, ["prompt", "answer", "hint_step1",
                                                                                    "hint_step2"],
     r"hint_candidates: column\(s\) \['hint_stpe2'\] are not in the training dataset"),
])
def test_a_columns_key_or_column_the_task_or_dataset_lacks_is_refused_naming_it(config, dataset_columns, message):
    with pytest.raises(InputError, match=message):
        dataset_task(MentorConfig.load(config), dataset_columns)


def test_columns_and_hint_candidates_that_name_what_there_is_pass():
    config = MentorConfig.load({"columns": {"answer": "gold", "hint": "hint2"}, "hint_choice": "learning",
                                "hint_candidates": ["hint_step1"]})
    assert dataset_task(config, ["prompt", "gold", "hint2", "hint_step1"]).name == "math"
    assert dataset_task(config, None).name == "math"  # columns unknown: only the keys are checked


def test_attach_refuses_a_hint_candidates_column_the_dataset_lacks(tmp_path):
    trainer = make_trainer(tmp_path, arithmetic_reward, dataset=make_dataset("hard", 8, seed=0))
    with pytest.raises(InputError, match=r"hint_candidates: column\(s\) \['hint_stpe1'\]"):
        Mentor.from_config({"hint_choice": "learning", "hint_candidates": ["hint_stpe1"]}).attach(trainer)
    assert not getattr(trainer, "_mentor_attached", False)
