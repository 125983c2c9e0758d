"""One-digit mask hints (`Hint: _7__`), trained: one 600-step run of the demo per call (docs/history.md, "Mask hints,
trained"). The step-0 probe is lab_mask_probe.py; this trains.

    .venv/bin/python experiments/lab_mask_train.py --arm static_hints --column thousands --seed 0 --out /tmp/mask
    .venv/bin/python experiments/lab_mask_train.py --arm mentor --rule most_wrong --seed 0 --out /tmp/mask
    .venv/bin/python experiments/lab_mask_train.py --arm grpo --seed 0 --out /tmp/mask

Every run starts from the mask policy of lab_mask_probe.py (mask rows 15%, mask lines on half the tail rows, seed 0;
pre-trained and cached on first use, about 7 min), and uses the demo's settings except: the hint is one answer digit
in the prompt, spliced on-policy (`mixed`, 6 of 8 rows hinted, no `strip_hint`), and the learning rate is 2e-4 (at
the demo's 1e-3, hints stopped rescuing any group within 3 steps, in both hinted arms).

- `static_hints --column C`: the library reveals one fixed column per problem: `thousands`, `hundreds`, or `rule`
  (thousands where the sum reaches 1000, else hundreds).
- `mentor --rule R`: the four-agent graph, rules backend, with a composer that reveals the column `most_wrong` (most
  attempts get it wrong, leftmost on ties), or `systematic` (a column every attempt gets wrong with the same digit,
  else one every attempt gets right).

The demo's `run_arm` knows prefix hints only. For this process, the script swaps in the mask library (the hint
column), the mask composer (a task registered as `arithmetic_mask`) and the hinted evaluation behind hint dependence
(the library's hundreds mask, in the prompt). Prints the run's figures as JSON; the run directory holds its traces.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mask_rows import MaskRows, mask_hint
from mentor import tasks
from mentor.lab import demo, pretrain, sampling
from mentor.tasks import arithmetic
from mentor.tasks.arithmetic import WIDTH, ArithmeticTask

MASK_POLICY = MaskRows(mask_share=0.15, tail_mask_share=0.5)
STRATEGY = {"task": "arithmetic_mask", "strategy": "mixed", "mixed_share": 0.75, "hint_placement": "prompt",
            "strip_hint": False, "train_prefix": False}
LIBRARY_COLUMNS = {"thousands": lambda answer: 0, "hundreds": lambda answer: 1,
                   "rule": lambda answer: 0 if answer[0] == "1" else 1}


class MaskTask(ArithmeticTask):
    """The arithmetic task with a tier-3 hint of one answer digit, at the column `rule` picks."""

    name = "arithmetic_mask"

    def __init__(self, rule: str):
        super().__init__()
        self.rule = rule

    def compose(self, group, diagnosis, tier, feedback):
        answer = str(group.reference["answer"])
        got = [g for g in ((a.feedback or {}).get("extracted_answer") for a in group.attempts) if g]
        if not got:
            return mask_hint(answer, 1)
        if self.rule == "most_wrong":  # the units column counts as the tens: the probe's columns stop there
            wrong = [sum(g[i] != answer[i] for g in got) for i in range(WIDTH)]
            return mask_hint(answer, min(max(range(WIDTH), key=lambda i: (wrong[i], -i)), WIDTH - 2))
        digits = [{g[i] for g in got} for i in range(WIDTH)]
        systematic = [i for i in range(WIDTH) if len(digits[i]) == 1 and answer[i] not in digits[i]]
        right = [i for i in range(WIDTH) if digits[i] == {answer[i]}]
        return mask_hint(answer, (systematic or right or [1])[0])


def swap_in_mask_hints(column: str, rule: str) -> None:
    """Mask hints for this process's demo run: library, composer and hinted evaluation."""
    tasks.register(MaskTask.name, MaskTask(rule))
    arithmetic.partial_answer_hint = lambda answer, k: mask_hint(answer, LIBRARY_COLUMNS[column](answer))
    sampling.first_digits = lambda k: (lambda row: mask_hint(row["answer"], 1))
    evaluate = sampling.evaluate
    sampling.evaluate = lambda *args, placement="prompt", **kwargs: evaluate(*args, placement="prompt", **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arm", choices=demo.ARMS, required=True)
    parser.add_argument("--column", choices=sorted(LIBRARY_COLUMNS), default="thousands",
                        help="the library's column (static_hints; default thousands)")
    parser.add_argument("--rule", choices=("most_wrong", "systematic"), default="most_wrong",
                        help="the mentor composer's column rule (mentor; default most_wrong)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    policy = pretrain.pretrained_policy(num_threads=1, extra=MASK_POLICY)  # before the swap: pre-training uses the hints
    swap_in_mask_hints(args.column, args.rule)
    settings = demo.DemoSettings(steps=args.steps, seeds=[args.seed], arms=[args.arm], strategy=STRATEGY,
                                 learning_rate=args.learning_rate)
    out = Path(args.out) / (args.arm + {"static_hints": f"-{args.column}", "mentor": f"-{args.rule}"}.get(args.arm, ""))
    result = demo.run_arm(args.arm, args.seed, policy, settings, out)
    print(json.dumps({"arm": args.arm, "column": args.column, "rule": args.rule, "seed": args.seed,
                      "heldout_acc_after": result["heldout_acc_after"], "hint_dependence": result["hint_dependence"],
                      "interventions": result["interventions"],
                      "curve": [round(c["heldout_acc"], 3) for c in result["curve"]]}))


if __name__ == "__main__":
    main()
