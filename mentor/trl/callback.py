"""Mentor and MentorCallback: the mentor added to an existing TRL GRPO script in three lines.

    from mentor import Mentor
    mentor = Mentor.from_config("mentor.yaml")   # or a dict, or a MentorConfig
    mentor.attach(trainer)                       # any GRPOTrainer or subclass instance
"""

from __future__ import annotations

import logging
from typing import Any

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from mentor.config import MentorConfig
from mentor.dependencies import version_range
from mentor.trl.hook import GenerationHook, problem_id
from mentor.runtime import MentorRuntime
from mentor.tasks import configured_task
from mentor.tasks.base import Task
from mentor.traces import TraceStore
from mentor.types import FailedGroup, InputError, Intervention

logger = logging.getLogger("mentor")

TESTED_TRL = version_range("trl")  # [lowest, highest) TRL versions whose private generation API the hook wraps
# TRL's private methods the hook wraps (the first three) or calls (`_log_completion_extra`: the hint column)
HOOKED_METHODS = ("_generate", "_generate_and_score_completions", "_calculate_rewards", "_log_completion_extra")


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
    if columns is not None:
        absent = [c for c in (config.columns.get(f, f) for f in task.reference_fields) if c not in columns]
        if absent:
            raise InputError(f"the training dataset lacks column(s) {absent} that task '{task.name}' needs for "
                             f"its references; it has {columns}. Add them, or map yours with the mentor "
                             f"config key `columns` (e.g. columns: {{answer: my_answer_column}})")
    return task


class MentorCallback(TrainerCallback, ExportableState):
    """Owns the mentor's state during training: hint history, pending hints, counters, metrics and traces.

    Its state is saved in every checkpoint (`trainer_state.json`) and restored by `resume_from_checkpoint`.

    Args:
        mentor: the Mentor it serves (it reads `traces` from its config).
    """

    def __init__(self, mentor: Mentor | None = None):
        self.mentor = mentor
        self.hint_history: dict[str, list[dict[str, Any]]] = {}  # problem_id -> [{"tier", "hint", "step"}]
        self.pending: dict[str, str] = {}  # problem_id -> hint for its next sampling (mode: next_attempt)
        self.totals: dict[str, float] = {}  # run-long counters of the mentor/* metrics
        self.store: TraceStore | None = None
        self.trace_dir: str | None = None  # where this process writes traces (rank 0 only); None: it writes none
        self.first_step = 0  # the global step this training started (or resumed) at
        self.trace_warned = False

    def state(self) -> dict[str, Any]:
        return {"args": {}, "attributes": {"hint_history": self.hint_history, "pending": self.pending,
                                           "totals": self.totals}}

    def on_train_begin(self, args, state, control, **kwargs):
        saved = (state.stateful_callbacks or {}).get(type(self).__name__)
        if saved and state.global_step > 0:  # resuming: restore in place, the hook holds this object
            for name, value in saved.get("attributes", {}).items():
                setattr(self, name, value)
        if self.mentor is not None and self.mentor.config.traces and args.process_index == 0:
            self.trace_dir, self.first_step = args.output_dir, state.global_step
            try:
                self.trace_store()
            except Exception as e:  # a locked or broken file: log_step tries again, and counts it if it fails
                self.trace_failed(e)

    def trace_store(self) -> TraceStore:
        """The open trace store, opened if needed. Opening drops what the store holds from `first_step` on.

        Records are dropped rather than made unique by (step, round, group): after a resume, the stopped run's
        records past the checkpoint describe steps that were undone, and the resumed run may mentor other groups
        at those steps (an llm backend, a changed config), so replacing key by key would keep some of them.
        """
        if self.store is None:
            store = TraceStore(self.trace_dir)
            try:
                dropped = store.drop_from(self.first_step)
            except Exception:
                store.close()
                raise
            if dropped:
                logger.warning("training starts at step %d: dropped %d intervention(s) of step %d and later "
                               "from %s, which a stopped run wrote after its last checkpoint", self.first_step,
                               dropped, self.first_step, store.path)
            self.store = store
        return self.store

    def trace_failed(self, error: Exception) -> None:
        """Warns once per run; later failures only count in `mentor/trace_errors`."""
        if not self.trace_warned:
            self.trace_warned = True
            logger.warning("cannot write the traces in %s (%s: %s); training goes on without them while "
                           "this lasts, and each step's lost write counts in mentor/trace_errors (see "
                           "docs/traces.md)", self.trace_dir, type(error).__name__, error)

    def on_train_end(self, args, state, control, **kwargs):
        if self.store is not None:
            self.store.close()
            self.store = None
        self.trace_dir = None

    def remember(self, row: dict[str, Any], intervention: Intervention) -> None:
        pid = problem_id(row)
        self.hint_history.setdefault(pid, []).append({"tier": intervention.tier, "hint": intervention.hint})
        if self.mentor is not None and self.mentor.config.mode == "next_attempt":
            self.pending[pid] = intervention.hint

    def log_step(self, trainer, step: int, metrics: dict[str, float], records: list[dict[str, Any]]) -> None:
        """Records into the trace store; metrics, `mentor/trace_errors` (1 if the write failed) among them, into
        the trainer's logs (so every reporter sees them)."""
        metrics = {**metrics, "mentor/trace_errors": 0}
        if self.trace_dir is not None:
            try:
                self.trace_store().append(step, records, metrics)
            except Exception as e:  # the traces are a by-product: no failure to write them may stop training
                metrics["mentor/trace_errors"] = 1
                self.trace_failed(e)
        for name, value in metrics.items():
            trainer._metrics["train"][name].append(float(value))
            if not name.endswith(("_rate_before", "_rate_after", "/recovered", "_mean", "_s")):
                self.totals[name] = self.totals.get(name, 0.0) + float(value)


