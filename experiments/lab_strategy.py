r"""The CPU lab's hinted arms under another splice strategy than the demo's
(`mentor.lab.labs.LAB_STRATEGY`).

Prints each arm's unhinted held-out accuracy per seed; the runs (results.json, traces) go to --out. The library's
on-policy default, for instance (docs/history.md, "Variants measured on the way"):

    .venv/bin/python experiments/lab_strategy.py --arms static_hints,mentor --seeds 0 \
        --strategy '{"strategy": "replace_group", "hint_placement": "prompt", "strip_hint": false, "train_prefix": false}'
"""

from __future__ import annotations

import argparse
import json

from mentor.lab import demo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strategy", required=True, help="JSON object of mentor config keys that replace the demo's")
    ap.add_argument("--arms", default="static_hints,mentor")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--out", default="/tmp/lab_strategy")
    args = ap.parse_args()
    # Through the settings, not by editing LAB_STRATEGY: each run is a fresh process that re-imports
    # mentor.lab.demo.
    settings = demo.DemoSettings(seeds=[int(s) for s in args.seeds.split(",")], arms=args.arms.split(","),
                                 strategy={**demo.LAB_STRATEGY, **json.loads(args.strategy)})
    results = demo.run_demo(args.out, settings)
    print(f"strategy {json.dumps(settings.strategy)}")
    for arm, figures in results["arms"].items():
        print(f"{arm}: held-out accuracy per seed {figures['heldout_acc_after_per_seed']}, "
              f"mean {figures['heldout_acc_after']:.3f}, dependence {figures['hint_dependence']:+.3f}")


if __name__ == "__main__":
    main()
