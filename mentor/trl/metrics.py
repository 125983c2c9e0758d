"""The step's mentor/* metrics: counters kept while the hook mentors a step's collapsed groups, and the metrics
they give at the end of the step (logged by MentorCallback.log_step)."""

from __future__ import annotations

from collections import Counter

from mentor.summary import summarise
from mentor.types import FailedGroup, Intervention


def count_skipped(stats: Counter, reason: str) -> None:
    """A collapsed group the mentor could not serve, and why (e.g. `missing_reference`)."""
    stats["skipped"] += 1
    stats[f"skipped/{reason}"] += 1


def earlier_tier(group: FailedGroup) -> int:
    """The highest tier `group`'s problem was hinted at before (0: never)."""
    return max((h.get("tier", 0) for h in group.previous_hints if isinstance(h, dict)), default=0)


def count_intervention(stats: Counter, intervention: Intervention, recovered: bool, earlier_tier: int = 0) -> None:
    """One intervention of the step: its outcome, the leaks it blocked, its fallbacks, its error class and tier (a
    re-draw has neither). `earlier_tier`: the highest tier the problem was hinted at before (0: never); a hint at no
    higher tier is an escalation that had nothing new to give."""
    counts = summarise([intervention])
    stats["interventions"] += 1
    stats["recovered"] += recovered
    stats["escalation_exhausted"] += bool(counts.hinted and earlier_tier and intervention.tier <= earlier_tier)
    for key in ("withheld", "leaks_blocked", "llm_fallbacks", "failures", "tier_sum", "hinted", "format_only",
                "redrawn"):
        stats[key] += getattr(counts, key)
    if intervention.redraw:  # no graph ran: no class was diagnosed
        return
    error_class = intervention.diagnosis.error_class
    stats[f"error_class/{error_class}"] += counts.classes[error_class]  # 0 for a failed run: the class is still named


def step_metrics(stats: Counter, collapsed_before: int, collapsed_after: int, n_groups: int, mentor_s: float,
                 regen_s: float, redraws: bool = False) -> dict[str, float]:
    """The step's mentor/* metrics from its counters, its collapsed groups before and after the splice (of
    `n_groups`), and the seconds the graph and the re-generation took. `redraws`: the retry control's step
    (`hint_source: none`), which gives no hint: `mentor/redrawn` counts its re-drawn groups, and no tier is logged."""
    metrics = {
        "mentor/collapse_rate_before": collapsed_before / max(n_groups, 1),
        "mentor/collapse_rate_after": collapsed_after / max(n_groups, 1),
        "mentor/interventions": stats["interventions"],
        "mentor/recovered": stats["recovered"] / stats["interventions"] if stats["interventions"] else 0.0,
        "mentor/withheld": stats["withheld"], "mentor/leaks_blocked": stats["leaks_blocked"],
        "mentor/mentor_s": mentor_s, "mentor/regen_s": regen_s,
        "mentor/tier_mean": stats["tier_sum"] / stats["hinted"] if stats["hinted"] else 0.0,
        "mentor/format_only_hints": stats["format_only"], "mentor/escalation_exhausted": stats["escalation_exhausted"],
        "mentor/llm_fallbacks": stats["llm_fallbacks"], "mentor/failures": stats["failures"],
        "mentor/skipped": stats["skipped"], "mentor/special_tokens_neutralised": stats["special_tokens_neutralised"],
        **{f"mentor/{k}": v for k, v in stats.items() if k.startswith(("error_class/", "skipped/"))},
    }
    if redraws:  # a mean tier of 0 would read as tier-0 hints
        del metrics["mentor/tier_mean"]
        metrics["mentor/redrawn"] = stats["redrawn"]
    return metrics
