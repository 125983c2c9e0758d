"""Task adapters by name. Each module defines one `Task` subclass; they are imported lazily."""

from __future__ import annotations

import importlib

from mentor.tasks.base import Task, completion_text
from mentor.types import InputError

TASKS = {
    "arithmetic": "mentor.tasks.arithmetic:ArithmeticTask",
    "math": "mentor.tasks.math:MathTask",
    "code": "mentor.tasks.code:CodeTask",
}
_instances: dict[str, Task] = {}


def get_task(name: str) -> Task:
    """The adapter for task `name` (one of TASKS)."""
    if name not in _instances:
        if name not in TASKS:
            raise InputError(f"unknown task '{name}'; choose one of {sorted(TASKS)}")
        module, cls = TASKS[name].split(":")
        _instances[name] = getattr(importlib.import_module(module), cls)()
    return _instances[name]


__all__ = ["TASKS", "Task", "completion_text", "get_task"]