class Mentor:
    """The mentor: a LangGraph graph that turns collapsed GRPO groups into hints. Build it with
    `Mentor.from_config(...)`, the one constructor users are given.

    Args:
        config: the loaded MentorConfig.
        chat_model: the LangChain chat model for `llm` nodes (default: built from `config.llm`).
    """

    def __init__(self, config: MentorConfig, chat_model: Any = None):
        if not isinstance(config, MentorConfig):
            raise InputError(f"Mentor(...) takes a loaded MentorConfig, got {type(config).__name__}; build the "
                             f"mentor with Mentor.from_config(...), which reads a dict, a YAML file or None")
        self.config = config
        self.runtime = MentorRuntime(self.config, chat_model)
        self.callback: MentorCallback | None = None

    @classmethod
    def from_config(cls, source: MentorConfig | dict | str | None = None, chat_model: Any = None) -> Mentor:
        """A Mentor from a MentorConfig, a dict or a YAML file (a training YAML's `mentor:` section works)."""
        return cls(MentorConfig.load(source), chat_model)

    def diagnose(self, groups: list[FailedGroup]) -> list[Intervention]:
        """Runs stored failed groups through the graph (what `mentor diagnose` does)."""
        return self.runtime.run(groups)

    def attach(self, trainer) -> MentorCallback:
        """Installs the in-step hook on `trainer` and registers a MentorCallback; returns the callback."""
        task = self._check(trainer)
        self.callback = MentorCallback(self)
        trainer.add_callback(self.callback)
        GenerationHook(trainer, self.config, self.runtime, task, self.callback)
        off_policy = ""
        if self.config.strip_hint:
            off_policy = " off-policy: strip_hint" + (" + train_prefix" if self.config.train_prefix else "")
        logger.info("mentor attached: task=%s strategy=%s placement=%s mode=%s%s", task.name, self.config.strategy,
                    self.config.hint_placement, self.config.mode, off_policy)
        return self.callback

    def _check(self, trainer) -> Task:
        """Refuses, with the reason, a trainer the hook cannot serve; returns the task adapter."""
        import trl
        from packaging.version import Version

        if not isinstance(trainer, trl.GRPOTrainer):
            raise TypeError(f"Mentor.attach needs a trl.GRPOTrainer (or subclass), got {type(trainer).__name__}")
        low, high = TESTED_TRL
        if not Version(low) <= Version(trl.__version__) < Version(high):
            raise RuntimeError(f"mentor is tested with TRL >= {low}, < {high}; this is TRL {trl.__version__}. "
                               f"Install a tested version: pip install 'trl>={low},<{high}'")
        missing = [m for m in HOOKED_METHODS if not callable(getattr(trainer, m, None))]
        if missing:
            raise RuntimeError(f"this GRPOTrainer lacks {missing}, which the mentor's in-step hook uses")
        if getattr(trainer, "_mentor_attached", False):
            raise RuntimeError("a mentor is already attached to this trainer")
        for feature in ("tools", "rollout_func", "environment_factories"):
            if getattr(trainer, feature, None):
                raise NotImplementedError(f"the mentor does not support GRPOTrainer's `{feature}` yet")
        columns = getattr(trainer.train_dataset, "column_names", None)
        if columns is not None and ("image" in columns or "images" in columns):
            raise NotImplementedError("the mentor does not support image datasets yet")
        task = dataset_task(self.config, columns)
        G = trainer.num_generations  # known only now: the config alone cannot check k against it
        if self.config.strategy == "replace_k" and self.config.k > G:
            raise InputError(f"k: {self.config.k} is out of range; replace_k replaces at most the group's "
                             f"num_generations = {G} rows: set k to an integer from 1 to {G}")
        trainer._mentor_attached = True
        return task
