r"""What SmolLM2-135M-Instruct's re-attempts look like with each hint (docs/evidence/round3-step0-evals.md): per row,
of the G samples per collapsed sum group, how many write a \boxed{}, how many state the right sum somewhere, and how
many the verifier scores right (those that end on it). The samples are `mentor eval`'s own: the same rows, seed and
batches (mentor.evaluation.sample), so the last column equals G x groups x the report's mean_reward.

    .venv/bin/mentor failures --source policy --family sum -o /tmp/sum_failures.jsonl
    OMP_NUM_THREADS=1 .venv/bin/python experiments/smollm2_hint_forms.py /tmp/sum_failures.jsonl [--seed 0]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from mentor.command_files import read_failures
from mentor.evaluation import group_inputs, load_configs, load_policy, sample, with_columns
from mentor.policy import torch_threads
from mentor.tasks import get_task

CONFIGS = Path(__file__).resolve().parent.parent / "benchmarks" / "eval_configs"
ROWS = {"knowledge": "smollm2_knowledge.yaml", "plan": "smollm2_plan.yaml", "partial": "smollm2_partial.yaml",
        "mentor": "smollm2_mentor.yaml"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("failures")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=int, default=8)
    args = p.parse_args()
    groups, _ = read_failures(args.failures)
    runtimes = load_configs({name: str(CONFIGS / file) for name, file in ROWS.items()})
    policy = load_policy("HuggingFaceTB/SmolLM2-135M-Instruct")
    print(f"{len(groups)} groups x {args.samples} samples, seed {args.seed}, T = 1, 48 new tokens")
    print(f"{'row':<12}{'boxed':>8}{'right sum stated':>18}{'scored right':>14}")
    with torch_threads(1):
        for name in ["none", *ROWS]:
            if name == "none":
                hints, placement = [None] * len(groups), "prompt"
            else:
                runtime = runtimes[name]
                hints = [iv.hint for iv in runtime.run([with_columns(g, runtime.config.columns) for g in groups])]
                placement = runtime.config.hint_placement
            inputs = [group_inputs(policy, g, h, placement) for g, h in zip(groups, hints)]
            responses = sample(policy, inputs, args.samples, 1.0, 48, args.seed, desc=name)
            boxed = stated = right = 0
            for g, rs in zip(groups, responses):
                answer = str(g.reference["answer"])
                for text, _ in rs:
                    boxed += "\\boxed{" in text
                    stated += re.search(rf"(?<!\d){re.escape(answer)}(?!\d)", text) is not None
                    right += get_task(g.task).score(text, g.reference) > 0
            print(f"{name:<12}{boxed:>8}{stated:>18}{right:>14}")


if __name__ == "__main__":
    main()
