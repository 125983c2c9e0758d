"""`python -m mentor.lab [--seed N] [--cache-dir DIR] [--n N]`: pre-train the lab policy (or load it from
the cache) and print its measured figures as JSON: easy accuracy, hard accuracy (greedy and sampled as
GRPO groups), and hard accuracy with 1/2/3-digit partial-answer hints in both placements. `--commit` copies
the default policy into the package (`mentor/lab/policy`), so that fresh machines load it instead of training."""

from __future__ import annotations

import argparse
import json
import shutil
import time

from mentor.lab import data
from mentor.lab.pretrain import DEFAULT_CACHE_DIR, pretrained_policy
from mentor.lab.sampling import evaluate, first_digits, sample_rewards
from mentor.models.checkpoint import COMMITTED_POLICY, load_checkpoint
from mentor.policy import torch_threads


def measure(path: str, n: int = 500, seed: int = 0, num_threads: int = 2) -> dict:
    model, tok = load_checkpoint(path)
    easy = data.generate_problems("easy", n, seed=seed + 1, split="all")
    hard = data.generate_problems("hard", n, seed=seed, split="heldout")
    out: dict = {"policy": path, "n": n}
    with torch_threads(num_threads):
        t0 = time.time()
        out["easy_acc"] = evaluate(model, tok, easy)
        out["hard_acc"] = evaluate(model, tok, hard)
        groups = sample_rewards(model, tok, hard, num_samples=8, temperature=1.0, seed=seed)
        out["hard_sampled_reward"] = sum(map(sum, groups)) / (8 * len(groups))
        out["hard_collapsed_groups"] = sum(1 for g in groups if max(g) == 0) / len(groups)
        for placement in ("prompt", "prefix"):
            for k in (1, 2, 3):
                out[f"hard_hint{k}_{placement}_acc"] = evaluate(model, tok, hard, first_digits(k), placement=placement)
                g = sample_rewards(model, tok, hard, 8, 1.0, first_digits(k), placement, seed=seed)
                out[f"hard_hint{k}_{placement}_rescued_groups"] = sum(1 for r in g if max(r) > 0) / len(g)
        out["eval_seconds"] = round(time.time() - t0, 1)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m mentor.lab", description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default=DEFAULT_CACHE_DIR)
    ap.add_argument("--n", type=int, default=500, help="problems per evaluation")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--commit", action="store_true",
                    help="pre-train in the cache (ignoring the committed policy) and copy it to mentor/lab/policy")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.n < 1:
        ap.error("--threads and --n must be at least 1")
    t0 = time.time()
    if args.commit:
        shutil.rmtree(COMMITTED_POLICY, ignore_errors=True)
    path = pretrained_policy(args.cache_dir, seed=args.seed, num_threads=args.threads)
    if args.commit:
        shutil.copytree(path, COMMITTED_POLICY)
        path = str(COMMITTED_POLICY)
    meta = json.load(open(f"{path}/meta.json"))
    result = {"pretrain_seconds": meta["train_seconds"], "load_or_train_seconds": round(time.time() - t0, 1),
              **measure(path, args.n, args.seed, args.threads)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
