"""The composed lab's step-0 measurements: its failures as a `mentor eval` input, and the headroom table.

`python -m mentor.lab.composed_eval --seeds 0,1,2 --sample-seeds 0,1,2` pre-trains (or loads) each seed's policy,
samples 8 attempts at T=1 on `--n` held-out hard problems, keeps the collapsed groups (the step-0 failures), and runs
`mentor eval`'s rows on them: `none`, every fixed library rule (`reveal step k`, `benchmarks/eval_configs/composed_step
k.yaml`) and the mentor (`composed_mentor.yaml`). It prints, per seed, the rescue rates, the oracle, the best single
row and the spread of each row across sampling seeds, and where the attempts first go wrong. `-o FILE` also writes
one seed's failures (`--seeds` of one) as a .jsonl for `mentor eval`.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from mentor.lab import composed as lab
from mentor.lab import sampling
from mentor.lab.data import generate_problems
from mentor.lab.pretrain import pretrained_policy
from mentor.tasks.composed import ComposedTask, reward, step_hint

LIBRARY_RULES = {f"step{k}": k for k in range(1, lab.LEVELS["hard"])}  # the last step is the answer: never a hint


def library_config(k: int) -> dict[str, Any]:
    """The mentor config of the fixed rule "reveal step k" (the hint library reads `reference.hint_step<k>`)."""
    return {"task": "composed", "graph": "graphs/static_hints/graph.py:graph", "columns": {"hint": f"hint_step{k}"},
            "hint_placement": "prompt"}


MENTOR_CONFIG: dict[str, Any] = {"task": "composed", "hint_placement": "prompt"}


def reference_of(row: dict[str, Any]) -> dict[str, Any]:
    steps = [int(c) for c in row["answer"]]
    return {"answer": row["answer"], "digits": row["digits"], "ops": row["ops"],
            **{f"hint_step{k}": step_hint(steps, k) for k in LIBRARY_RULES.values()}}


def composed_failure_rows(policy_dir: str, problems: list[dict[str, Any]], samples: int = 8, seed: int = 0,
                 keep_all: bool = False) -> list[dict[str, Any]]:
    """The collapsed groups (every one with `keep_all`) of `samples` attempts at T=1, as `mentor diagnose` rows."""
    from mentor.models.checkpoint import load_checkpoint

    model, tok = load_checkpoint(policy_dir)
    outs = sampling.completions(model, tok, problems, num_samples=samples, temperature=1.0, seed=seed, lab="composed")
    rows = []
    for row, group in zip(problems, outs):
        attempts = [{"completion": c, "reward": reward(c, row["answer"])} for c in group]
        if keep_all or not any(a["reward"] for a in attempts):
            rows.append({"problem_id": row["problem_id"], "task": "composed", "prompt": row["prompt"],
                         "reference": reference_of(row), "attempts": attempts})
    return rows


def first_wrong_steps(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many attempts first go wrong at each step (`none`: no steps written): where the policy's gaps are."""
    task = ComposedTask()
    counts = Counter(task.feedback(a["completion"], r["reference"])["first_wrong_step"]
                     for r in rows for a in r["attempts"] if not a["reward"])
    return {str(k): v for k, v in sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))}


def rescue_table(policy_dir: str, rows: list[dict[str, Any]], sample_seed: int = 0, samples: int = 8,
                 mentor: bool = True) -> dict:
    """`mentor eval`'s report on `rows` for `none`, every library rule and (with `mentor`) the mentor."""
    from mentor.evaluation import evaluate, load_policy
    from mentor.runtime import MentorRuntime
    from mentor.types import FailedGroup

    runtimes = {name: MentorRuntime(library_config(k)) for name, k in LIBRARY_RULES.items()}
    if mentor:
        runtimes["mentor"] = MentorRuntime(MENTOR_CONFIG)
    groups = [FailedGroup.from_dict(r) for r in rows]
    return evaluate(groups, load_policy(policy_dir), runtimes, samples, 1.0, lab.MAX_NEW_TOKENS, sample_seed)


def best_library(policy_dir: str, rows: list[dict[str, Any]], sample_seed: int = 0) -> tuple[int, dict[str, float]]:
    """The fixed rule that rescues most of `rows` (ties: the earlier step), as a user with `mentor eval` would pick
    it, and every rule's rescue rate."""
    report = rescue_table(policy_dir, rows, sample_seed, mentor=False)
    rates = {name: report["configs"][name]["rescue_rate"] for name in LIBRARY_RULES}
    best = max(LIBRARY_RULES, key=lambda n: (rates[n], -LIBRARY_RULES[n]))
    return LIBRARY_RULES[best], rates


