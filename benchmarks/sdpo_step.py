"""What the SDPO hook saves by generating no re-attempt: step time with the mentor over step time without, under
GRPOTrainer (hinted re-attempts) and under SDPOTrainer (the hint as the teacher's feedback), on the same collapsed batch.

step_overhead.py's lab setting: a random tiny policy on hard additions (64 rows = 8 groups of G = 8, 6 tokens, one
thread), every group collapsed, the mentor on rules with the default config. SDPO's teacher is `live` (the policy
itself: the lab's policy is built in memory, which SDPO's default `ema` teacher cannot reload). Four arms, each in a
fresh process, one run each; the figure is TRL's `step_time`.

    .venv/bin/python benchmarks/sdpo_step.py [--steps N]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile

from step_overhead import POLICIES, step_times


def sdpo_step_times(with_mentor: bool, steps: int, out: str) -> dict:
    """TRL's `step_time` per step of an SDPOTrainer in step_overhead.py's lab setting, and the mentor's seconds."""
    import torch
    from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.lab.model import build_policy
    from mentor.rewards import arithmetic_reward

    torch.set_num_threads(POLICIES["lab"]["threads"])
    torch.manual_seed(0)
    model, tokenizer = build_policy(0)
    args = SDPOConfig(output_dir=out, use_cpu=True, bf16=False, max_steps=steps, logging_steps=1, learning_rate=1e-6,
                      report_to="none", save_strategy="no", seed=0, disable_tqdm=True, num_generations=8,
                      per_device_train_batch_size=64, max_completion_length=6, include_environment_feedback=True,
                      teacher_model_kind="live")
    trainer = SDPOTrainer(model=model, reward_funcs=[arithmetic_reward], args=args, processing_class=tokenizer,
                          train_dataset=make_dataset("hard", 2000, seed=0))
    if with_mentor:
        Mentor.from_config({"traces": True}).attach(trainer)
    trainer.train()
    logs = [log for log in trainer.state.log_history if "step_time" in log][POLICIES["lab"]["warmup"]:]
    return {"step_s": [log["step_time"] for log in logs], "mentor_s": [log.get("mentor/mentor_s", 0.0) for log in logs],
            "collapsed": statistics.mean(log.get("mentor/collapse_rate_before", 1.0) for log in logs)}


def fresh(fn, *args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="steps per run (the first 2 dropped)")
    steps = parser.parse_args().steps
    with tempfile.TemporaryDirectory() as tmp:
        runs = {("GRPOTrainer", m): fresh(step_times, "lab", m, steps, f"{tmp}/grpo{m}") for m in (False, True)}
        runs.update({("SDPOTrainer", m): fresh(sdpo_step_times, m, steps, f"{tmp}/sdpo{m}") for m in (False, True)})
    median = {key: statistics.median(run["step_s"]) for key, run in runs.items()}
    for trainer in ("GRPOTrainer", "SDPOTrainer"):
        run = runs[(trainer, True)]
        print(f"{trainer}: median step {1000 * median[(trainer, False)]:.0f} ms without, "
              f"{1000 * median[(trainer, True)]:.0f} ms with the mentor: ratio "
              f"{median[(trainer, True)] / median[(trainer, False)]:.2f} (collapsed share "
              f"{statistics.mean([run['collapsed']]):.2f}; graph {1000 * statistics.median(run['mentor_s']):.0f} ms a "
              f"step; {len(run['step_s'])} steps each)")
    print(f"SDPO without the mentor over GRPO without: {median[('SDPOTrainer', False)] / median[('GRPOTrainer', False)]:.2f}")


if __name__ == "__main__":
    main()
