"""The one count of a batch of interventions: hints, re-draws, withheld, leaks blocked, fallbacks, failures, tiers
and error classes. It serves the training metrics (mentor/trl/metrics.py), `mentor diagnose`'s printout
(mentor/cli/__init__.py) and the rows of `mentor eval` (mentor/evaluation/), so that the three count the same way."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mentor.types import Intervention


@dataclass(frozen=True)
class Summary:
    """What a batch of interventions did. A failure is a graph run that ended in an error (a timeout, an
    exception, a refused hint): it gives no hint, and its error class is not counted. A re-draw (the retry control,
    `hint_source: none`) is no hint: it has no tier and no error class, and counts in `redrawn` alone."""

    groups: int = 0
    hinted: int = 0  # interventions that give a hint
    redrawn: int = 0  # interventions that re-drew the group unhinted (`Intervention.redraw`)
    format_only: int = 0  # of those, hints that say nothing but the answer's format (`format_only_hint`)
    withheld: int = 0  # interventions whose hint was withheld
    leaks_blocked: int = 0  # drafts the leakage checker rejected
    llm_fallbacks: int = 0  # llm nodes that fell back to rules
    failures: int = 0
    timed_out: int = 0  # of the failures, those the timeout cut off
    tiers: Counter = field(default_factory=Counter)  # tier -> hints given at it
    classes: Counter = field(default_factory=Counter)  # error class -> runs that did not fail

    @property
    def tier_sum(self) -> int:
        return sum(tier * n for tier, n in self.tiers.items())


def summarise(interventions: list[Intervention]) -> Summary:
    """The counts of `interventions`."""
    failed = [iv for iv in interventions if iv.error is not None]
    hints = [iv for iv in interventions if iv.hint and not iv.redraw]  # a re-draw's marker is no hint
    return Summary(
        groups=len(interventions),
        hinted=len(hints),
        redrawn=sum(iv.redraw for iv in interventions),
        format_only=sum(format_only_hint(iv) for iv in hints),
        withheld=sum(bool(iv.withheld) for iv in interventions),
        leaks_blocked=sum(len(iv.leak.get("leaked_drafts", [])) for iv in interventions),
        llm_fallbacks=sum(len(iv.fallbacks) for iv in interventions),
        failures=len(failed),
        timed_out=sum(iv.error.startswith("timeout") for iv in failed),
        tiers=Counter(iv.tier for iv in hints),
        classes=Counter(iv.diagnosis.error_class for iv in interventions if iv.error is None and not iv.redraw),
    )


def format_only_hint(intervention: Intervention) -> bool:
    """Whether the intervention's hint is format-only: the last composer's node record says so (`format_only`,
    mentor.tasks.base.Task.format_only), as the math rules say where the reference holds nothing of the problem."""
    said = [n["output"]["format_only"] for n in intervention.nodes
            if isinstance(n, dict) and isinstance(n.get("output"), dict) and "format_only" in n["output"]]
    return bool(said) and said[-1] is True
