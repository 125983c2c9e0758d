"""`python -m mentor.evaluation.pooled EVAL.json ...`: `mentor eval` reports of several sampling seeds, pooled.

Per row: groups rescued over all reports, with a 95% Wilson interval, and the per-report rates beside; the oracle
rescues a group if any row does. Per comparison
`a - b`: the mean over pooled groups of the paired difference of the two rows' rescued indicators, with a cluster
bootstrap over problems (a problem that collapsed under several seeds is one cluster) and round 4's decision
(mentor.evaluation.intervals: `paired_bootstrap`, `decide`). docs/evaluation.md's Qwen pre-registration fixes these.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from mentor.evaluation.intervals import MARGIN, decide, paired_bootstrap, wilson
from mentor.output import write_atomically
from mentor.types import InputError


def read_report(path: str | Path) -> dict[str, Any]:
    """A `mentor eval` report with the per-group fields the pooling needs, or an InputError naming the file."""
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a readable `mentor eval` report ({e})") from None
    if not isinstance(report, dict) or not isinstance(report.get("configs"), dict):
        raise InputError(f"{path}: not a `mentor eval` report (no `configs` object)")
    ids = report.get("problem_ids")
    if not isinstance(ids, list):
        raise InputError(f"{path}: no `problem_ids`: written by a mentor older than the pooled analysis; rerun "
                         "`mentor eval` to get the per-group fields")
    for name, row in report["configs"].items():
        flags = row.get("group_rescued")
        if not isinstance(flags, list) or len(flags) != len(ids):
            raise InputError(f"{path}: row {name!r} has no `group_rescued` list of {len(ids)} groups")
    return report


def parse_comparison(text: str) -> tuple[str, str]:
    """`"mentor - none"` or `"mentor-none"` -> ("mentor", "none")."""
    parts = [p.strip() for p in text.split("-")]
    if len(parts) != 2 or not all(parts):
        raise InputError(f"--compare {text!r}: write each comparison as ROW-ROW, e.g. mentor-none (row names may "
                         "not contain '-')")
    return parts[0], parts[1]


def rescued(flags: list[bool]) -> dict[str, Any]:
    """Groups, groups rescued, the rescue rate and its 95% Wilson interval, of per-group rescued flags."""
    return {"groups": len(flags), "rescued": sum(flags), "rescue_rate": sum(flags) / len(flags) if flags else 0.0,
            "rescue_ci": list(wilson(sum(flags), len(flags)))}


def pool(reports: list[dict[str, Any]], comparisons: list[tuple[str, str]], margin: float = MARGIN,
         resamples: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """The pooled rows and the decided comparisons (see the module doc) of `reports` (each as `read_report`)."""
    if not reports:
        raise InputError("pooled: give at least one `mentor eval` report")
    names = [n for n in reports[0]["configs"] if all(n in r["configs"] for r in reports)]
    rows: dict[str, Any] = {}
    for name in names:
        rows[name] = {**rescued([f for r in reports for f in r["configs"][name]["group_rescued"]]),
                      "per_report": [r["configs"][name]["rescue_rate"] for r in reports]}
    oracle = rescued([any(flags) for r in reports
                      for flags in zip(*(r["configs"][n]["group_rescued"] for n in names))])
    decided: dict[str, Any] = {}
    for a, b in comparisons:
        missing = [n for n in (a, b) if n not in rows]
        if missing:
            raise InputError(f"comparison {a} - {b}: no row {missing[0]!r} in every report (rows: {', '.join(names)})")
        clusters: dict[str, list[float]] = defaultdict(list)
        per_report = []
        for r in reports:
            diffs = [float(x) - float(y) for x, y in zip(r["configs"][a]["group_rescued"],
                                                         r["configs"][b]["group_rescued"])]
            for pid, d in zip(r["problem_ids"], diffs):
                clusters[pid].append(d)
            per_report.append(sum(diffs) / len(diffs) if diffs else None)
        if not clusters:
            raise InputError(f"comparison {a} - {b}: the reports hold no groups")
        stats = paired_bootstrap(clusters, resamples=resamples, seed=seed)
        decided[f"{a} - {b}"] = {**stats, **decide(stats, margin), "per_report": per_report,
                                 "gained": sum(d > 0 for ds in clusters.values() for d in ds),
                                 "lost": sum(d < 0 for ds in clusters.values() for d in ds)}
    return {"reports": len(reports), "margin": margin, "rows": rows, "oracle": oracle, "comparisons": decided}


def table(pooled: dict[str, Any]) -> str:
    """The pooled rows and comparisons as printed lines."""
    lines = [f"{pooled['reports']} reports pooled"]
    for name, row in pooled["rows"].items():
        lo, hi = row["rescue_ci"]
        lines.append(f"  {name:<12} {row['rescued']:>4}/{row['groups']:<4} rescued  {row['rescue_rate']:.3f} "
                     f"[{lo:.3f}, {hi:.3f}]  per report " + ", ".join(f"{x:.3f}" for x in row["per_report"]))
    oracle = pooled["oracle"]
    lines.append(f"  {'oracle':<12} {oracle['rescued']:>4}/{oracle['groups']:<4} rescued  {oracle['rescue_rate']:.3f} "
                 f"[{oracle['rescue_ci'][0]:.3f}, {oracle['rescue_ci'][1]:.3f}]  (any row)")
    for name, c in pooled["comparisons"].items():
        extra = f" (n needed {c['n_needed']})" if c["decision"] == "unresolved" else ""
        lines.append(f"  {name:<22} {c['mean']:+.3f} 95% [{c['ci'][0]:+.3f}, {c['ci'][1]:+.3f}] 90% "
                     f"[{c['ci90'][0]:+.3f}, {c['ci90'][1]:+.3f}]  n {c['n']}, {c['clusters']} problems, "
                     f"+{c['gained']}/-{c['lost']}  {c['decision']}{extra}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mentor.evaluation.pooled", description=__doc__.split("\n\n")[0])
    p.add_argument("reports", nargs="+", help="`mentor eval` reports (-o files), one per sampling seed")
    p.add_argument("--compare", action="append", required=True, metavar="A-B",
                   help="a paired comparison of two rows, e.g. mentor-none; repeat for more")
    p.add_argument("--margin", type=float, default=MARGIN, help=f"equivalence margin (default {MARGIN})")
    p.add_argument("-o", "--out", help="write the pooled figures as JSON here")
    args = p.parse_args(argv)
    try:
        pooled = pool([read_report(f) for f in args.reports], [parse_comparison(c) for c in args.compare],
                      margin=args.margin)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(table(pooled))
    if args.out:
        write_atomically(Path(args.out), [json.dumps(pooled, indent=2)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
