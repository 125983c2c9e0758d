"""Issue 40's run, what `mentor eval`'s own table (kept in log_S.txt) does not show, from the committed files of
experiments/qwen40 (docs/evidence/qwen40.md): per seed, how many `feedback` hints the
rules leakage checker would have withheld, and one rescued and one unrescued group per hinted row, as text; then, per
row over the seeds, hint tokens, reliance and the counts of what the mentor did (issue 40 item 4). Reads only;
samples nothing.

    .venv/bin/python experiments/qwen40/summarise.py [SEED ...]      # default: every seed with an eval_S.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent


def leak_checked(group: dict) -> int:
    """1 if the rules leakage checker flags the group's `feedback` hint (the gated library would withhold it)."""
    from mentor.leakage.checker import check_leak
    from mentor.tasks import get_task

    hint = group["reference"].get("feedback") or ""
    return int(bool(hint) and check_leak(hint, group["reference"], get_task("code"), problem=group["prompt"]).leaked)


def examples(seed: int, report: dict) -> list[str]:
    """Per hinted row, its first rescued and first unrescued group that got a hint: the problem and the hint."""
    lines = []
    for name, row in report["configs"].items():
        path = HERE / f"iv_{seed}" / f"{name}.jsonl"
        if name == "none" or not path.exists():
            continue
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for want in (True, False):
            for record, rescued in zip(records, row["group_rescued"]):
                if rescued == want and record.get("hint"):
                    lines.append(f"  {name} {'rescued' if want else 'not rescued'}: {record['problem_id']}: "
                                 f"{record['hint'][:400]!r}")
                    break
    return lines


def summarise(seed: int, report: dict) -> list[str]:
    groups = [json.loads(line) for line in (HERE / f"failures_{seed}.jsonl").read_text().splitlines()]
    lines = [f"seed {seed}: {len(groups)} collapsed groups; eval seed {report['seed']} (rows: log_{seed}.txt)"]
    flagged = sum(leak_checked(g) for g in groups)
    lines.append(f"  feedback hints the rules leakage checker would withhold: {flagged} of {len(groups)}")
    return lines + examples(seed, report)


def per_row(reports: dict[int, dict]) -> list[str]:
    """Per row, each seed's hint tokens and reliance (a mean over its hinted groups, and over its correct hinted
    responses), and the withheld hints, llm fallbacks and graph faults summed over the seeds."""
    lines = [f"per row, seeds {', '.join(map(str, reports))}: hint tokens; reliance; withheld, fallbacks, faults"]
    for name in next(iter(reports.values()))["configs"]:
        rows = [r["configs"][name] for r in reports.values()]
        tokens = ", ".join(f"{row['hint_tokens']:.1f}" for row in rows)
        rely = ", ".join("-" if row["reliance"] is None else f"{row['reliance']:+.3f}" for row in rows)
        counts = [sum(row[k] for row in rows) for k in ("withheld", "llm_fallbacks", "failures")]
        lines.append(f"  {name:<11} {tokens:<20} {rely:<24} {counts[0]}, {counts[1]}, {counts[2]}")
    return lines


def main(argv: list[str]) -> int:
    seeds = [int(s) for s in argv] or sorted(int(p.stem.split("_")[1]) for p in HERE.glob("eval_*.json"))
    reports = {seed: json.loads((HERE / f"eval_{seed}.json").read_text()) for seed in seeds}
    for seed, report in reports.items():
        print("\n".join(summarise(seed, report)))
    print("\n".join(per_row(reports)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
