"""TRL reward functions, one per task, in the spirit of `trl.rewards`: plain functions with TRL's reward-function
signature (`completions` plus dataset columns by name, `log_metric` when TRL passes it). Name them in a TRL
config as `mentor.rewards.<name>`, or pass them to `GRPOTrainer(reward_funcs=[...])`.

Each returns None (unscorable to TRL: no advantage, left out of its group's baseline) for a row whose reference
is None, NaN or blank, and counts such rows in the `mentor/reward_no_reference` metric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mentor.tasks import get_task
from mentor.tasks.base import completion_text, log_no_reference, usable

if TYPE_CHECKING:
    from mentor.tasks.code import CodeTask


def arithmetic_reward(completions: list[Any], answer: list[str], **kwargs: Any) -> list[float | None]:
    """1.0 when the completion starts with the exact 4-digit `answer`, else 0.0."""
    task = get_task("arithmetic")
    out = [task.score(completion_text(c), {"answer": a}) if usable(a) else None for c, a in zip(completions, answer)]
    log_no_reference(out, kwargs.get("log_metric"))
    return out


def math_reward(completions: list[Any], answer: list[Any], **kwargs: Any) -> list[float | None]:
    """1.0 per completion whose final answer equals the `answer` column, else 0.0."""
    return get_task("math").reward(completions, answer=answer, **kwargs)


_code_tasks: dict[tuple, CodeTask] = {}  # one sandbox pool per (timeout_s, memory_mb)


def _code_task(timeout_s: float | None, memory_mb: int | None) -> CodeTask:
    from mentor.tasks.code import CodeTask  # the sandbox loads only for code rewards

    key = (timeout_s, memory_mb)
    if key not in _code_tasks:
        _code_tasks[key] = CodeTask(timeout_s=timeout_s or 5.0, memory_mb=memory_mb or 512)
    return _code_tasks[key]


def code_reward(completions: list[Any], test: list[str], entry_point: list[str], *, partial_credit: bool = False,
                timeout_s: float | None = None, memory_mb: int | None = None, **kwargs: Any) -> list[float | None]:
    """1.0 when all of a row's tests pass, else 0.0 (or the share of passed asserts with `partial_credit=True`).
    Reads the dataset columns `test` and `entry_point`, and the prompt (`prompts`/`prompt`) so that a completion
    holding only a function body is run after its prompt; a row without `test` or `entry_point` gets None."""
    columns = {"test": test, "entry_point": entry_point, **kwargs}
    columns = {k: v for k, v in columns.items() if isinstance(v, (list, tuple)) and len(v) == len(completions)}
    return _code_task(timeout_s, memory_mb).reward(completions, partial_credit=partial_credit,
                                                   log_metric=kwargs.get("log_metric"), **columns)


def code_reward_partial(completions: list[Any], test: list[str], entry_point: list[str],
                        **kwargs: Any) -> list[float | None]:
    """`code_reward` with partial credit: the share of the tests' asserts that pass."""
    kwargs.pop("partial_credit", None)
    return code_reward(completions, test, entry_point, partial_credit=True, **kwargs)


__all__ = ["arithmetic_reward", "code_reward", "code_reward_partial", "math_reward"]


def composed_reward(completions: list[Any], answer: list[str], **kwargs: Any) -> list[float | None]:
    """1.0 when the completion writes every step of the composed lab's chain right (`answer`: the step digits)."""
    task = get_task("composed")
    out = [task.score(completion_text(c), {"answer": a}) if usable(a) else None for c, a in zip(completions, answer)]
    log_no_reference(out, kwargs.get("log_metric"))
    return out
