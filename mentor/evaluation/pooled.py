"""`python -m mentor.evaluation.pooled EVAL.json ...`: `mentor eval` reports of several sampling seeds, pooled.

Per row: groups rescued over all reports, with a 95% Wilson interval, and the per-report rates beside; the oracle
rescues a group if any row does. Per comparison
`a - b`: the mean over pooled groups of the paired difference of the two rows' rescued indicators, with a cluster
bootstrap over problems (a problem that collapsed under several seeds is one cluster) and round 4's decision
(mentor.evaluation.intervals: `paired_bootstrap`, `decide`). docs/evidence/qwen40.md's pre-registration fixes these.

`--holm` (round 6's rule): each comparison also gets a two-sided sign-flip p over its problems' summed differences
(100,000 random sign patterns, seed 0), Holm-adjusted over the comparisons given. The decision is then a win or a
loss where the Holm p is under 0.05, else the bootstrap's `matches` or `unresolved`; the bootstrap's own decision is
kept beside as `bootstrap_decision`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from mentor.evaluation.intervals import MARGIN, decide, paired_bootstrap, undecided, wilson
from mentor.evaluation.policy_stats import holm, sign_flip_p
from mentor.output import write_atomically
from mentor.types import InputError

ALPHA = 0.05  # --holm: the family-wise level over the comparisons given
SIGN_FLIPS = 100_000


def read_report(path: str | Path) -> dict[str, Any]:
    """A `mentor eval` report with the per-group fields the pooling needs, or an InputError naming the file and the
    field: each problem id a string, each row an object with a `rescue_rate` share and a true/false rescued flag per
    group."""
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a readable `mentor eval` report ({e})") from None
    if not isinstance(report, dict) or not isinstance(report.get("configs"), dict):
        raise InputError(f"{path}: not a `mentor eval` report (no `configs` object)")
    ids = report.get("problem_ids")
    if not isinstance(ids, list):
        raise InputError(f"{path}: no `problem_ids`: written by a mentor older than the pooled analysis; rerun "
                         "`mentor eval` to get the per-group fields")
    bad = next((i for i, pid in enumerate(ids) if not isinstance(pid, str)), None)
    if bad is not None:
        raise InputError(f"{path}: problem_ids[{bad}] is {ids[bad]!r}; each must be a problem id (a string)")
    for name, row in report["configs"].items():
        if not isinstance(row, dict):
            raise InputError(f"{path}: row {name!r} is not an object (got {type(row).__name__})")
        flags = row.get("group_rescued")
        if not isinstance(flags, list) or len(flags) != len(ids):
            raise InputError(f"{path}: row {name!r} has no `group_rescued` list of {len(ids)} groups")
        bad = next((i for i, flag in enumerate(flags) if not isinstance(flag, bool)), None)
        if bad is not None:
            raise InputError(f"{path}: row {name!r}: group_rescued[{bad}] is {flags[bad]!r}; each must be true or "
                             "false (the group rescued or not)")
        rate = row.get("rescue_rate")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise InputError(f"{path}: row {name!r}: rescue_rate is {rate!r}; it must be a share in [0, 1]")
    return report


def read_reports(paths: list[str]) -> list[dict[str, Any]]:
    """Each report of `paths` (`read_report`), or an InputError naming both files where one is given twice: the
    same file, or the same seed, policy, problems and rescue flags (a copy), which would count each group twice."""
    reports: dict[str, dict[str, Any]] = {}
    for path in paths:
        report = read_report(path)
        for prev, seen in reports.items():
            if os.path.samefile(prev, path):
                raise InputError(f"{path} is given twice (the same file as {prev}); give each seed's report once")
            if fingerprint(seen) == fingerprint(report):
                raise InputError(f"{path} is the same report as {prev} (seed {report.get('seed')}, policy "
                                 f"{report.get('policy')}, the same {len(report['problem_ids'])} problems and rescue "
                                 "flags): pooled twice, each group would count twice; give each seed's report once")
        reports[path] = report
    return list(reports.values())


def fingerprint(report: dict[str, Any]) -> tuple:
    """What tells one seed's report from another's: its seed, policy, problems and every row's rescue flags."""
    rows = tuple(sorted((name, tuple(row["group_rescued"])) for name, row in report["configs"].items()))
    return report.get("seed"), report.get("policy"), tuple(report["problem_ids"]), rows


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
         resamples: int = 10_000, seed: int = 0, holm_test: bool = False) -> dict[str, Any]:
    """The pooled rows and the decided comparisons (see the module doc) of `reports` (each as `read_report`);
    `holm_test` decides them by the sign-flip test and Holm (`--holm`)."""
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
        if holm_test:  # whole problems flip sign: the clusters the bootstrap resamples
            decided[f"{a} - {b}"]["sign_flip_p"] = sign_flip_p([sum(ds) for ds in clusters.values()],
                                                               resamples=SIGN_FLIPS, seed=seed)
    if holm_test:
        adjusted = holm({name: c["sign_flip_p"] for name, c in decided.items()})
        for name, c in decided.items():
            c["holm_p"], c["bootstrap_decision"] = adjusted[name], c.pop("decision")
            c.pop("n_needed", None)
            c.update({"decision": "win" if c["mean"] > 0 else "loss"} if c["holm_p"] < ALPHA else undecided(c, margin))
    return {"reports": len(reports), "margin": margin, "holm": holm_test, "rows": rows, "oracle": oracle,
            "comparisons": decided}


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
        if "holm_p" in c:
            extra += f"  sign-flip p {c['sign_flip_p']:.4f}, Holm {c['holm_p']:.4f}; bootstrap {c['bootstrap_decision']}"
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
    p.add_argument("--holm", action="store_true",
                   help="decide by a sign-flip test over problems, Holm-adjusted over the comparisons (round 6)")
    p.add_argument("-o", "--out", help="write the pooled figures as JSON here")
    args = p.parse_args(argv)
    from mentor.output import check_output

    try:
        if args.out:  # refused before anything is read: an input report is a seed's whole sampling
            check_output(Path(args.out), "-o", [Path(f) for f in args.reports])
        pooled = pool(read_reports(args.reports), [parse_comparison(c) for c in args.compare], margin=args.margin,
                      holm_test=args.holm)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(table(pooled))
    if args.out:
        write_atomically(Path(args.out), [json.dumps(pooled, indent=2)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
