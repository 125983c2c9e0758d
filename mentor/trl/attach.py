"""Attaching the mentor to a GRPOTrainer or RLOOTrainer (or an SDPOTrainer: mentor/trl/sdpo_hook.py): the checks that
refuse a trainer the hook cannot serve, the task a training dataset points to, and the install of the generation hook
and the callback."""

from __future__ import annotations

import difflib
import sys
from typing import Any

from mentor.config import MentorConfig
from mentor.runtime import MentorRuntime
from mentor.runtime.state import LIBRARY_FIELD
from mentor.runtime.versions import describe
from mentor.tasks import configured_task
from mentor.tasks.base import Task
from mentor.trl.adapter import check_trl, check_trl_version, trainer_kind
from mentor.trl.callback import MentorCallback
from mentor.trl.hook import GenerationHook
from mentor.trl.sdpo import check_sdpo, is_sdpo
from mentor.trl.sdpo_hook import SDPOHook, check_config
from mentor.types import InputError


def infer_task(columns: list[str] | None) -> str:
    """The task a dataset's columns point to: code (`test`, `entry_point`), arithmetic (`operands`), math."""
    columns = set(columns or [])
    if {"test", "entry_point"} <= columns:
        return "code"
    if "operands" in columns:
        return "arithmetic"
    return "math"


def dataset_task(config: MentorConfig, columns: list[str] | None) -> Task:
    """The task adapter for a training dataset; raises InputError if the dataset lacks a reference column it needs.

    Args:
        config: the mentor config: its `task` (None: inferred from the columns) and `columns` (our field -> the
            dataset's column).
        columns: the dataset's column names; None when unknown (then nothing is checked).
    """
    ours = {column: field for field, column in config.columns.items()}
    task = configured_task(config.task or infer_task([ours.get(c, c) for c in columns or []]))
    check_config_columns(config, task, columns)
    if columns is not None:
        absent = [config.columns.get(f, f) for f in task.absent_columns([ours.get(c, c) for c in columns])]
        if absent:
            raise InputError(f"the training dataset lacks column(s) {absent} that task '{task.name}' needs for "
                             f"its references; it has {columns}. Add them, or map yours with the mentor "
                             f"config key `columns` (e.g. columns: {{answer: my_answer_column}})")
    return task


def check_config_columns(config: MentorConfig, task: Task, columns: list[str] | None) -> None:
    """Refuses (InputError) a `columns` key that is not one of `task`'s reference fields, and, when the dataset's
    `columns` are known, a column that `columns` or `hint_candidates` names and the dataset lacks: each would
    otherwise train without it, silently."""
    fields = list(dict.fromkeys(task.reference_fields + task.optional_reference_fields + (LIBRARY_FIELD,)))
    for name in config.columns:
        if name not in fields:
            close = difflib.get_close_matches(name, fields, n=1)
            raise InputError(f"columns: '{name}' is not a reference field of task '{task.name}'"
                             f"{f' (did you mean {close[0]!r}?)' if close else ''}; its fields are {fields}. Each "
                             f"key is the mentor's field, its value your dataset's column (e.g. columns: "
                             f"{{{fields[0]}: my_{fields[0]}_column}})")
    if columns is None:
        return
    for name, column in config.columns.items():
        if column not in columns:
            raise InputError(f"columns: {name}: '{column}' is not a column of the training dataset (its columns: "
                             f"{columns}); name the column that holds the {name}")
    absent = [c for c in config.hint_candidates if c not in columns]
    if absent:
        raise InputError(f"hint_candidates: column(s) {absent} are not in the training dataset (its columns: "
                         f"{columns}); name columns it has, or add them")


# What TRL passes every reward function besides the dataset's columns, and the column the hook adds.
REWARD_ARGUMENTS = {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric",
                    "mentor_hint"}


