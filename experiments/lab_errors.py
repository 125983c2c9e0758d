"""Where the CPU lab's trained policies still go wrong: from a `mentor demo` results.json (its `heldout_wrong`).

For each arm: the wrong held-out problems per seed, the first wrong answer column and whether a carry comes into it,
and how much two seeds' wrong sets overlap against what independent errors at those rates would share. A large
overlap says the errors follow from the problems (a per-problem hint library could anticipate them); a small one says
they follow from each run's training (only a live diagnosis can see them). Across arms, the same for seed pairs.

    .venv/bin/python experiments/lab_errors.py /tmp/exp/wrong3/results.json
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter

from mentor.tasks.arithmetic import COLUMNS, carries_into


def first_wrong(error: dict) -> str:
    """`column` or `column (carry in)` of the first wrong answer digit; `no answer` when none was given."""
    if error["got"] is None:
        return "no answer"
    a, b = error["operands"]
    i = next(i for i, (g, t) in enumerate(zip(error["got"], error["answer"])) if g != t)
    return COLUMNS[i] + (" (carry in)" if carries_into(a, b)[i] else "")


def overlap(x: set, y: set, n: int) -> tuple[int, float]:
    """Problems wrong in both, and how many independent errors at these rates would share (|x| |y| / n)."""
    return len(x & y), len(x) * len(y) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.json of `mentor demo`")
    results = json.loads(open(ap.parse_args().results).read())
    n, seeds = results["settings"]["heldout_problems"], results["settings"]["seeds"]
    wrong = {(arm, seed): {e["problem_id"] for e in run["heldout_wrong"]}
             for arm, figures in results["arms"].items() for seed, run in zip(seeds, figures["runs"])}
    print(f"{n} held-out problems; seeds {seeds}")
    for arm, figures in results["arms"].items():
        errors = [e for run in figures["runs"] for e in run["heldout_wrong"]]
        print(f"\n{arm}: wrong per seed {[len(wrong[arm, s]) for s in seeds]}")
        columns = Counter(map(first_wrong, errors)).most_common()
        print("  first wrong column: " + ", ".join(f"{c} {k}" for c, k in columns))
        for s, t in itertools.combinations(seeds, 2):
            shared, chance = overlap(wrong[arm, s], wrong[arm, t], n)
            print(f"  seeds {s} and {t}: {shared} wrong in both (independent errors would share {chance:.1f})")
    for a, b in itertools.combinations(results["arms"], 2):
        for s in seeds:
            shared, chance = overlap(wrong[a, s], wrong[b, s], n)
            print(f"{a} and {b}, seed {s}: {shared} wrong in both (independent: {chance:.1f})")


if __name__ == "__main__":
    main()
