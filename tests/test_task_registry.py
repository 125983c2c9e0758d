"""Adding a task without touching the library: `mentor.tasks.register`, or `task: package.module:Class` in the
config; bad values are refused naming `task` and the fix."""

import pytest

from mentor import tasks
from mentor.config import MentorConfig
from mentor.tasks.arithmetic import ArithmeticTask
from mentor.trl.attach import dataset_task
from mentor.types import InputError

MY_TASK = '''
from mentor.tasks.arithmetic import ArithmeticTask


class Echo(ArithmeticTask):
    name = "echo"


class Nameless(ArithmeticTask):
    name = ""


NOT_A_TASK = 3
'''


@pytest.fixture
def my_tasks(tmp_path, monkeypatch):
    (tmp_path / "my_tasks.py").write_text(MY_TASK)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_registered_task_is_found_by_name_from_a_config_and_from_failed_groups():
    class Doubling(ArithmeticTask):
        name = "doubling"

    registered = tasks.register("doubling", Doubling)
    assert isinstance(registered, Doubling) and tasks.get_task("doubling") is registered
    assert dataset_task(MentorConfig.load({"task": "doubling"}), ["prompt", "answer", "operands"]) is registered
    instance = Doubling()
    assert tasks.register("doubling", instance) is instance and tasks.get_task("doubling") is instance


def test_a_config_names_a_task_class_by_module_and_the_groups_find_it_by_its_name(my_tasks):
    task = dataset_task(MentorConfig.load({"task": "my_tasks:Echo"}), ["prompt", "answer", "operands"])
    assert type(task).__name__ == "Echo" and tasks.get_task("echo") is task
    with pytest.raises(InputError, match=r"lacks column\(s\) \['operands'\] that task 'echo' needs"):
        dataset_task(MentorConfig.load({"task": "my_tasks:Echo"}), ["prompt", "answer"])


@pytest.mark.parametrize("value, message", [
    ("chess", r"unknown task 'chess'; choose one of .*'arithmetic'.*mentor\.tasks\.register.*package\.module:Class"),
    ("no_such_module_here:Task", r"task: 'no_such_module_here:Task': importing 'no_such_module_here' raised "
                                 r"ModuleNotFoundError.*give `task: package.module:Class`"),
    ("my_tasks:Missing", r"'Missing' in my_tasks is NoneType, not a mentor\.tasks\.Task subclass"),
    ("my_tasks:NOT_A_TASK", r"'NOT_A_TASK' in my_tasks is int, not a mentor\.tasks\.Task subclass"),
    ("my_tasks:Nameless", r"the class has no `name`; set its class attribute"),
])
def test_a_bad_task_value_is_refused_naming_the_field_and_the_fix(my_tasks, value, message):
    with pytest.raises(InputError, match=message):
        dataset_task(MentorConfig.load({"task": value}), None)


@pytest.mark.parametrize("name, task, message", [
    ("", ArithmeticTask, "name must be a non-empty string"),
    ("mine", int, r"register\('mine', \.\.\.\): give a mentor\.tasks\.Task subclass or instance, got type"),
    ("mine", "arithmetic", "got str"),
])
def test_register_refuses_what_is_not_a_task(name, task, message):
    with pytest.raises(InputError, match=message):
        tasks.register(name, task)
