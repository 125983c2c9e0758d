"""HintLedger: the run's hint state, plain data the hook reads and writes and the callback checkpoints.

- `hint_history`: problem_id -> every hint given it, oldest first, each {"tier", "hint"}; the composer escalates
  past them, and a problem in it may graduate;
- `pending`: problem_id -> the hint its next sampling gets (mode next_attempt), used once;
- `graduated`: problem_id -> the step it first earned reward unhinted after a hint (Scaf-GRPO's graduation);
- `memory` (`hint_memory`): problem_id -> the hint that last rescued it, {"hint", "tier", "error_class", "step",
  "problem_id"}, tried first the next time it collapses and dropped once it fails there;
- `library` (`hint_memory`): error class -> the latest rescuing hints of that class, oldest first, at most
  `hint_memory_size` (the oldest evicted), each as a `memory` entry: `hint_choice: learning`'s candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FIELDS = ("hint_history", "pending", "graduated", "memory", "library")  # their names in a checkpoint's trainer_state.json


@dataclass
class HintLedger:
    hint_history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    graduated: dict[str, int] = field(default_factory=dict)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    library: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def remember(self, pid: str, tier: int, hint: str, next_attempt: bool) -> None:
        """Notes a hint given to problem `pid`; under `next_attempt` its next sampling gets it."""
        self.hint_history.setdefault(pid, []).append({"tier": tier, "hint": hint})
        if next_attempt:
            self.pending[pid] = hint

    def use_pending(self, problem_ids: list[str]) -> None:
        """Drops the pending hints of problems a batch sampled: a pending hint is used once."""
        for pid in problem_ids:
            self.pending.pop(pid, None)

    def graduate(self, problem_ids: set[str], step: int) -> int:
        """Notes the problems that graduated at `step`; returns how many distinct problems have over the run.

        >>> ledger = HintLedger()
        >>> ledger.graduate({"p2", "p1"}, 3), ledger.graduate({"p1"}, 5), ledger.graduated
        (2, 2, {'p1': 3, 'p2': 3})
        """
        for pid in sorted(problem_ids):
            self.graduated.setdefault(pid, step)
        return len(self.graduated)

    def remember_rescue(self, pid: str, hint: str, tier: int, error_class: str, step: int, size: int) -> None:
        """Notes that `hint` rescued problem `pid` at `step`: the problem's memory, and its error class's library,
        which keeps the `size` latest distinct hints.

        >>> ledger = HintLedger()
        >>> for k, hint in enumerate(["a", "b", "a", "c"]):
        ...     ledger.remember_rescue(f"p{k}", hint, 1, "missed_carry", k, size=2)
        >>> [e["hint"] for e in ledger.library["missed_carry"]], ledger.memory["p3"]["hint"]
        (['a', 'c'], 'c')
        """
        entry = {"hint": hint, "tier": tier, "error_class": error_class, "step": step, "problem_id": pid}
        self.memory[pid] = entry
        kept = [e for e in self.library.get(error_class, []) if e["hint"] != hint] + [entry]
        self.library[error_class] = kept[-size:]

    def forget(self, pid: str) -> None:
        """Drops problem `pid`'s remembered hint: it failed there (the class library keeps it for other problems)."""
        self.memory.pop(pid, None)

    def state(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    def restore(self, saved: dict[str, Any]) -> None:
        """Takes the fields a checkpoint saved, in place (the hook holds this object); a field it lacks is kept."""
        for name in FIELDS:
            if name in saved:
                setattr(self, name, saved[name])
