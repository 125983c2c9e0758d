"""One count of a batch of interventions (mentor.summary.summarise) behind the training metrics, `mentor
diagnose`'s printout and `mentor eval`'s rows."""

from __future__ import annotations

from collections import Counter

from mentor.cli import summary_text
from mentor.summary import summarise
from mentor.trl.metrics import count_intervention, step_metrics
from mentor.types import Diagnosis, Intervention

INTERVENTIONS = [
    Intervention("a", hint="carry the one", tier=1, diagnosis=Diagnosis("carry")),
    Intervention("b", hint="line the digits up", tier=2, diagnosis=Diagnosis("carry"),
                 leak={"leaked_drafts": [{"draft": "42"}, {"draft": "forty-two"}]}, fallbacks=["hint_composer: x"]),
    Intervention("c", withheld=True, tier=3, diagnosis=Diagnosis("sign"), leak={"leaked_drafts": [{"draft": "-3"}]}),
    Intervention("d", diagnosis=Diagnosis("sign"), error="timeout: no hint within 1 s of the group's start"),
    Intervention("e", diagnosis=Diagnosis("carry"), error="ValueError: bad state"),
]


def test_summarise_counts_each_outcome_once():
    counts = summarise(INTERVENTIONS)
    assert (counts.groups, counts.hinted, counts.withheld, counts.leaks_blocked, counts.llm_fallbacks) == (5, 2, 1, 3, 1)
    assert (counts.failures, counts.timed_out) == (2, 1)
    assert counts.tiers == Counter({1: 1, 2: 1}) and counts.tier_sum == 3  # hinted ones only
    assert counts.classes == Counter({"carry": 2, "sign": 1})  # failed runs name no class
    assert summarise([]).groups == 0 and summarise([]).tier_sum == 0


def test_the_training_metrics_and_the_printout_count_as_summarise_does():
    stats = Counter()
    for iv in INTERVENTIONS:
        count_intervention(stats, iv, recovered=False)
    assert {k: stats[k] for k in ("withheld", "leaks_blocked", "llm_fallbacks", "failures", "hinted", "tier_sum")} \
        == {"withheld": 1, "leaks_blocked": 3, "llm_fallbacks": 1, "failures": 2, "hinted": 2, "tier_sum": 3}
    assert (stats["error_class/carry"], stats["error_class/sign"]) == (2, 1)
    text = summary_text(INTERVENTIONS)
    assert "hints: 2  withheld: 1  leaks blocked: 3  llm fallbacks: 1  failed: 2 (1 timed out)" in text
    assert "tiers: 1: 1, 2: 1" in text and "error classes: carry: 2, sign: 1" in text


def test_a_hint_is_format_only_when_the_last_composer_record_says_so():
    def composed(*flags):  # the composer's node records, one per draft (a leak retry writes another)
        return [{"node": "hint_composer", "output": {"draft": "d", "format_only": f}} for f in flags]

    rows = [Intervention("a", hint="Finish with one final answer written as \\boxed{...}.", nodes=composed(False, True)),
            Intervention("b", hint="Key idea: carry", nodes=composed(True, False)),
            Intervention("c", hint=None, withheld=True, nodes=composed(True)),  # no hint given: nothing to count
            Intervention("d", hint="an edited graph's hint", nodes=[{"node": "mine", "output": {}}])]
    assert summarise(rows).format_only == 1
    stats = Counter()
    for iv in rows:
        count_intervention(stats, iv, recovered=False)
    assert step_metrics(stats, 4, 4, 4, 0.0, 0.0)["mentor/format_only_hints"] == 1
