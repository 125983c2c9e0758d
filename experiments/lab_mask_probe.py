"""Probe: one-digit mask hints (`Hint: _7__`: the hundreds digit is 7) in the CPU lab, measured at step 0.

Would a hint capped at one revealed digit let a live diagnosis beat a fixed per-problem library? (docs/history.md,
"Probe: one-digit mask hints".) Three commands, one thread each; every figure is on 500 held-out hard problems.

    .venv/bin/python experiments/lab_mask_probe.py train --mask-share 0.15 --tail-mask-share 0.5 --out /tmp/probe/m
    .venv/bin/python experiments/lab_mask_probe.py eval /tmp/probe/m        # or `committed`
    .venv/bin/python experiments/lab_mask_probe.py rescue /tmp/probe/m --sample-seed 0

`train` pre-trains a policy (about 6 min) with mask copy rows and mask lines on tail rows (`mask_share`,
`tail_mask_share` of mask_rows.MaskRows, mixed into mentor.lab.pretrain's rows); `eval` prints easy and hard accuracy, the collapsed share, greedy accuracy
and the copy rate with a mask at each column, and with the 2-digit prefix; `rescue` prints the share of problems
that at least one of 8 samples (T=1) gets right under the mask the mentor would choose (the column most attempts
get wrong), under each fixed column, under the rule "thousands if the sum reaches 1000, else hundreds", and the
per-problem best.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from mask_rows import MaskRows, mask_hint
from mentor.lab import COMMITTED_POLICY, pretrain, sampling
from mentor.lab import data as labdata
from mentor.models.checkpoint import load_checkpoint
from mentor.tasks import arithmetic

COLUMNS = ("thousands", "hundreds", "tens")


def masked(column: int):
    return lambda row: mask_hint(row["answer"], column)


def heldout() -> list[dict]:
    return labdata.generate_problems("hard", 500, seed=10_000, split="heldout")


def load(policy: str):
    return load_checkpoint(COMMITTED_POLICY if policy == "committed" else policy)


def train(args) -> dict:
    model, tokenizer, info = pretrain.pretrain(seed=args.seed, num_threads=1, progress=True,
                                               extra=MaskRows(args.mask_share, args.tail_mask_share))
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    return {"out": args.out, "train_seconds": info["train_seconds"], "final_loss": round(info["final_loss"], 4)}


def evaluate(args) -> dict:
    model, tokenizer = load(args.policy)
    hard = heldout()
    easy = labdata.generate_problems("easy", 500, seed=1234, split="all")
    groups = sampling.sample_rewards(model, tokenizer, hard, num_samples=8, temperature=1.0)
    out = {"easy": sampling.evaluate(model, tokenizer, easy), "hard": sampling.evaluate(model, tokenizer, hard),
           "collapsed": sum(not any(g) for g in groups) / len(groups)}
    for c, name in enumerate(COLUMNS):
        got = [arithmetic.extract_answer(o[0]) for o in sampling.completions(model, tokenizer, hard, masked(c))]
        out[f"mask_{name}"] = sum(g == row["answer"] for g, row in zip(got, hard)) / len(hard)
        copies = sum(g is not None and g[c] == row["answer"][c] for g, row in zip(got, hard))
        out[f"mask_{name}_copies"] = copies / len(hard)
    out["prefix_2_digits"] = sampling.evaluate(model, tokenizer, hard, hint_fn=sampling.first_digits(2),
                                               placement="prefix")
    return out


def rescue(args) -> dict:
    model, tokenizer = load(args.policy)
    hard = heldout()
    seed = 1 + 10 * args.sample_seed
    mentor = []  # the column most of the 8 unhinted attempts get wrong (leftmost on ties)
    for group, row in zip(sampling.completions(model, tokenizer, hard, num_samples=8, temperature=1.0, seed=seed),
                          hard):
        got = [c.strip()[:4] for c in group]  # a digit column is wrong unless 4 characters came and it matches
        wrong = [sum(len(g) < 4 or g[c] != row["answer"][c] for g in got) for c in range(len(COLUMNS))]
        mentor.append(wrong.index(max(wrong)))
    rescued = [[any(g) for g in sampling.sample_rewards(model, tokenizer, hard, hint_fn=masked(c), seed=seed + 1)]
               for c in range(len(COLUMNS))]
    rule = [0 if sum(row["operands"]) >= 1000 else 1 for row in hard]
    n = len(hard)
    return {"mentor": sum(rescued[m][i] for i, m in enumerate(mentor)) / n,
            **{f"always_{name}": sum(rescued[c]) / n for c, name in enumerate(COLUMNS)},
            "rule": sum(rescued[m][i] for i, m in enumerate(rule)) / n,
            "best_per_problem": sum(any(r[i] for r in rescued) for i in range(n)) / n,
            "mentor_equals_rule": sum(m == r for m, r in zip(mentor, rule)) / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="pre-train a policy that reads mask hints")
    t.add_argument("--mask-share", type=float, default=0.15)
    t.add_argument("--tail-mask-share", type=float, default=0.5)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", required=True)
    t.set_defaults(func=train)
    for name, func in (("eval", evaluate), ("rescue", rescue)):
        p = sub.add_parser(name)
        p.add_argument("policy", help="a saved policy directory, or `committed`")
        p.add_argument("--sample-seed", type=int, default=0)
        p.set_defaults(func=func)
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    print(json.dumps(args.func(args)))
    print(f"{args.command} took {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
