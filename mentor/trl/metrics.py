"""The step's mentor/* metrics: counters kept while the hook mentors a step's collapsed groups, and the metrics
they give at the end of the step (logged by MentorCallback.log_step)."""

from __future__ import annotations

from collections import Counter

from mentor.summary import summarise
from mentor.types import Intervention


def count_skipped(stats: Counter, reason: str) -> None:
    """A collapsed group the mentor could not serve, and why (e.g. `missing_reference`)."""
    stats["skipped"] += 1
    stats[f"skipped/{reason}"] += 1


def count_intervention(stats: Counter, intervention: Intervention, recovered: bool) -> None:
    """One intervention of the step: its outcome, the leaks it blocked, its fallbacks, its error class and tier."""
    counts = summarise([intervention])
    stats["interventions"] += 1
    stats["recovered"] += recovered
    for key in ("withheld", "leaks_blocked", "llm_fallbacks", "failures", "tier_sum", "hinted", "format_only"):
        stats[key] += getattr(counts, key)
    error_class = intervention.diagnosis.error_class
    stats[f"error_class/{error_class}"] += counts.classes[error_class]  # 0 for a failed run: the class is still named


def step_metrics(stats: Counter, collapsed_before: int, collapsed_after: int, n_groups: int, mentor_s: float,
                 regen_s: float) -> dict[str, float]:
    """The step's mentor/* metrics from its counters, its collapsed groups before and after the splice (of
    `n_groups`), and the seconds the graph and the re-generation took."""
    return {
        "mentor/collapse_rate_before": collapsed_before / max(n_groups, 1),
        "mentor/collapse_rate_after": collapsed_after / max(n_groups, 1),
        "mentor/interventions": stats["interventions"],
        "mentor/recovered": stats["recovered"] / stats["interventions"] if stats["interventions"] else 0.0,
        "mentor/withheld": stats["withheld"], "mentor/leaks_blocked": stats["leaks_blocked"],
        "mentor/mentor_s": mentor_s, "mentor/regen_s": regen_s,
        "mentor/tier_mean": stats["tier_sum"] / stats["hinted"] if stats["hinted"] else 0.0,
        "mentor/format_only_hints": stats["format_only"],
        "mentor/llm_fallbacks": stats["llm_fallbacks"], "mentor/failures": stats["failures"],
        "mentor/skipped": stats["skipped"], "mentor/special_tokens_neutralised": stats["special_tokens_neutralised"],
        **{f"mentor/{k}": v for k, v in stats.items() if k.startswith(("error_class/", "skipped/"))},
    }
