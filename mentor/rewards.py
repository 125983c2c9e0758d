"""TRL reward functions, one per task, in the spirit of `trl.rewards`: plain functions with TRL's reward-function
signature (`completions` plus dataset columns by name, `log_metric` when TRL passes it). Name them in a TRL
config as `mentor.rewards.<name>`, or pass them to `GRPOTrainer(reward_funcs=[...])`.

Each returns None (unscorable to TRL: no advantage, left out of its group's baseline) for a row whose reference
is None, NaN or blank, and counts such rows in the `mentor/reward_no_reference` metric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mentor.tasks import get_task

if TYPE_CHECKING:
    from mentor.tasks.code import CodeTask

NO_REFERENCE_METRIC = "mentor/reward_no_reference"


def log_no_reference(rewards: list[float | None], log_metric: Any) -> list[float | None]:
    """`rewards`, after reporting how many rows of the reward call had no usable reference (their reward is None)
    through the `log_metric` callable TRL passes to reward functions; logged on every call, 0 included, so the
    average TRL reports over a logging step is the rows per call."""
    if callable(log_metric):
        log_metric(NO_REFERENCE_METRIC, float(sum(r is None for r in rewards)))
    return rewards


def arithmetic_reward(completions: list[Any], answer: list[str], **kwargs: Any) -> list[float | None]:
    """1.0 when the completion starts with the exact 4-digit `answer`, else 0.0."""
    return log_no_reference(get_task("arithmetic").reward(completions, answer=answer, **kwargs),
                            kwargs.get("log_metric"))


def math_reward(completions: list[Any], answer: list[Any], **kwargs: Any) -> list[float | None]:
    r"""1.0 per completion whose final answer equals the `answer` column, else 0.0. MATH's and GSM8K's forms are read
    as their value (`\$18.90`, `25\%`, `20\text{ cm}`, `42^\circ`, `1,200`, `10{,}080`, `2\frac{1}{2}`, `9\pi`);
    a hedge scores 0 (`\text{Yes or No}`, `200, 1` for `1,200`). Other languages, Roman numerals and other bases are
    not read. docs/leakage.md, "Answer forms", lists them, and where TRL's accuracy_reward scores otherwise."""
    return log_no_reference(get_task("math").reward(completions, answer=answer, **kwargs), kwargs.get("log_metric"))


def composed_reward(completions: list[Any], answer: list[str], **kwargs: Any) -> list[float | None]:
    """1.0 when the completion writes every step of the composed lab's chain right (`answer`: the step digits)."""
    return log_no_reference(get_task("composed").reward(completions, answer=answer, **kwargs),
                            kwargs.get("log_metric"))


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
    return log_no_reference(_code_task(timeout_s, memory_mb).reward(completions, partial_credit=partial_credit,
                                                                     **columns), kwargs.get("log_metric"))


def code_reward_partial(completions: list[Any], test: list[str], entry_point: list[str],
                        **kwargs: Any) -> list[float | None]:
    """`code_reward` with partial credit: the share of the tests' asserts that pass."""
    kwargs.pop("partial_credit", None)
    return code_reward(completions, test, entry_point, partial_credit=True, **kwargs)


__all__ = ["arithmetic_reward", "code_reward", "code_reward_partial", "composed_reward", "math_reward"]
