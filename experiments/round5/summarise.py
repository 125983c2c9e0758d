"""Round 5's secondary figures (docs/evidence/round5-fresh-policies.md), from the finished run: per policy the outcomes,
hint dependence per arm with the same hints, the training time per arm over the mentor's, and how often the learning
rule gave a hint other than the graph's. Reads only; trains nothing.

    .venv/bin/python experiments/round5/summarise.py

The choice counts read each block's trace store (`blocks/pP-g0/ARM-seed0/mentor/traces.sqlite`), which stays on the
machine that ran the block (gitignored); without them that line says so.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent


def chosen_not_graph(block: str, arm: str) -> tuple[int, int] | None:
    """(interventions whose chosen candidate is not the graph's first draw, interventions with candidates)."""
    from mentor.traces import TraceStore

    path = HERE / "blocks" / block / f"{arm}-seed0" / "mentor" / "traces.sqlite"
    if not path.exists():
        return None
    chosen = [next((c["source"] for c in r.get("candidates") or [] if c.get("chosen")), None) for r in TraceStore(path)]
    chosen = [c for c in chosen if c is not None]
    return sum(c != "graph" for c in chosen), len(chosen)


def main() -> None:
    blocks = [json.loads(p.read_text()) for p in sorted((HERE / "blocks").glob("*.json"))]
    arms = json.loads((HERE / "results.json").read_text())["arms"]
    print("| policy | library step | " + " | ".join(arms) + " |")
    print("|---|---:|" + "---:|" * len(arms))
    for b in blocks:
        print(f"| {b['pretrain_seed']} | {b['library_step']} | "
              + " | ".join(f"{b['outcome'][a]:.3f}" for a in arms) + " |")
    print("| **mean** | | " + " | ".join(f"**{statistics.mean(b['outcome'][a] for b in blocks):.3f}**"
                                       for a in arms) + " |")
    for step in ("1", "2"):
        print(f"hint dependence with the step-{step} hint (held-out accuracy with it minus without), mean of "
              f"{len(blocks)}: " + ", ".join(
                  f"{a} {statistics.mean(b['runs'][a]['hint_dependence_by_step'][step] for b in blocks):+.3f}"
                  for a in arms))
    for a in arms:
        ratios = [b["runs"][a]["train_s"] / b["runs"]["mentor"]["train_s"] for b in blocks]
        print(f"training time {a} / mentor per block: median {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}); interventions per run, mean "
              f"{statistics.mean(b['runs'][a]['interventions'] for b in blocks):.0f}")
    for a in ("learning", "two_draws"):
        counts = [chosen_not_graph(b["name"], a) for b in blocks]
        if any(c is None for c in counts):
            print(f"{a}: trace stores missing for {sum(c is None for c in counts)} blocks; choice counts not read")
            continue
        shares = [n / d for n, d in counts if d]
        changed, total = sum(n for n, _ in counts), sum(d for _, d in counts)
        print(f"{a}: gave a hint other than the graph's first draw in {changed:,} of {total:,} interventions "
              f"({changed / total:.1%}), per block {min(shares):.1%}-{max(shares):.1%}")


if __name__ == "__main__":
    main()
