"""MentorCallback: the mentor's state during training (its hint ledger, run-long counters, traces), saved in every
checkpoint."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from mentor.config import MentorConfig
from mentor.traces import TraceStore
from mentor.trl.ledger import HintLedger

if TYPE_CHECKING:
    from mentor.trl.adapter import TrainerAdapter

logger = logging.getLogger("mentor")


class MentorCallback(TrainerCallback, ExportableState):
    """Owns the mentor's state during training: the hint ledger (hint history, pending hints, graduation), counters,
    metrics and traces.

    Its state is saved in every checkpoint (`trainer_state.json`) and restored by `resume_from_checkpoint`.

    Args:
        config: the mentor's config (it reads `traces`); None: no traces.
        versions: what the mentor runs (mentor.runtime.versions), recorded in the trace store once per run.
    """

    def __init__(self, config: MentorConfig | None = None, versions: dict[str, Any] | None = None):
        self.config, self.versions = config, versions or {}
        self.ledger = HintLedger()
        self.totals: dict[str, float] = {}  # run-long counters of the mentor/* metrics
        self.store: TraceStore | None = None
        self.trace_dir: str | None = None  # where this process writes traces (rank 0 only); None: it writes none
        self.first_step = 0  # the global step this training started (or resumed) at
        self.trace_warned = False

    # The ledger's fields, read where the callback is the object a user holds (what `attach` returns).
    hint_history = property(lambda self: self.ledger.hint_history)
    pending = property(lambda self: self.ledger.pending)
    graduated = property(lambda self: self.ledger.graduated)

    def state(self) -> dict[str, Any]:
        return {"args": {}, "attributes": {**self.ledger.state(), "totals": self.totals}}

    def on_train_begin(self, args, state, control, **kwargs):
        saved = (state.stateful_callbacks or {}).get(type(self).__name__)
        if saved and state.global_step > 0:  # resuming: restore in place, the hook holds the ledger
            attributes = saved.get("attributes", {})
            self.ledger.restore(attributes)
            self.totals = attributes.get("totals", self.totals)
        if self.config is not None and self.config.traces and args.process_index == 0:
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
            try:
                store.record_run(self.first_step, self.versions)
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

    def log_step(self, adapter: TrainerAdapter, step: int, metrics: dict[str, float], records: list[dict[str, Any]]
                 ) -> None:
        """Records into the trace store; metrics, `mentor/trace_errors` (1 if the write failed) among them, into
        the trainer's logs through its adapter (so every reporter sees them)."""
        metrics = {**metrics, "mentor/trace_errors": 0}
        if self.trace_dir is not None:
            try:
                self.trace_store().append(step, records, metrics)
            except Exception as e:  # the traces are a by-product: no failure to write them may stop training
                metrics["mentor/trace_errors"] = 1
                self.trace_failed(e)
        adapter.log_metrics(metrics)
        for name, value in metrics.items():
            if not name.endswith(("_rate_before", "_rate_after", "/recovered", "_mean", "_s", "_total", "/reliance")):
                self.totals[name] = self.totals.get(name, 0.0) + float(value)
