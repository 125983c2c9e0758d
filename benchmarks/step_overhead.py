"""Step time with the mentor (rules backend) over step time without, on the same collapsed batch.

Every group of the batch collapses (a random policy on hard additions), so each step re-generates every group once:
the floor is (1 + share of collapsed groups) x the baseline step = 2x. The target is within 1.15x of that floor.

    .venv/bin/python benchmarks/step_overhead.py [--steps 20] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

import torch
from trl import GRPOConfig, GRPOTrainer

from mentor import Mentor
from mentor.lab.data import make_dataset
from mentor.lab.model import build_policy
from mentor.tasks.arithmetic import arithmetic_reward


def step_times(with_mentor: bool, steps: int, out: str) -> tuple[list[float], float]:
    """TRL's own `step_time` per step, and the measured share of collapsed groups."""
    torch.manual_seed(0)
    model, tokenizer = build_policy(0)
    args = GRPOConfig(output_dir=out, use_cpu=True, bf16=False, beta=0.0, per_device_train_batch_size=64,
                      num_generations=8, max_completion_length=6, max_steps=steps, logging_steps=1,
                      learning_rate=1e-4, report_to="none", save_strategy="no", gradient_checkpointing=False,
                      seed=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=model, reward_funcs=[arithmetic_reward], args=args,
                          train_dataset=make_dataset("hard", 2000, seed=0), processing_class=tokenizer)
    if with_mentor:
        Mentor.from_config({"traces": True}).attach(trainer)
    trainer.train()
    logs = [log for log in trainer.state.log_history if "step_time" in log]
    collapsed = [log.get("mentor/collapse_rate_before", log["frac_reward_zero_std"]) for log in logs]
    return [log["step_time"] for log in logs][2:], statistics.mean(collapsed)  # the first steps warm up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2, help="alternating baseline/mentor runs, against drift")
    args = parser.parse_args()
    torch.set_num_threads(1)  # tiny model: more threads only spin
    base, mentor, shares = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            times, _ = step_times(False, args.steps, f"{tmp}/base{r}")
            base += times
            times, share = step_times(True, args.steps, f"{tmp}/mentor{r}")
            mentor += times
            shares.append(share)
    share = statistics.mean(shares)
    ratio = statistics.median(mentor) / statistics.median(base)
    floor = 1 + share
    print(f"collapsed share {share:.2f}; median step {1000 * statistics.median(base):.0f} ms without, "
          f"{1000 * statistics.median(mentor):.0f} ms with the mentor ({len(base)} + {len(mentor)} steps)")
    print(f"ratio with/without {ratio:.2f}; floor {floor:.2f}; ratio / floor {ratio / floor:.2f} (target <= 1.15)")


if __name__ == "__main__":
    main()
