"""How `mentor eval` scores re-attempts: the task's verifier by default, or the run's own reward functions
(`--reward module:function[=WEIGHT]`, `--success-reward NAME`, or those a run folder recorded at attach). A group is
rescued when a response succeeds as training would count it: the weighted sum of the `success_reward` functions
(default: all of them) above `collapse_threshold`."""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from mentor.types import FailedGroup, InputError


@dataclass
class Scoring:
    """The reward functions (name, function, weight) and the names whose weighted sum says success; no functions:
    the task's verifier (`Task.score`)."""

    functions: list[tuple[str, Callable, float]] = field(default_factory=list)
    success: list[str] = field(default_factory=list)
    threshold: float = 0.0
    conversational: bool = False
    source: str = "the task's verifier"

    def score(self, group: FailedGroup, texts: list[str]) -> tuple[list[float], list[bool], dict[str, list[float]]]:
        """Each response's total reward, whether it succeeded, and each reward function's scores."""
        if not self.functions:
            from mentor.tasks import get_task

            scores = [get_task(group.task).score(t, group.reference) for t in texts]
            return scores, [s > self.threshold for s in scores], {}
        if self.conversational:  # as TRL hands a conversational dataset's rows to its reward functions
            prompt: Any = [{"role": "user", "content": group.prompt}]
            completions: list[Any] = [[{"role": "assistant", "content": t}] for t in texts]
        else:
            prompt, completions = group.prompt, texts
        columns = {k: [v] * len(texts) for k, v in group.reference.items()}
        parts = {}
        for name, func, _ in self.functions:
            try:
                got = [None if x is None else float(x)
                       for x in func(prompts=[prompt] * len(texts), completions=completions, **columns)]
            except Exception as e:  # the user's function: said with the group, not a traceback mid-eval
                raise InputError(f"reward {name} raised {type(e).__name__}: {e} on group {group.problem_id} (it is "
                                 f"called as TRL calls it: prompts, completions and the reference fields "
                                 f"{sorted(columns)} as columns)") from e
            if len(got) != len(texts):
                raise InputError(f"reward {name} gave {len(got)} scores for {len(texts)} completions")
            # TRL's convention: None is "not scored", no reward; a NaN likewise.
            parts[name] = [0.0 if x is None or x != x else x for x in got]
        totals = [sum(w * parts[n][i] for n, _, w in self.functions) for i in range(len(texts))]
        judged = [(n, w) for n, _, w in self.functions if not self.success or n in self.success]
        return totals, [sum(w * parts[n][i] for n, w in judged) > self.threshold for i in range(len(texts))], parts

    def describe(self) -> str:
        if not self.functions:
            return f"scoring: {self.source}"
        rewards = ", ".join(f"{n} x{w:g}" for n, _, w in self.functions)
        success = f"; success by {', '.join(self.success)}" if self.success else ""
        return f"scoring: {rewards} ({self.source}{success}; rescued above {self.threshold:g})"


def import_reward(spec: str, flag: str = "--reward") -> tuple[str, Callable, float]:
    """`module:function` or `module:function=WEIGHT` -> (the function's name, the function, the weight)."""
    target, _, weight = spec.partition("=")
    module_name, _, name = target.partition(":")
    if not module_name or not name:
        raise InputError(f"{flag} {spec!r}: expected module:function[=WEIGHT], e.g. trl.rewards:accuracy_reward=1")
    try:
        value = float(weight) if weight else 1.0
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"{flag} {spec!r}: the weight {weight!r} is not a finite number")
    try:
        func: Any = importlib.import_module(module_name)
        for part in name.split("."):
            func = getattr(func, part)
    except (ImportError, AttributeError) as e:
        raise InputError(f"{flag} {spec!r}: cannot import it ({type(e).__name__}: {e}); give an importable "
                         f"module:function (a script run as __main__ is not importable: move the function to a "
                         f"module)") from None
    if not callable(func):
        raise InputError(f"{flag} {spec!r}: {name} is {type(func).__name__}, not a function")
    return getattr(func, "__name__", name), func, value


def scoring(reward_specs: list[str] | None, success: list[str] | None, run: dict[str, Any] | None) -> Scoring:
    """The scoring `mentor eval` uses: `--reward` given, those; else a run's recorded rewards where every one can be
    imported; else the task's verifier. `--success-reward` names must be among the rewards."""
    run = run or {}
    if reward_specs:
        functions, source = [import_reward(s) for s in reward_specs], "--reward"
    else:
        recorded = run.get("rewards") or []
        importable = recorded and all(r.get("function") for r in recorded)
        functions = [import_reward(f"{r['function']}={r['weight']}", "the run's reward") for r in recorded] \
            if importable else []
        source = "the run's rewards" if functions else "the task's verifier" + (
            " (the run's rewards cannot all be imported: give --reward)" if recorded else "")
    names = [n for n, _, _ in functions]
    from_run = functions and not reward_specs  # the run's success_reward speaks of the run's rewards only
    chosen = list(success) if success else (list(run.get("success_reward") or []) if from_run else [])
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise InputError(f"--success-reward {unknown}: not among the rewards {names}; name one of them, or give it "
                         f"with --reward")
    return Scoring(functions, chosen, float(run.get("collapse_threshold") or 0.0),
                   bool(run.get("conversational")), source)
