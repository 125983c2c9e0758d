"""Round 6 (lab)'s secondary figures (docs/evidence/round6-lab-memory-iw.md), from the finished run: per policy the
outcomes, hint dependence per arm with the same hints, the training time per arm over the mentor's, what `memory`
saved and what `mentor_iw` weighted, and which candidate the learning rule chose. Reads only; trains nothing.

    .venv/bin/python experiments/round6_lab/summarise.py

The memory, weight and choice figures read each block's trace store (`blocks/pP-g0/ARM-seed0/mentor/traces.sqlite`),
which stays on the machine that ran the block (gitignored); without them those lines say so.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def store(block: str, arm: str):
    from mentor.traces import TraceStore

    path = HERE / "blocks" / block / f"{arm}-seed0" / "mentor" / "traces.sqlite"
    return TraceStore(path) if path.exists() else None


def step_sums(block: str, arm: str, keys: tuple[str, ...]) -> dict[str, float] | None:
    """Each `mentor/<key>` summed over the run's logged steps."""
    if (traces := store(block, arm)) is None:
        return None
    steps = traces.steps()
    return {key: sum(s.get(f"mentor/{key}", 0) for s in steps) for key in keys}


def weights(block: str, arm: str) -> tuple[float, float, float] | None:
    """(rows weighted, weight summed over them, rows at the cap) over the run's steps."""
    if (traces := store(block, arm)) is None:
        return None
    steps = traces.steps()
    rows = sum(s.get("mentor/off_policy_rows", 0) for s in steps)
    total = sum(s.get("mentor/off_policy_weight", 0) * s.get("mentor/off_policy_rows", 0) for s in steps)
    return rows, total, sum(s.get("mentor/off_policy_capped", 0) for s in steps)


def chosen_sources(block: str, arm: str) -> Counter | None:
    """The chosen candidate's source per intervention, `#k` draws folded into their origin and the class library's
    `memory:PROBLEM@STEP` into `memory`."""
    if (traces := store(block, arm)) is None:
        return None
    chosen = [next((c["source"] for c in r.get("candidates") or [] if c.get("chosen")), None) for r in traces]
    return Counter(c.split("#")[0].split(":")[0] for c in chosen if c is not None)


def repeated_problems(block: str, arm: str) -> tuple[int, int] | None:
    """(problems intervened on, those intervened on more than once): only a repeat can hit a problem's memory."""
    if (traces := store(block, arm)) is None:
        return None
    counts = Counter(r["problem_id"] for r in traces)
    return len(counts), sum(n > 1 for n in counts.values())


def main() -> None:
    blocks = [json.loads(p.read_text()) for p in sorted((HERE / "blocks").glob("*.json"))]
    arms = json.loads((HERE / "results.json").read_text())["arms"]
    print("| policy | " + " | ".join(arms) + " |")  # no library step: no arm of this round tunes the library
    print("|---|" + "---:|" * len(arms))
    for b in blocks:
        print(f"| {b['pretrain_seed']} | " + " | ".join(f"{b['outcome'][a]:.3f}" for a in arms) + " |")
    print("| **mean** | " + " | ".join(f"**{statistics.mean(b['outcome'][a] for b in blocks):.3f}**"
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
              f"{statistics.mean(b['runs'][a].get('interventions', 0) for b in blocks):.0f}")

    memory = [step_sums(b["name"], "memory", ("memory_hits", "memory_rescues", "graph_runs_saved", "interventions"))
              for b in blocks]
    if any(m is None for m in memory):
        print(f"memory: trace stores missing for {sum(m is None for m in memory)} blocks; not read")
    else:
        total = {key: sum(m[key] for m in memory) for key in memory[0]}
        shares = [m["graph_runs_saved"] / m["interventions"] for m in memory if m["interventions"]]
        print(f"memory: {total['graph_runs_saved']:,.0f} graph runs saved of {total['interventions']:,.0f} "
              f"interventions ({total['graph_runs_saved'] / total['interventions']:.1%}; per block "
              f"{min(shares):.1%}-{max(shares):.1%}); memory hits {total['memory_hits']:,.0f}, of which rescued "
              f"{total['memory_rescues']:,.0f} ({total['memory_rescues'] / max(1, total['memory_hits']):.1%})")
        repeats = [repeated_problems(b["name"], "memory") for b in blocks]
        print(f"memory: {sum(r[1] for r in repeats):,} of {sum(r[0] for r in repeats):,} problems intervened on "
              "more than once (only those can hit a problem's memory)")

    weighed = [weights(b["name"], "mentor_iw") for b in blocks]
    if any(w is None for w in weighed):
        print(f"mentor_iw: trace stores missing for {sum(w is None for w in weighed)} blocks; not read")
    else:
        rows, total, capped = (sum(w[k] for w in weighed) for k in range(3))
        means = [w[1] / w[0] for w in weighed if w[0]]
        print(f"mentor_iw: {rows:,.0f} stripped rows weighted, mean weight {total / rows:.3f} (per block "
              f"{min(means):.3f}-{max(means):.3f}), at the cap {capped:,.0f} ({capped / rows:.1%})")

    for a in ("learning", "memory"):
        counts = [chosen_sources(b["name"], a) for b in blocks]
        if any(c is None for c in counts):
            print(f"{a}: trace stores missing for {sum(c is None for c in counts)} blocks; choice counts not read")
            continue
        total = sum(counts, Counter())
        n = sum(total.values())
        print(f"{a}: the chosen hint's source over {n:,} interventions: "
              + ", ".join(f"{source} {k:,} ({k / n:.1%})" for source, k in total.most_common()))


if __name__ == "__main__":
    main()
