"""Step time with the mentor (rules backend) over step time without, on the same collapsed batch.

Every group of the batch collapses, so each step re-generates every group once: the floor is (1 + share of
collapsed groups) x the baseline step. Two policies:
- `lab`: a random tiny policy on hard additions (64 rows, 6 tokens); target within 1.15x of the floor;
- `smollm2`: SmolLM2-135M-Instruct (mentor.models.resolve) on chat products it fails (8 rows, 48 tokens);
  target at most 1.0x the floor, since only generation doubles while the loss sees as many rows.
Each arm runs in a fresh process, so its peak memory (max RSS) is its own.

    .venv/bin/python benchmarks/step_overhead.py [--policy lab|smollm2] [--steps N] [--rounds 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import tempfile

POLICIES = {  # steps, threads, warm-up steps dropped
    "lab": {"steps": 20, "threads": 1, "warmup": 2},
    "smollm2": {"steps": 4, "threads": 1, "warmup": 1},
}


def paid_hints(completions, mentor_hint=None, **kwargs) -> list[float]:
    """1 for every hinted row, 0 for the rest: every re-attempt spliced in is a correct one."""
    return [1.0 if hint else 0.0 for hint in mentor_hint or [""] * len(completions)]


def step_times(policy: str, with_mentor: bool, steps: int, out: str, config: dict | None = None,
               pay_hints: bool = False) -> dict:
    """TRL's own `step_time` per step, the mentor's, the re-generation's and the reliance passes' seconds, the
    measured share of collapsed groups, and this process's peak RSS.

    config: the mentor config, over `traces: true`. pay_hints: the reward is `paid_hints`, not the task's.
    """
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from mentor import Mentor

    torch.set_num_threads(POLICIES[policy]["threads"])  # the tiny model: more threads only spin
    torch.manual_seed(0)
    common = dict(output_dir=out, use_cpu=True, bf16=False, beta=0.0, max_steps=steps, logging_steps=1,
                  learning_rate=1e-6, report_to="none", save_strategy="no", gradient_checkpointing=False, seed=0,
                  disable_tqdm=True, num_generations=8)
    if policy == "lab":
        from mentor.lab.data import make_dataset
        from mentor.lab.model import build_policy
        from mentor.rewards import arithmetic_reward

        model, tokenizer = build_policy(0)
        args = GRPOConfig(per_device_train_batch_size=64, max_completion_length=6, **common)
        reward, dataset = arithmetic_reward, make_dataset("hard", 2000, seed=0)
    else:
        from mentor.data.easy_arithmetic import products_dataset
        from mentor.models import offline_copy
        from mentor.rewards import math_reward

        tokenizer = None  # TRL loads it from the model's directory
        model = offline_copy("HuggingFaceTB/SmolLM2-135M-Instruct")
        args = GRPOConfig(per_device_train_batch_size=8, max_completion_length=48, temperature=1.0, **common)
        reward, dataset = math_reward, products_dataset(64, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[paid_hints if pay_hints else reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    if with_mentor:
        Mentor.from_config({"traces": True, **(config or {})}).attach(trainer)
    trainer.train()
    logs = [log for log in trainer.state.log_history if "step_time" in log][POLICIES[policy]["warmup"]:]
    return {"step_s": [log["step_time"] for log in logs],
            "mentor_s": [log.get("mentor/mentor_s", 0.0) for log in logs],
            "regen_s": [log.get("mentor/regen_s", 0.0) for log in logs],
            "reliance_s": [log.get("mentor/reliance_s", 0.0) for log in logs],
            "collapsed": statistics.mean(log.get("mentor/collapse_rate_before", log["frac_reward_zero_std"])
                                         for log in logs),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def in_fresh_process(*args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(step_times, args)


def parse_args(doc: str, arms: str) -> tuple[argparse.Namespace, int]:
    """A step benchmark's command line (--policy, --steps, --rounds of alternating `arms` runs); and its steps per
    run."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--policy", choices=sorted(POLICIES), default="lab")
    parser.add_argument("--steps", type=int, default=None, help="steps per run (default: the policy's)")
    parser.add_argument("--rounds", type=int, default=2, help=f"alternating {arms} runs, against drift")
    args = parser.parse_args()
    return args, args.steps or POLICIES[args.policy]["steps"]


def main() -> None:
    args, steps = parse_args(__doc__, "baseline/mentor")
    runs = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for with_mentor in (False, True):
                runs[with_mentor].append(in_fresh_process(args.policy, with_mentor, steps, f"{tmp}/{with_mentor}{r}"))
    base = [t for run in runs[False] for t in run["step_s"]]
    mentor = [t for run in runs[True] for t in run["step_s"]]
    share = statistics.mean(run["collapsed"] for run in runs[True])
    ratio, floor = statistics.median(mentor) / statistics.median(base), 1 + share
    mentor_s = statistics.median(t for run in runs[True] for t in run["mentor_s"])
    regen_s = statistics.median(t for run in runs[True] for t in run["regen_s"])
    target = 1.15 if args.policy == "lab" else 1.0
    print(f"policy {args.policy}; collapsed share {share:.2f}; median step {1000 * statistics.median(base):.0f} ms "
          f"without, {1000 * statistics.median(mentor):.0f} ms with the mentor ({len(base)} + {len(mentor)} steps)")
    print(f"ratio with/without {ratio:.2f}; floor {floor:.2f}; ratio / floor {ratio / floor:.2f} (target <= {target})")
    print(f"with the mentor, per step: mentor graph {mentor_s / statistics.median(mentor):.1%}, "
          f"re-generation {regen_s / statistics.median(mentor):.1%} of the step")
    print(f"peak RSS: {max(run['peak_rss_mb'] for run in runs[False]):.0f} MB without, "
          f"{max(run['peak_rss_mb'] for run in runs[True]):.0f} MB with the mentor")


if __name__ == "__main__":
    main()
