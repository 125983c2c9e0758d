"""Round 6's secondary figures (docs/evidence/round6-qwen-confirmatory.md), from the committed files: per row and seed
the rescue rate, reliance, hint tokens, withheld hints, fallbacks with their causes and graph faults; the oracle over
the rows, per seed and pooled; and one rescued and one unrescued hint per hinted row, as text. The primaries are
`python -m mentor.evaluation.pooled`'s (the plan's commands). Reads only; samples nothing.

It prints rates, so it refuses to run while a seed whose failures ran has no eval yet: the plan reads no comparison
before the last seed's eval.

    .venv/bin/python experiments/round6/summarise.py [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def seed_of(path: Path) -> int:
    return int(path.stem.split("_")[1])


def unfinished(folder: Path) -> list[int]:
    """The seeds whose failures ran and whose eval has not."""
    return sorted(seed_of(p) for p in folder.glob("failures_*.jsonl")
                  if not (folder / f"eval_{seed_of(p)}.json").exists())


def records(folder: Path, seed: int, row: str) -> list[dict]:
    path = folder / f"iv_{seed}" / f"{row}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def per_seed(reports: dict[int, dict]) -> list[str]:
    rows = list(next(iter(reports.values()))["configs"])
    lines = ["per seed: rescued/groups per row; the oracle (each group rescued by any row)",
             "  seed  " + "  ".join(f"{r:>12}" for r in rows) + "        oracle"]
    for seed, report in reports.items():
        cells = [f"{report['configs'][r]['rescued']:>5}/{report['configs'][r]['groups']:<3} " for r in rows]
        rescued = [any(flags) for flags in zip(*(report["configs"][r]["group_rescued"] for r in rows))]
        lines.append(f"  {seed:>4}  " + "  ".join(f"{c:>12}" for c in cells) + f"  {sum(rescued):>5}/{len(rescued)}")
    return lines


def pooled(reports: dict[int, dict]) -> list[str]:
    rows = list(next(iter(reports.values()))["configs"])
    lines = ["pooled over the seeds: rescue rate; reliance and hint tokens (group-weighted means); withheld, llm "
             "fallbacks, graph faults"]
    oracle = [any(f) for r in reports.values() for f in zip(*(r["configs"][x]["group_rescued"] for x in rows))]
    for name in rows:
        cells = [r["configs"][name] for r in reports.values()]
        groups = sum(c["groups"] for c in cells)
        rescued = sum(c["rescued"] for c in cells)
        rely = [(c["reliance"], c["groups"]) for c in cells if c["reliance"] is not None]
        reliance = sum(v * n for v, n in rely) / sum(n for _, n in rely) if rely else None
        tokens = sum(c["hint_tokens"] * c["groups"] for c in cells) / groups
        counts = [sum(c.get(k) or 0 for c in cells) for k in ("withheld", "llm_fallbacks", "failures")]
        lines.append(f"  {name:<11} {rescued:>4}/{groups:<4} = {rescued / groups:.3f}  reliance "
                     f"{'-' if reliance is None else f'{reliance:+.3f}'}  hint tokens {tokens:.1f}  "
                     f"{counts[0]}, {counts[1]}, {counts[2]}")
    lines.append(f"  oracle      {sum(oracle):>4}/{len(oracle):<4} = {sum(oracle) / len(oracle):.3f}")
    return lines


def fallbacks(folder: Path, reports: dict[int, dict]) -> list[str]:
    causes = Counter()
    for seed, report in reports.items():
        for row in report["configs"]:
            for record in records(folder, seed, row):
                causes.update(f"{row}: {str(message)[:120]}" for message in record.get("fallbacks") or [])
    return ["fallbacks by cause: " + ("none" if not causes else "")] + [f"  {n} x {c}" for c, n in causes.items()]


def examples(folder: Path, reports: dict[int, dict]) -> list[str]:
    """Per hinted row, the first rescued and the first unrescued group that got a hint, over the seeds in order."""
    lines = ["examples (the first of each kind, by seed and group order):"]
    for name in next(iter(reports.values()))["configs"]:
        for want in (True, False):
            found = next(((seed, record) for seed, report in reports.items()
                          for record, rescued in zip(records(folder, seed, name),
                                                     report["configs"][name]["group_rescued"])
                          if rescued == want and record.get("hint")), None)
            if found:
                seed, record = found
                lines.append(f"  {name} {'rescued' if want else 'not rescued'} (seed {seed}, {record['problem_id']}):"
                             f" {record['hint'][:400]!r}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=HERE, help="the round's folder (default: this one)")
    folder = parser.parse_args(argv).dir
    waiting = unfinished(folder)
    if waiting:
        print(f"error: no eval yet for the seeds whose failures ran: {', '.join(map(str, waiting))}; the plan reads "
              f"no rate before the last seed's eval (run.sh {' '.join(map(str, waiting))} first)", file=sys.stderr)
        return 2
    evals = sorted(folder.glob("eval_*.json"), key=seed_of)
    if not evals:
        print(f"error: no eval_S.json in {folder}", file=sys.stderr)
        return 2
    reports = {seed_of(p): json.loads(p.read_text()) for p in evals}
    for block in (per_seed(reports), pooled(reports), fallbacks(folder, reports), examples(folder, reports)):
        print("\n".join(block) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
