"""What `redraw_all_pass` costs a step, and how often its replacement has no variance either.

The committed lab policy on a training set of easy sums (it solves them) and hard ones (it fails them), in the share
`--easy-share`: a batch then holds all-pass groups, which the option replaces by fresh rows' groups, and collapsed
ones, which the mentor (rules) serves in both arms. The same seeds, alternating runs with the option off and on, each
in a fresh process: TRL's `step_time` per step, and the option's counts.

    .venv/bin/python benchmarks/redraw_all_pass.py [--steps 12] [--rounds 2] [--easy-share 0.5]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile

WARMUP = 2  # first steps dropped


def run(redraw: bool, steps: int, easy_share: float, out: str) -> dict:
    import torch
    from datasets import concatenate_datasets
    from trl import GRPOConfig, GRPOTrainer

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.models.checkpoint import COMMITTED_POLICY, load_checkpoint
    from mentor.rewards import arithmetic_reward

    torch.set_num_threads(1)  # the tiny model: more threads only spin
    n_easy = round(400 * easy_share)
    dataset = concatenate_datasets([make_dataset("easy", n_easy, seed=0, split="all"),
                                    make_dataset("hard", 400 - n_easy, seed=0)])
    model, tokenizer = load_checkpoint(COMMITTED_POLICY)
    args = GRPOConfig(output_dir=out, use_cpu=True, bf16=False, beta=0.0, max_steps=steps, logging_steps=1,
                      learning_rate=1e-6, report_to="none", save_strategy="no", gradient_checkpointing=False, seed=0,
                      disable_tqdm=True, num_generations=8, per_device_train_batch_size=64, max_completion_length=6)
    trainer = GRPOTrainer(model=model, reward_funcs=[arithmetic_reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    Mentor.from_config({"traces": False, "redraw_all_pass": redraw}).attach(trainer)
    trainer.train()
    logs = [log for log in trainer.state.log_history if "step_time" in log][WARMUP:]
    return {"step_s": [log["step_time"] for log in logs],
            **{key: sum(log.get(f"mentor/{key}", 0) for log in logs)
               for key in ("all_pass_redrawn", "all_pass_zero_variance", "all_pass_collapsed")}}


def in_fresh_process(*args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(run, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="steps per run (the first 2 are dropped)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating off/on runs, against drift")
    parser.add_argument("--easy-share", type=float, default=0.5, help="share of easy (solved) training rows")
    args = parser.parse_args()
    runs = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for redraw in (False, True):
                runs[redraw].append(in_fresh_process(redraw, args.steps, args.easy_share, f"{tmp}/{redraw}{r}"))
    off = statistics.median(t for run in runs[False] for t in run["step_s"])
    on = statistics.median(t for run in runs[True] for t in run["step_s"])
    counts = {key: sum(run[key] for run in runs[True])
              for key in ("all_pass_redrawn", "all_pass_zero_variance", "all_pass_collapsed")}
    groups = len(runs[True]) * (args.steps - WARMUP) * 8
    print(f"easy share {args.easy_share}; {args.rounds} runs of {args.steps} steps each way (64 rows, G 8)")
    print(f"median step {1000 * off:.0f} ms off, {1000 * on:.0f} ms on: ratio on/off {on / off:.2f}")
    print(f"all-pass groups re-drawn: {counts['all_pass_redrawn']} of {groups} groups "
          f"({counts['all_pass_redrawn'] / groups:.1%}); replacements with no variance: "
          f"{counts['all_pass_zero_variance']} ({counts['all_pass_zero_variance'] / max(1, counts['all_pass_redrawn']):.1%}"
          f" of them), of which all-failed (mentored): {counts['all_pass_collapsed']}")


if __name__ == "__main__":
    main()
