"""Round 7 (lab)'s secondary figures (docs/evidence/round7-lab-memory-repeats.md), from the finished run: per policy
the outcomes, hint dependence per arm, the training time per arm over `learning`'s, what the memory hit, rescued and
saved, how many problems collapsed again, which candidate the learning rule chose, and where the blocks ran. Reads
only; trains nothing.

    .venv/bin/python experiments/round7_lab/summarise.py

The memory and choice figures read each block's trace store, which stays on the machine that ran it; without them
those lines say so.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # experiments/block_figures.py

from block_figures import (  # noqa: E402
    chosen_sources,
    dependence_lines,
    environments,
    outcome_table,
    repeated_problems,
    step_sums,
    time_lines,
    trace_store,
)

MEMORY_KEYS = ("memory_hits", "memory_rescues", "graph_runs_saved", "interventions")


def main() -> None:
    blocks = [json.loads(p.read_text()) for p in sorted((HERE / "blocks").glob("*.json"))]
    arms = list(json.loads((HERE / "results.json").read_text())["arms"])
    print(outcome_table(blocks, arms))
    print("\n".join([*dependence_lines(blocks, arms), *time_lines(blocks, arms, "learning"), *environments(blocks)]))

    for arm in ("learning", "memory"):
        stores = [trace_store(HERE, b["name"], arm) for b in blocks]
        if any(t is None for t in stores):
            print(f"{arm}: trace stores missing for {sum(t is None for t in stores)} blocks; not read")
            continue
        sums = [step_sums(t, MEMORY_KEYS) for t in stores]
        repeats = [repeated_problems(t) for t in stores]
        chosen = sum((chosen_sources(t) for t in stores), Counter())
        for t in stores:
            t.close()
        total = {key: sum(s[key] for s in sums) for key in MEMORY_KEYS}
        print(f"{arm}: {sum(r[1] for r in repeats):,} of {sum(r[0] for r in repeats):,} problems intervened on more "
              f"than once; {total['interventions']:,.0f} interventions, memory hits {total['memory_hits']:,.0f} "
              f"({total['memory_hits'] / total['interventions']:.1%}; graph runs saved "
              f"{total['graph_runs_saved']:,.0f}), of which rescued {total['memory_rescues']:,.0f} "
              f"({total['memory_rescues'] / max(1, total['memory_hits']):.1%})")
        n = sum(chosen.values())
        print(f"{arm}: the chosen hint's source over {n:,} interventions: "
              + ", ".join(f"{source} {k:,} ({k / n:.1%})" for source, k in chosen.most_common()))

if __name__ == "__main__":
    main()
