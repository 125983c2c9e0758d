"""What the SDPO hook saves by generating no re-attempt: step time with the mentor over step time without, under
GRPOTrainer (hinted re-attempts) and under SDPOTrainer (the hint as the teacher's feedback), on the same collapsed batch.

step_overhead.py's lab setting: a random tiny policy on hard additions (64 rows = 8 groups of G = 8, 6 tokens, one
thread), every group collapsed, the mentor on rules with the default config. SDPO's teacher is `live` (the policy
itself: the lab's policy is built in memory, which SDPO's default `ema` teacher cannot reload). Four arms and a control
(SDPO with one fixed hint as every row's feedback: the teacher's longer prompt without the graph), each in a
fresh process, one run each; the figure is each step's wall time (a callback's clock, the same for both trainers).

    .venv/bin/python benchmarks/sdpo_step.py [--steps N]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile

WARMUP = 2  # steps dropped


STATIC_FEEDBACK = "1"  # the no-graph control's: as long as the rules mentor's tier-3 hints here ("0", "1")


def step_seconds(trainer_name: str, with_mentor: bool, steps: int, out: str, static: bool = False) -> dict:
    """Each step's wall time (a callback's clock, the same for both trainers: SDPOTrainer logs no `step_time`) of a
    GRPOTrainer or SDPOTrainer in step_overhead.py's lab setting, and the mentor's seconds and collapsed share.

    static: every row's `privileged_context` is STATIC_FEEDBACK (SDPO's teacher reads feedback, no graph runs).
    """
    import time

    import torch
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.lab.model import build_policy
    from mentor.rewards import arithmetic_reward

    class Clock(TrainerCallback):
        def __init__(self):
            self.seconds, self.start = [], 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds.append(time.perf_counter() - self.start)

    torch.set_num_threads(1)  # the tiny model: more threads only spin
    torch.manual_seed(0)
    model, tokenizer = build_policy(0)
    common = dict(output_dir=out, use_cpu=True, bf16=False, max_steps=steps, logging_steps=1, learning_rate=1e-6,
                  report_to="none", save_strategy="no", seed=0, disable_tqdm=True, num_generations=8,
                  per_device_train_batch_size=64, max_completion_length=6)
    if trainer_name == "SDPOTrainer":
        config, trainer_class = SDPOConfig(include_environment_feedback=True, teacher_model_kind="live", **common), \
            SDPOTrainer
    else:
        config, trainer_class = GRPOConfig(beta=0.0, gradient_checkpointing=False, **common), GRPOTrainer
    dataset = make_dataset("hard", 2000, seed=0)
    if static:
        dataset = dataset.add_column("privileged_context", [STATIC_FEEDBACK] * len(dataset))
    clock = Clock()
    trainer = trainer_class(model=model, reward_funcs=[arithmetic_reward], args=config, processing_class=tokenizer,
                            train_dataset=dataset, callbacks=[clock])
    if with_mentor:
        Mentor.from_config({"traces": True}).attach(trainer)
    trainer.train()
    logs = [log for log in trainer.state.log_history if "loss" in log][WARMUP:]
    return {"step_s": clock.seconds[WARMUP:], "mentor_s": [log.get("mentor/mentor_s", 0.0) for log in logs],
            "regen_s": [log.get("mentor/regen_s", 0.0) for log in logs],
            "collapsed": statistics.mean(log.get("mentor/collapse_rate_before", 1.0) for log in logs)}


def fresh(fn, *args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help=f"steps per run (the first {WARMUP} dropped)")
    steps = parser.parse_args().steps
    trainers = ("GRPOTrainer", "SDPOTrainer")
    with tempfile.TemporaryDirectory() as tmp:
        runs = {(t, m): fresh(step_seconds, t, m, steps, f"{tmp}/{t}{m}") for t in trainers for m in (False, True)}
        static = fresh(step_seconds, "SDPOTrainer", False, steps, f"{tmp}/static", True)
    median = {key: statistics.median(run["step_s"]) for key, run in runs.items()}
    for t in trainers:
        run = runs[(t, True)]
        print(f"{t}: median step {1000 * median[(t, False)]:.0f} ms without the mentor, {1000 * median[(t, True)]:.0f} "
              f"ms with: ratio {median[(t, True)] / median[(t, False)]:.2f}; collapsed share {run['collapsed']:.2f}; "
              f"per step the graph {1000 * statistics.median(run['mentor_s']):.0f} ms, the re-generation "
              f"{1000 * statistics.median(run['regen_s']):.0f} ms ({len(run['step_s'])} steps a run)")
    sdpo = median[("SDPOTrainer", False)]
    print(f"SDPOTrainer, every row's privileged_context one fixed {len(STATIC_FEEDBACK)}-character hint, no graph: "
          f"median step {1000 * statistics.median(static['step_s']):.0f} ms: ratio "
          f"{statistics.median(static['step_s']) / sdpo:.2f} over SDPO without feedback")
    print(f"with the mentor, SDPO's step over GRPO's: {median[('SDPOTrainer', True)] / median[('GRPOTrainer', True)]:.2f}"
          f"; without: {median[('SDPOTrainer', False)] / median[('GRPOTrainer', False)]:.2f}")


if __name__ == "__main__":
    main()
