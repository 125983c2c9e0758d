"""Task adapters by name. Each module defines one `Task` subclass; the built-in ones are imported lazily.

Add your own with `register(name, task)`, or name its class in the config as `task: package.module:Class`.
"""

from __future__ import annotations

import importlib

from mentor.tasks.base import Task, completion_text
from mentor.types import InputError

TASKS = {
    "arithmetic": "mentor.tasks.arithmetic:ArithmeticTask",
    "math": "mentor.tasks.math:MathTask",
    "code": "mentor.tasks.code:CodeTask",
    "composed": "mentor.tasks.composed:ComposedTask",
}
_instances: dict[str, Task] = {}


def register(name: str, task: Task | type[Task]) -> Task:
    """Makes `task` (a Task instance, or a Task subclass built with no arguments) the adapter of task `name`, for a
    config's `task: name` and for failed groups of that task; replaces any adapter of that name. Returns it."""
    if not isinstance(name, str) or not name:
        raise InputError(f"register: name must be a non-empty string, got {name!r}")
    if isinstance(task, type) and issubclass(task, Task):
        task = task()
    if not isinstance(task, Task):
        raise InputError(f"register('{name}', ...): give a mentor.tasks.Task subclass or instance, got "
                         f"{type(task).__name__}")
    _instances[name] = task
    return task


def get_task(name: str) -> Task:
    """The adapter for task `name`: a built-in one (TASKS) or one given to `register`."""
    if name not in _instances:
        if name not in TASKS:
            raise InputError(f"unknown task '{name}'; choose one of {sorted(set(TASKS) | set(_instances))}, "
                             f"add yours with mentor.tasks.register(name, task), or give the config "
                             f"`task: package.module:Class`")
        module, cls = TASKS[name].split(":")
        _instances[name] = getattr(importlib.import_module(module), cls)()
    return _instances[name]


def configured_task(value: str) -> Task:
    """The adapter a config's `task:` names: a task name (see `get_task`), or `package.module:Class`, a Task
    subclass that is imported and registered under its `name` attribute (failed groups carry that name)."""
    if ":" not in value:
        return get_task(value)
    module_name, _, class_name = value.partition(":")
    fix = "give `task: package.module:Class` naming an importable mentor.tasks.Task subclass"
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # the module's own fault; the chained traceback shows where
        raise InputError(f"task: '{value}': importing '{module_name}' raised {type(e).__name__}: {e}; {fix}") from e
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        raise InputError(f"task: '{value}': '{class_name}' in {module_name} is {type(cls).__name__}, not a "
                         f"mentor.tasks.Task subclass; {fix}")
    if not cls.name:
        raise InputError(f"task: '{value}': the class has no `name`; set its class attribute `name = \"...\"`, "
                         f"the task's name in failed groups and traces")
    return register(cls.name, cls)


__all__ = ["TASKS", "Task", "completion_text", "configured_task", "get_task", "register"]
