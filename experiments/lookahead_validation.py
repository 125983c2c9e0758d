"""Does `mentor eval`'s rescue, or its `--lookahead` figure, rank the composed lab's arms as training does?

For each kept pre-training seed of a blocked run (`mentor demo --lab composed --blocks N`, its results.json or
results.json.partial), `mentor eval`'s code runs on that seed's step-0 failures (the collapsed groups of the 300
training problems the library is chosen on, sampling seed = the seed) with the rows `none`, `step1`, `step2` and
`mentor`, and `--lookahead K` (default 5 steps at the demo's learning rate 1e-3). Each trained arm is matched to its
row (`resample` to `none`, `static_hints` to the seed's library step, `mentor` to `mentor`) and the Spearman
correlation of each figure with the trained outcome is reported per block and per seed (the mean over its blocks),
with their means. `--earlier` adds the issue-24 runs (seeds 0-2, `static_hints` and `mentor`,
docs/evidence/round2-composed-lab.md): whether each figure orders the two arms as training did.

    .venv/bin/python experiments/lookahead_validation.py runs/blocks/results.json --json runs/lookahead.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

ROW_OF = {"resample": "none", "mentor": "mentor"}  # static_hints: the seed's library step
# docs/evidence/round2-composed-lab.md, "Trained: 3 arms x 3 seeds": held-out accuracy after 200 steps
# (library step 1, 2, 2).
EARLIER = {0: {"static_hints": 0.218, "mentor": 0.150, "step": 1}, 1: {"static_hints": 0.302, "mentor": 0.364, "step": 2},
           2: {"static_hints": 0.104, "mentor": 0.090, "step": 2}}


def ranks(values: list[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank.

    >>> ranks([0.3, 0.1, 0.3])
    [2.5, 1.0, 2.5]
    """
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float | None:
    """Spearman's rank correlation (Pearson on ranks); None where either side has no spread.

    >>> spearman([1, 2, 3], [10, 30, 20])
    0.5
    """
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va, vb = sum((x - ma) ** 2 for x in ra), sum((y - mb) ** 2 for y in rb)
    return None if not va or not vb else cov / (va * vb) ** 0.5


def step0_figures(seed: int, steps: int, lr: float, pretrain: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Rescue rate and lookahead of `none`, `step1`, `step2` and `mentor` on the seed's step-0 failures."""
    from mentor.evaluation import evaluate, load_policy
    from mentor.lab import composed as lab
    from mentor.lab.composed_eval import LIBRARY_RULES, MENTOR_CONFIG, composed_failure_rows, library_config
    from mentor.lab.data import generate_problems
    from mentor.lab.pretrain import pretrained_policy
    from mentor.policy import torch_threads
    from mentor.runtime import MentorRuntime
    from mentor.types import FailedGroup

    policy_dir = pretrained_policy(seed=seed, lab="composed", **pretrain)
    with torch_threads(1):
        rows = composed_failure_rows(policy_dir, generate_problems("hard", 300, seed=seed, split="train", lab="composed"), seed=seed)
        runtimes = {n: MentorRuntime(library_config(k)) for n, k in LIBRARY_RULES.items()}
        runtimes["mentor"] = MentorRuntime(MENTOR_CONFIG)
        report = evaluate([FailedGroup.from_dict(r) for r in rows], load_policy(policy_dir), runtimes, 8, 1.0,
                          lab.MAX_NEW_TOKENS, seed, lookahead_steps=steps, lookahead_lr=lr)
    return {n: {"rescue": c["rescue_rate"], "lookahead": c["lookahead"]} for n, c in report["configs"].items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a blocked run's results.json (or results.json.partial)")
    ap.add_argument("--steps", type=int, default=5, help="lookahead steps K (default 5)")
    ap.add_argument("--lr", type=float, default=1e-3, help="lookahead learning rate (default 1e-3, the demo's)")
    ap.add_argument("--earlier", action="store_true", help="also the issue-24 runs (seeds 0-2, two arms)")
    ap.add_argument("--json", help="write every figure here (a seed's step-0 figures already there are reused)")
    args = ap.parse_args(argv)
    results = json.loads(Path(args.results).read_text())
    pretrain = results["settings"].get("pretrain", {})
    blocks = results["blocks"]
    seeds = sorted({b["pretrain_seed"] for b in blocks} | ({0, 1, 2} if args.earlier else set()))
    earlier = json.loads(Path(args.json).read_text()) if args.json and Path(args.json).exists() else {}
    same = earlier.get("steps") == args.steps and earlier.get("lr") == args.lr  # step-0 figures reused from --json
    figures = {s: earlier["step0"][str(s)] if same and str(s) in earlier.get("step0", {}) else
               step0_figures(s, args.steps, args.lr, pretrain) for s in seeds}
    out: dict[str, Any] = {"steps": args.steps, "lr": args.lr, "step0": figures, "blocks": {}, "seeds": {}}
    arms = [a for a in ("resample", "static_hints", "mentor") if a in blocks[0]["outcome"]]
    for figure in ("rescue", "lookahead"):
        per_block, per_seed = [], {}
        for b in blocks:
            rows = [ROW_OF.get(a, f"step{b['library_step']}") for a in arms]
            predicted = [figures[b["pretrain_seed"]][r][figure] for r in rows]
            rho = spearman(predicted, [b["outcome"][a] for a in arms])
            out["blocks"].setdefault(b["name"], {})[figure] = rho
            per_block.append(rho)
        for s in sorted({b["pretrain_seed"] for b in blocks}):
            mine = [b for b in blocks if b["pretrain_seed"] == s]
            rows = [ROW_OF.get(a, f"step{mine[0]['library_step']}") for a in arms]
            trained = [sum(b["outcome"][a] for b in mine) / len(mine) for a in arms]
            per_seed[s] = spearman([figures[s][r][figure] for r in rows], trained)
            out["seeds"].setdefault(str(s), {})[figure] = per_seed[s]
        # The headline pair: does the figure order the library against the mentor as each block's training did?
        agree = [(figures[b["pretrain_seed"]][f"step{b['library_step']}"][figure] > figures[b["pretrain_seed"]]
                  ["mentor"][figure]) == (b["outcome"]["static_hints"] > b["outcome"]["mentor"]) for b in blocks]
        out[f"{figure}_library_vs_mentor_agrees"] = f"{sum(agree)} of {len(agree)} blocks"
        print(f"{figure}: orders library against mentor as training did in {sum(agree)} of {len(agree)} blocks")
        kept = [r for r in per_block if r is not None]
        seed_kept = [r for r in per_seed.values() if r is not None]
        out[f"{figure}_mean_rho_blocks"] = sum(kept) / len(kept) if kept else None
        out[f"{figure}_mean_rho_seeds"] = sum(seed_kept) / len(seed_kept) if seed_kept else None
        print(f"{figure}: Spearman with the trained outcome over {arms}: mean over {len(kept)} blocks "
              f"{out[f'{figure}_mean_rho_blocks']}, over {len(seed_kept)} seeds {out[f'{figure}_mean_rho_seeds']}; "
              f"per seed {per_seed}")
        if args.earlier:
            agree = {s: (figures[s][f"step{e['step']}"][figure] > figures[s]["mentor"][figure])
                     == (e["static_hints"] > e["mentor"]) for s, e in EARLIER.items()}
            out[f"{figure}_earlier_agrees"] = agree
            print(f"{figure}: orders library against mentor as the issue-24 runs did on seeds {agree}")
    print(json.dumps(figures, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