def check_reward_columns(reward_funcs: list, columns: list[str] | None, config: MentorConfig) -> None:
    """Refuses (InputError) a reward function that requires an argument the dataset has no column for: TRL passes
    columns to rewards under their own names, so `columns: {answer: gold}` renames the mentor's field only, and
    `math_reward(completions, answer)` would fail at step 1. Says how to pass the column."""
    import inspect

    if columns is None:
        return
    for func in reward_funcs:
        if not callable(func) or hasattr(func, "forward"):  # a reward model reads no columns
            continue
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            continue
        missing = [p.name for p in params if p.default is inspect.Parameter.empty
                   and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                   and p.name not in columns and p.name not in REWARD_ARGUMENTS]
        if missing:
            name = getattr(func, "__name__", type(func).__name__)
            mapped = {f: c for f, c in config.columns.items() if f in missing}
            fix = (f"TRL passes each dataset column to a reward under the column's own name, so the mentor config's "
                   f"`columns: {mapped}` does not reach it. Rename the column instead (dataset.rename_column("
                   f"{next(iter(mapped.values()))!r}, {next(iter(mapped))!r})) and drop that `columns` entry, or "
                   f"wrap the reward: def my_reward(completions, {next(iter(mapped.values()))}, **kw): return "
                   f"{name}(completions, {next(iter(mapped.values()))}, **kw)") if mapped else \
                "add the column(s) to the dataset, or pass a reward that reads the columns it has"
            raise InputError(f"reward function {name} needs argument(s) {missing}, which the training dataset has "
                             f"no column for (its columns: {columns}); {fix}")


def check_success_reward(config: MentorConfig, names: list[str]) -> None:
    """Refuses (InputError) a `success_reward` that names no reward function of the trainer, naming those it has."""
    unknown = [name for name in config.success_reward if name not in names]
    if unknown:
        close = [match for name in unknown for match in difflib.get_close_matches(name, names, n=1)]
        guess = f"did you mean {', '.join(close)}? " if close else ""
        raise InputError(f"success_reward: {unknown} is not among this trainer's reward functions {names}; {guess}"
                         "set it to the name(s) of those that say whether an attempt succeeded (a correctness "
                         "reward, not a format reward)")


RETRY_CONTROL_LINE = "retry control: collapsed groups re-drawn unhinted; no graph runs"  # hint_source: none's banner
# How known rewards read a column the mentor reads too (TRL's `accuracy_reward`: the gold answer).
KNOWN_READINGS = {("trl.rewards.accuracy_rewards", "accuracy_reward", "solution"): "as the gold answer"}


def reference_lines(task: Task, config: MentorConfig, columns: list[str] | None, reward_funcs: list) -> list[str]:
    """What the attach line says of the references: a required field read from its stand-in (math's answer from the
    solution's last box), and each reward function that reads a column the mentor reads too, with how each reads
    it and how to point the mentor at another column."""
    import inspect

    if columns is None:
        return []
    ours = {config.columns.get(f, f): f for f in task.reference_fields + task.optional_reference_fields}
    fields = {ours.get(c, c) for c in columns}
    lines = [f"mentor references: no `{config.columns.get(f, f)}` column: the {f} is read from "
             f"`{config.columns.get(s, s)}`" + (" (its last \\boxed{})" if (f, s) == ("answer", "solution") else "")
             for f, s in task.stand_ins.items() if f not in fields and s in fields]
    for func in reward_funcs:
        if not callable(func) or hasattr(func, "forward") or getattr(func, "__module__", "").startswith("mentor."):
            continue  # a reward model reads no columns; the mentor's own rewards read the fields as it does
        try:
            params = [p.name for p in inspect.signature(func).parameters.values()]
        except (TypeError, ValueError):
            continue
        name = getattr(func, "__name__", type(func).__name__)
        for column in (c for c in params if c in ours and ours[c] in task.field_meanings):
            field = ours[column]
            how = KNOWN_READINGS.get((getattr(func, "__module__", ""), name, column), "")
            lines.append(f"mentor references: {name} reads `{column}`{' ' + how if how else ''}; the mentor reads it "
                         f"as {task.field_meanings[field]}. If the two mean different things, point the mentor at "
                         f"another column: columns: {{{field}: YOUR_COLUMN}}")
    return lines



def importable_name(func) -> str | None:
    """`module:qualname` of a reward function another process can import (`mentor eval` scores with it), else
    None: a reward model, a lambda, a local function, one defined in a script run as __main__."""
    module, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
    if hasattr(func, "forward") or not module or module == "__main__" or not qualname or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def run_settings(trainer, config: MentorConfig) -> dict[str, Any]:
    """How the run generates and scores, kept with its traces so that `mentor eval RUN` samples and scores as it did:
    the completion length, temperature and chat template kwargs, whether prompts are conversational, and each
    reward function (its name, weight and import path)."""
    args = trainer.args
    first = trainer.train_dataset[0]["prompt"] if len(getattr(trainer, "train_dataset", None) or []) else None
    weights = [float(w) for w in getattr(trainer, "reward_weights", [])]
    names = list(getattr(trainer, "reward_func_names", []))
    return {"max_completion_length": getattr(args, "max_completion_length", None),
            "temperature": getattr(args, "temperature", None),
            "chat_template_kwargs": getattr(args, "chat_template_kwargs", None) or {},
            "conversational": isinstance(first, list),
            "rewards": [{"name": n, "function": importable_name(f), "weight": w}
                        for n, f, w in zip(names, getattr(trainer, "reward_funcs", []), weights)],
            "success_reward": list(config.success_reward), "collapse_threshold": config.collapse_threshold}