def policy_figures(policy_dir: str, n: int = 500) -> dict[str, Any]:
    """Easy and hard greedy accuracy, and the share of hard groups (8 at T=1) that collapse."""
    from mentor.models.checkpoint import load_checkpoint

    model, tok = load_checkpoint(policy_dir)
    easy = generate_problems("easy", min(n, 500), seed=1, split="all", lab="composed")
    hard = generate_problems("hard", n, seed=0, split="heldout", lab="composed")
    groups = sampling.completions(model, tok, hard, num_samples=8, temperature=1.0, seed=0, lab="composed")
    collapsed = sum(not any(reward(c, row["answer"]) for c in g) for g, row in zip(groups, hard)) / n
    return {"easy_acc": sampling.evaluate(model, tok, easy, lab="composed"),
            "hard_acc": sampling.evaluate(model, tok, hard, lab="composed"),
            "hard_collapsed": collapsed}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m mentor.lab.composed_eval", description=__doc__)
    ap.add_argument("--seeds", default="0,1,2", help="pre-training seeds")
    ap.add_argument("--sample-seeds", default="0,1,2", help="sampling seeds of the rescue rows")
    ap.add_argument("--n", type=int, default=500, help="held-out hard problems sampled per seed")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pretrain-steps", type=int, help="pre-training steps (default: the lab's, "
                                                        f"{lab.PRETRAIN_DEFAULTS['steps']})")
    ap.add_argument("-o", "--output", help="write the failures (one seed) as a .jsonl")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--commit", action="store_true", help="pre-train seed 0 in the cache (ignoring the committed "
                                                          "policy) and copy it to mentor/lab/composed_policy; no table")
    args = ap.parse_args(argv)
    from mentor.policy import torch_threads

    if args.commit:
        shutil.rmtree(lab.COMMITTED_POLICY, ignore_errors=True)
        shutil.copytree(pretrained_policy(seed=0, num_threads=args.threads, lab="composed"), lab.COMMITTED_POLICY)
        print(f"copied seed 0's policy to {lab.COMMITTED_POLICY}")
        return

    seeds, sample_seeds = [int(s) for s in args.seeds.split(",")], [int(s) for s in args.sample_seeds.split(",")]
    problems = generate_problems("hard", args.n, seed=0, split="heldout", lab="composed")
    out: dict[str, Any] = {}
    with torch_threads(args.threads):
        for seed in seeds:
            hparams = {"steps": args.pretrain_steps} if args.pretrain_steps else {}
            policy = pretrained_policy(seed=seed, num_threads=args.threads, lab="composed", **hparams)
            rows = composed_failure_rows(policy, problems, seed=0)
            if args.output:
                Path(args.output).write_text("".join(json.dumps(r) + "\n" for r in rows))
            reports = {s: rescue_table(policy, rows, s) for s in sample_seeds}
            names = list(reports[sample_seeds[0]]["configs"])
            rates = {name: [reports[s]["configs"][name]["rescue_rate"] for s in sample_seeds] for name in names}
            oracle = [reports[s]["oracle"]["rescue_rate"] for s in sample_seeds]
            fixed = [max(reports[s]["configs"][n]["rescue_rate"] for n in ["none", *LIBRARY_RULES]) for s in sample_seeds]
            out[seed] = {"policy": policy, **policy_figures(policy, args.n), "groups": len(rows),
                         "first_wrong_step": first_wrong_steps(rows), "rescue_rate": rates, "oracle": oracle,
                         "best_fixed": fixed, "spread": {n: max(v) - min(v) for n, v in rates.items()},
                         "best_single": [reports[s]["oracle"]["best_single"] for s in sample_seeds],
                         "hint_tokens": {n: reports[sample_seeds[0]]["configs"][n]["hint_tokens"] for n in names},
                         "reliance": {n: reports[sample_seeds[0]]["configs"][n]["reliance"] for n in names}}
            print(json.dumps({seed: out[seed]}, indent=1), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    print(table(out))


def table(out: dict[Any, dict[str, Any]]) -> str:
    """The headroom table (markdown): mean rescue rate over sampling seeds, and the spread."""
    seeds = list(out)
    names = list(next(iter(out.values()))["rescue_rate"])
    head = "| row | " + " | ".join(f"seed {s}" for s in seeds) + " | spread over sampling seeds (max) |\n"
    head += "|---|" + "---:|" * (len(seeds) + 1) + "\n"
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    lines = [f"| `{n}` | " + " | ".join(f"{100 * mean(out[s]['rescue_rate'][n]):.1f}%" for s in seeds)
             + f" | {100 * max(out[s]['spread'][n] for s in seeds):.1f} |" for n in names]
    lines.append("| **oracle** | " + " | ".join(f"{100 * mean(out[s]['oracle']):.1f}%" for s in seeds) + " | |")
    lines.append("| best fixed row | " + " | ".join(f"{100 * mean(out[s]['best_fixed']):.1f}%" for s in seeds) + " | |")
    return head + "\n".join(lines)


if __name__ == "__main__":
    main()
