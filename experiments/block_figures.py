"""The secondary figures a blocked lab run's summarise script prints (round 7 on; rounds 5 and 6 keep their own
scripts, each part of its frozen record): the per-policy table, hint dependence by step, training time over one arm,
and what a run's trace store says of its memory and its choices. Reads only; trains nothing.

A block's trace store (`blocks/pP-gG/ARM-seed0/mentor/traces.sqlite`) stays on the machine that ran it (gitignored):
`trace_store` opens it once, or returns None, and the figures that need it take the open store.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any


def trace_store(folder: Path, block: str, arm: str):
    """The run's trace store, read-only, or None where it is not on this machine."""
    from mentor.traces import TraceStore

    path = folder / "blocks" / block / f"{arm}-seed0" / "mentor" / "traces.sqlite"
    return TraceStore(path, readonly=True) if path.exists() else None


def step_sums(traces, keys: tuple[str, ...]) -> dict[str, float]:
    """Each `mentor/<key>` summed over the run's logged steps."""
    steps = traces.steps()
    return {key: sum(s.get(f"mentor/{key}", 0) for s in steps) for key in keys}


def chosen_sources(traces) -> Counter:
    """The chosen candidate's source per intervention, `#k` draws folded into their origin and the class library's
    `memory:PROBLEM@STEP` into `memory`."""
    chosen = [next((c["source"] for c in r.get("candidates") or [] if c.get("chosen")), None) for r in traces]
    return Counter(c.split("#")[0].split(":")[0] for c in chosen if c is not None)


def repeated_problems(traces) -> tuple[int, int]:
    """(problems intervened on, those intervened on more than once): only a repeat can hit a problem's memory."""
    counts = Counter(r["problem_id"] for r in traces)
    return len(counts), sum(n > 1 for n in counts.values())


def outcome_table(blocks: list[dict[str, Any]], arms: list[str]) -> str:
    """Markdown: each policy's outcome per arm, and the means."""
    lines = ["| policy | " + " | ".join(arms) + " |", "|---|" + "---:|" * len(arms)]
    lines += [f"| {b['pretrain_seed']} | " + " | ".join(f"{b['outcome'][a]:.3f}" for a in arms) + " |" for b in blocks]
    lines.append("| **mean** | " + " | ".join(f"**{statistics.mean(b['outcome'][a] for b in blocks):.3f}**"
                                               for a in arms) + " |")
    return "\n".join(lines)


def dependence_lines(blocks: list[dict[str, Any]], arms: list[str]) -> list[str]:
    """Per hint step, each arm's mean hint dependence (held-out accuracy with that hint minus without)."""
    return [f"hint dependence with the step-{step} hint, mean of {len(blocks)}: " + ", ".join(
        f"{a} {statistics.mean(b['runs'][a]['hint_dependence_by_step'][step] for b in blocks):+.3f}" for a in arms)
        for step in ("1", "2")]


def time_lines(blocks: list[dict[str, Any]], arms: list[str], over: str) -> list[str]:
    """Each arm's training time over `over`'s, per block (median and range), and its interventions per run."""
    lines = []
    for a in arms:
        ratios = [b["runs"][a]["train_s"] / b["runs"][over]["train_s"] for b in blocks]
        lines.append(f"training time {a} / {over} per block: median {statistics.median(ratios):.2f} "
                     f"({min(ratios):.2f}-{max(ratios):.2f}); interventions per run, mean "
                     f"{statistics.mean(b['runs'][a].get('interventions', 0) for b in blocks):.0f}")
    return lines


def environments(blocks: list[dict[str, Any]]) -> list[str]:
    """The environments the blocks ran in, each with its blocks' policies."""
    seen: dict[str, list[int]] = {}
    for b in blocks:
        env = b.get("environment") or {}
        key = ", ".join(f"{k} {v}" for k, v in sorted(env.items())) or "not recorded"
        seen.setdefault(key, []).append(b["pretrain_seed"])
    return [f"environment ({len(seeds)} blocks: {', '.join(map(str, seeds))}): {key}" for key, seeds in seen.items()]