def attach(config: MentorConfig, runtime: MentorRuntime, trainer) -> MentorCallback:
    """Installs the generation hook on `trainer` and registers a MentorCallback serving a mentor of `config` whose
    graph `runtime` runs; returns the callback."""
    task = checked_task(trainer, config)
    references = "".join(f"\n{line}" for line in reference_lines(
        task, config, getattr(trainer.train_dataset, "column_names", None), getattr(trainer, "reward_funcs", [])))
    callback = MentorCallback(config, {**runtime.versions, "training": run_settings(trainer, config)})
    trainer.add_callback(callback)
    if is_sdpo(trainer):
        SDPOHook(trainer, config, runtime, task, callback)
        if trainer.args.process_index == 0:
            print(f"mentor attached: task={task.name} trainer=SDPOTrainer (the hint is the teacher's feedback; no "
                  f"re-attempt)\n{describe(runtime.versions)}{references}", file=sys.stderr, flush=True)
        return callback
    GenerationHook(trainer, config, runtime, task, callback)
    off_policy = ""
    if config.strip_hint:
        off_policy = " off-policy: strip_hint" + (" + train_prefix" if config.train_prefix else "")
    success = f" success_reward={','.join(config.success_reward)}" if config.success_reward else ""
    source = f" hint_source={config.hint_source}" if config.hint_source != "graph" else ""
    # The retry control runs no graph: naming its graph, prompts and nodes would say they run.
    runs = (RETRY_CONTROL_LINE if config.hint_source == "none" else describe(runtime.versions)) + references
    if getattr(trainer.args, "process_index", 0) == 0:
        # Printed, not logged: no TRL script configures the "mentor" logger, and a user must see what runs.
        print(f"mentor attached: task={task.name} strategy={config.strategy} placement={config.hint_placement} "
              f"mode={config.mode} hint_choice={config.hint_choice}{off_policy}{success}{source}\n{runs}",
              file=sys.stderr, flush=True)
    return callback


def is_iterable(dataset) -> bool:
    """Whether a dataset is read by iterating only (`datasets.IterableDataset`, a torch `IterableDataset`): no row by
    index, so no replacement row for `redraw_all_pass`."""
    from torch.utils.data import IterableDataset

    return isinstance(dataset, IterableDataset) or not hasattr(type(dataset), "__len__")


def checked_task(trainer, config: MentorConfig) -> Task:
    """Refuses, with the reason, a trainer the hook cannot serve; returns the task adapter."""
    if is_sdpo(trainer):  # its checks, then the ones every trainer gets
        kind = "SDPOTrainer"
        check_trl_version()
        check_sdpo(trainer)
        check_config(config)
    else:
        kind = trainer_kind(trainer)
        check_trl(trainer)
    if getattr(trainer, "_mentor_attached", False):
        raise RuntimeError("a mentor is already attached to this trainer")
    for feature in ("tools", "rollout_func", "environment_factories"):
        if getattr(trainer, feature, None):
            raise NotImplementedError(f"the mentor does not support {kind}'s `{feature}` yet")
    columns = getattr(trainer.train_dataset, "column_names", None)
    if columns is not None and ("image" in columns or "images" in columns):
        raise NotImplementedError("the mentor does not support image datasets yet")
    if config.redraw_all_pass and is_iterable(trainer.train_dataset):
        raise InputError(f"redraw_all_pass: true draws replacement rows from the training set by index, and this "
                         f"{type(trainer.train_dataset).__name__} has none (an iterable dataset); give a map-style "
                         f"`datasets.Dataset`, or set redraw_all_pass: false")
    task = dataset_task(config, columns)
    check_reward_columns(getattr(trainer, "reward_funcs", []), columns, config)
    check_success_reward(config, list(getattr(trainer, "reward_func_names", [])))
    G = trainer.num_generations  # known only now: the config alone cannot check k against it
    if config.strategy == "replace_k" and config.k > G:
        raise InputError(f"k: {config.k} is out of range; replace_k replaces at most the group's "
                         f"num_generations = {G} rows: set k to an integer from 1 to {G}")
    trainer._mentor_attached = True
    return task
