"""TRL reward functions of the code task."""

from __future__ import annotations

from typing import Any

from mentor.tasks.code.task import CodeTask, map_prompt_column

_default_tasks: dict[tuple, CodeTask] = {}


def _task_for(timeout_s: float | None, memory_mb: int | None) -> CodeTask:
    key = (timeout_s, memory_mb)
    if key not in _default_tasks:
        _default_tasks[key] = CodeTask(timeout_s=timeout_s or 5.0, memory_mb=memory_mb or 512)
    return _default_tasks[key]


def code_reward(completions: list[Any], test: list[str], entry_point: list[str], *, partial_credit: bool = False,
                timeout_s: float | None = None, memory_mb: int | None = None, **kwargs: Any) -> list[float | None]:
    """TRL reward function: 1.0 when all of a row's tests pass, else 0.0 (or the share of passed asserts
    with `partial_credit=True`). Reads the dataset columns `test` and `entry_point`, and the prompt
    (`prompts`/`prompt`) so that a completion holding only a function body is run after its prompt. A row whose
    `test` or `entry_point` is None, NaN or blank gets None (unscorable), counted in `mentor/reward_no_reference`."""
    columns = map_prompt_column({"test": test, "entry_point": entry_point, **kwargs})
    columns = {k: v for k, v in columns.items() if isinstance(v, (list, tuple)) and len(v) == len(completions)}
    return _task_for(timeout_s, memory_mb).reward(completions, partial_credit=partial_credit,
                                                  log_metric=kwargs.get("log_metric"), **columns)


def code_reward_partial(completions: list[Any], test: list[str], entry_point: list[str],
                        **kwargs: Any) -> list[float | None]:
    """`code_reward` with partial credit: the share of the tests' asserts that pass."""
    kwargs.pop("partial_credit", None)
    return code_reward(completions, test, entry_point, partial_credit=True, **kwargs)
