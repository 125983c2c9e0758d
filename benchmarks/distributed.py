"""Step time with the mentor over step time without, on 2 CPU ranks against 1 process, on the same collapsed batch.

A random policy on hard additions: every group collapses, so each mentor step diagnoses and re-generates every group
once. In each run the mentor works on every other step, and TRL's `step_time` of those steps is compared with that of
the steps between them, so both arms see the same load. The 1- and 2-process launches see the same global batch
(`--rows`, G = 8); on 2 ranks each holds half. With 7 groups (56 rows) the middle group spans the ranks, and each
mentor step re-generates one padding group. Target: the 2-process ratio (with/without the mentor) no worse than 1.1x
the 1-process ratio.

    .venv/bin/python benchmarks/distributed.py [--steps 24] [--rounds 2] [--rows 64 56]

Each launch is `torchrun --standalone --nproc_per_node N benchmarks/distributed.py --worker ...`; launches of 1 and 2
processes alternate. Every process uses one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import cpu_name, load_average

G = 8


def step_times(steps: int, rows: int, out: str) -> dict[str, list[float]]:
    """TRL's `step_time` of steps with the mentor and of steps without it, interleaved in one run (the mentor works
    on even steps only), so that both arms see the same load; the first two steps are left out (warm-up)."""
    from trl import GRPOConfig, GRPOTrainer

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.lab.model import build_policy
    from mentor.rewards import arithmetic_reward

    model, tokenizer = build_policy(0)
    args = GRPOConfig(output_dir=out, use_cpu=True, bf16=False, beta=0.0,
                      per_device_train_batch_size=rows // int(os.environ["WORLD_SIZE"]), num_generations=G,
                      max_completion_length=6, max_steps=steps + 2, logging_steps=1, learning_rate=1e-4,
                      report_to="none", save_strategy="no", gradient_checkpointing=False, seed=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=model, reward_funcs=[arithmetic_reward], args=args,
                          train_dataset=make_dataset("hard", 2000, seed=0), processing_class=tokenizer)
    Mentor.from_config({"traces": True}).attach(trainer)
    hook = trainer._generate.__self__  # the GenerationHook

    def generate(prompts):
        return hook.generate_raw(prompts) if trainer.state.global_step % 2 else hook.generate(prompts)

    trainer._generate = generate
    trainer.train()
    logs = [log for log in trainer.state.log_history if "step_time" in log][2:]
    mentor = [log for log in logs if "mentor/interventions" in log]
    return {"base": [log["step_time"] for log in logs if "mentor/interventions" not in log],
            "mentor": [log["step_time"] for log in mentor],
            "collapsed": [log["mentor/collapse_rate_before"] for log in mentor],
            "mentor_s": [log["mentor/mentor_s"] for log in mentor],
            "regen_s": [log["mentor/regen_s"] for log in mentor]}


def worker(out: Path, steps: int, rows: list[int]) -> None:
    import torch

    torch.set_num_threads(1)
    result = {n: step_times(steps, n, str(out / str(n))) for n in rows}
    if int(os.environ["RANK"]) == 0:
        (out / "result.json").write_text(json.dumps(result))


def launch(world: int, steps: int, rows: list[int], out: Path) -> dict:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(world), __file__,
               "--worker", str(out), "--steps", str(steps), "--rows", *map(str, rows)]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-4000:]}")
    return json.loads((out / "result.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=24, help="timed steps per launch, half with the mentor")
    parser.add_argument("--rounds", type=int, default=2, help="alternating 1- and 2-process launches")
    parser.add_argument("--rows", type=int, nargs="+", default=[64, 56], help="global batch sizes (multiples of 16)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.steps, args.rows)
    results = {(world, n): {} for world in (1, 2) for n in args.rows}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for world in (1, 2):
                result = launch(world, args.steps, args.rows, Path(tmp) / f"{world}-{r}")
                for n in args.rows:
                    for key, values in result[str(n)].items():
                        results[world, n].setdefault(key, []).extend(values)
    load = " ".join(f"{x:.2f}" for x in load_average())
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; load average at the end {load}; {args.rounds} rounds x "
          f"{args.steps // 2} timed steps per arm")
    for n in args.rows:
        ratio = {}
        for world in (1, 2):
            m = {key: statistics.median(values) for key, values in results[world, n].items()}
            ratio[world] = m["mentor"] / m["base"]
            print(f"{n} rows ({n // G} groups), {world} process(es): median step {1000 * m['base']:.0f} ms without, "
                  f"{1000 * m['mentor']:.0f} ms with the mentor -> {ratio[world]:.2f}x "
                  f"(collapsed {m['collapsed']:.2f}; mentor {1000 * m['mentor_s']:.0f} ms, "
                  f"re-generation {1000 * m['regen_s']:.0f} ms per step)")
        print(f"{n} rows: 2-process ratio / 1-process ratio = {ratio[2] / ratio[1]:.2f} (target <= 1.10)")


if __name__ == "__main__":
    main()
