"""One prepared GPU check of the mentor inside real GRPO steps: minutes, offline, no weights downloaded.

    python benchmarks/gpu_check.py                          # on a GPU machine; fails loudly if CUDA is absent
    python benchmarks/gpu_check.py --json gpu_check.json    # also write the results as JSON
    python benchmarks/gpu_check.py --allow-cpu              # smoke test on CPU (the vLLM part is skipped)

The policy is the CPU lab's tiny Llama (about 0.8M parameters, char-level tokenizer), built in memory and saved to
a temporary folder (`--lab-policy` uses the lab's pre-trained policy instead, trained and cached on first use). The
data are the lab's hard 3-digit additions, which a fresh policy never solves: every group collapses, so the mentor
(rules backend, `replace_group`) diagnoses, hints and re-generates in every step. Parts:

1. `transformers`: TRL's own generation, on CUDA in bf16. A few GRPO steps without the mentor (the baseline step
   time), then the same steps, seed and data with the mentor attached.
2. `vllm-colocate`: the same with the mentor and `use_vllm: true, vllm_mode: colocate`, so both the first generation
   and the mentor's hinted re-generation go through TRL's vLLM engine. It runs in a child process (vLLM owns its
   process's CUDA context) and is skipped, with a message, when `vllm` is not importable.

It prints each part's step times and `mentor/*` metrics, and checks: the metrics reach the trainer's logs, the mentor
intervened, the trace store holds the interventions, the policy trained on CUDA in bf16, and (vLLM) the hinted
re-generation went through vLLM. Exit status: 0 when every check passed (a skipped part is not a failure), 1 when a
check failed, 2 when CUDA is absent and `--allow-cpu` was not given.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("mentor") is None:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

SHOWN_METRICS = ("reward", "frac_reward_zero_std", "mentor/collapse_rate_before", "mentor/collapse_rate_after",
                 "mentor/interventions", "mentor/recovered", "mentor/withheld", "mentor/tier_mean",
                 "mentor/mentor_s", "mentor/regen_s", "mentor/failures")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--allow-cpu", action="store_true", help="run on CPU when CUDA is absent (a smoke test)")
    p.add_argument("--steps", type=int, default=4, help="GRPO steps per part (default 4)")
    p.add_argument("--batch", type=int, default=64, help="completions per step (default 64: 8 groups of 8)")
    p.add_argument("--num-generations", type=int, default=8, help="G (default 8)")
    p.add_argument("--skip-vllm", action="store_true", help="leave out the vLLM colocate part")
    p.add_argument("--lab-policy", action="store_true", help="the lab's pre-trained policy instead of a fresh one")
    p.add_argument("--vllm-memory", type=float, default=0.15, help="vllm_gpu_memory_utilization (default 0.15)")
    p.add_argument("--workdir", default=None, help="where policies and runs go (default: a temporary folder)")
    p.add_argument("--json", default=None, help="write the results to this JSON file")
    p.add_argument("--part", choices=("all", "vllm"), default="all", help=argparse.SUPPRESS)  # the child's part
    p.add_argument("--policy", default=None, help=argparse.SUPPRESS)  # the child's saved policy
    return p.parse_args(argv)


def say(text: str = "") -> None:
    print(text, flush=True)


def pick_device(allow_cpu: bool) -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if allow_cpu:
        say("gpu_check: CUDA is not available; running on CPU because of --allow-cpu (a smoke test, not a GPU result)")
        return "cpu"
    sys.stderr.write("gpu_check: FAILED: CUDA is not available (torch.cuda.is_available() is False, torch "
                     f"{torch.__version__}). This check is for a GPU machine; pass --allow-cpu to smoke-test it on "
                     "CPU.\n")
    sys.exit(2)


def environment(device: str) -> dict:
    import torch
    import transformers
    import trl

    env = {"device": device, "python": sys.version.split()[0], "torch": torch.__version__, "trl": trl.__version__,
           "transformers": transformers.__version__, "vllm": None}
    if device == "cuda":
        env["gpu"] = torch.cuda.get_device_name(0)
        env["cuda"] = torch.version.cuda
        env["bf16_supported"] = torch.cuda.is_bf16_supported()
    if importlib.util.find_spec("vllm") is not None:
        try:
            from importlib.metadata import version

            env["vllm"] = version("vllm")
        except Exception as e:  # installed but broken: the vLLM part reports it
            env["vllm"] = f"unreadable: {e}"
    return env


def save_policy(workdir: Path, lab_policy: bool) -> str:
    """Path of a saved tiny policy (model and tokenizer, `save_pretrained` format)."""
    if lab_policy:
        from mentor.lab.pretrain import pretrained_policy

        return pretrained_policy()
    from mentor.lab.model import build_policy

    model, tokenizer = build_policy(seed=0)
    path = workdir / "policy"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def make_timer(cuda: bool):
    import torch
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        """Wall time between step ends (the first from the start of training), and every log."""

        def __init__(self):
            self.times: list[float] = []
            self.logs: list[dict] = []
            self._t = 0.0

        def _now(self) -> float:
            if cuda:
                torch.cuda.synchronize()
            return time.perf_counter()

        def on_train_begin(self, args, state, control, **kwargs):
            self._t = self._now()

        def on_step_end(self, args, state, control, **kwargs):
            t = self._now()
            self.times.append(t - self._t)
            self._t = t

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.logs.append(dict(logs or {}))

    return StepTimer()


def run_part(name: str, policy: str, device: str, args: argparse.Namespace, workdir: Path, mentor: bool,
             vllm: bool) -> dict:
    """A few GRPO steps; returns step times, metrics and check results."""
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from mentor import Mentor
    from mentor.lab.data import make_dataset
    from mentor.rewards import arithmetic_reward
    from mentor.traces import TraceStore, trace_path

    cuda = device == "cuda"
    out = workdir / name
    config = dict(output_dir=str(out), use_cpu=not cuda, bf16=cuda, beta=0.0, learning_rate=5e-4,
                  lr_scheduler_type="constant", per_device_train_batch_size=args.batch,
                  num_generations=args.num_generations, max_completion_length=6, temperature=1.0,
                  max_steps=args.steps, logging_steps=1, save_strategy="no", report_to="none", seed=0,
                  gradient_checkpointing=False, model_init_kwargs={"dtype": "bfloat16" if cuda else "float32"})
    if vllm:
        config.update(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=args.vllm_memory,
                      vllm_max_model_length=128)
    problems = max(256, 2 * args.steps * args.batch // args.num_generations)
    say(f"\n=== {name}: {args.steps} GRPO steps, {args.batch} completions per step, G={args.num_generations}, "
        f"mentor {'on' if mentor else 'off'}, generation by {'vLLM colocate' if vllm else 'transformers'} ===")
    t0 = time.perf_counter()
    trainer = GRPOTrainer(model=policy, reward_funcs=[arithmetic_reward], args=GRPOConfig(**config),
                          train_dataset=make_dataset(level="hard", n=problems, seed=0))
    setup_s = time.perf_counter() - t0
    timer = make_timer(cuda)
    trainer.add_callback(timer)
    vllm_calls = [0]
    engine = getattr(trainer, "vllm_generation", None)
    if engine is not None:  # count the engine's generate calls: the mentor's re-generation must be among them
        generate = engine.generate

        def counted(*a, **k):
            vllm_calls[0] += 1
            return generate(*a, **k)

        engine.generate = counted
    if mentor:
        Mentor.from_config({"task": "arithmetic"}).attach(trainer)
    trainer.train()

    param = next(trainer.model.parameters())
    steps = [log for log in timer.logs if "mentor/collapse_rate_before" in log or "reward" in log]
    metrics = {}
    for key in SHOWN_METRICS:
        values = [log[key] for log in steps if key in log]
        if values:
            metrics[key] = sum(values) / len(values)
    result = {"part": name, "mentor": mentor, "vllm": vllm, "setup_s": round(setup_s, 3),
              "step_s": [round(t, 4) for t in timer.times],
              "first_step_s": round(timer.times[0], 4) if timer.times else None,
              "median_step_s": round(statistics.median(timer.times[1:] or timer.times), 4) if timer.times else None,
              "param_dtype": str(param.dtype), "param_device": str(param.device), "metrics": metrics, "checks": []}
    checks = result["checks"]

    def check(label: str, ok: bool, detail: str = "") -> None:
        checks.append({"check": label, "ok": bool(ok), "detail": detail})

    check(f"{args.steps} steps ran", len(timer.times) == args.steps, f"{len(timer.times)} step ends seen")
    if cuda:
        check("policy trained on CUDA in bf16", param.device.type == "cuda" and param.dtype == torch.bfloat16,
              f"{param.device}, {param.dtype}")
    if vllm:
        check("TRL generated with vLLM colocate", bool(getattr(trainer, "use_vllm", False)) and
              getattr(trainer, "vllm_mode", None) == "colocate",
              f"use_vllm={getattr(trainer, 'use_vllm', None)}, vllm_mode={getattr(trainer, 'vllm_mode', None)}")
        result["vllm_generate_calls"] = vllm_calls[0]
        if mentor:  # one call per step for the batch, one more in each step where the mentor re-generated
            hinted_steps = sum(1 for log in timer.logs if log.get("mentor/interventions", 0) > 0)
            check("the hinted re-generation went through vLLM", vllm_calls[0] >= args.steps + hinted_steps > args.steps,
                  f"{vllm_calls[0]} vLLM generate calls in {args.steps} steps, {hinted_steps} of them with hints")
    if mentor:
        logged = [log for log in timer.logs if "mentor/collapse_rate_before" in log]
        check("mentor metrics in the trainer's logs", len(logged) >= 1, f"{len(logged)} logs with mentor/*")
        interventions = sum(log.get("mentor/interventions", 0) for log in logged)
        check("the mentor intervened", interventions > 0, f"mentor/interventions summed: {interventions:g}")
        check("hinted groups were re-generated", metrics.get("mentor/regen_s", 0) > 0,
              f"mentor/regen_s mean {metrics.get('mentor/regen_s', 0):.4f}")
        count = 0
        if trace_path(out).exists():
            store = TraceStore(out, readonly=True)
            count = store.count()
            store.close()
        check("interventions in the trace store", count > 0, f"{count} records in {trace_path(out)}")
        result["traces"] = count
    del trainer
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return result


def vllm_part(policy: str, device: str, args: argparse.Namespace, workdir: Path) -> dict:
    """The vLLM colocate part in a child process, or why it was skipped."""
    if args.skip_vllm:
        return {"part": "vllm-colocate", "skipped": "--skip-vllm"}
    if importlib.util.find_spec("vllm") is None:
        return {"part": "vllm-colocate", "skipped": "vllm is not importable here (pip install vllm; it has no CPU "
                                                    "build)"}
    if device != "cuda":
        return {"part": "vllm-colocate", "skipped": "vLLM colocate needs CUDA"}
    out = workdir / "vllm-result.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--part", "vllm", "--policy", policy, "--workdir",
           str(workdir), "--json", str(out), "--steps", str(args.steps), "--batch", str(args.batch),
           "--num-generations", str(args.num_generations), "--vllm-memory", str(args.vllm_memory)]
    t0 = time.perf_counter()
    rc = subprocess.run(cmd).returncode
    if out.exists():
        result = json.loads(out.read_text())
    else:
        result = {"part": "vllm-colocate", "checks": [{"check": "vLLM colocate part ran", "ok": False,
                                                       "detail": f"the child exited {rc} without a result"}]}
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    return result


def report(results: list[dict]) -> None:
    say("\n=== results ===")
    for r in results:
        if "skipped" in r:
            say(f"{r['part']}: SKIPPED: {r['skipped']}")
            continue
        if r.get("first_step_s") is None:
            say(f"{r['part']}: no steps")
        else:
            say(f"{r['part']}: first step {r['first_step_s']:.3f} s, median step {r['median_step_s']:.3f} s "
                f"(all: {', '.join(f'{t:.3f}' for t in r['step_s'])}), setup {r.get('setup_s', 0):.1f} s, "
                f"{r.get('param_device')} {r.get('param_dtype')}")
        for key, value in r.get("metrics", {}).items():
            say(f"    {key:32s} {value:.4f}")
        for c in r.get("checks", []):
            say(f"    [{'ok' if c['ok'] else 'FAILED'}] {c['check']}: {c['detail']}")
    by_part = {r["part"]: r for r in results}
    base, with_mentor = by_part.get("transformers-baseline"), by_part.get("transformers-mentor")
    if base and with_mentor and base.get("median_step_s") and with_mentor.get("median_step_s"):
        say(f"step time with the mentor / without (transformers, median): "
            f"{with_mentor['median_step_s'] / base['median_step_s']:.2f}x")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = pick_device(args.allow_cpu)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mentor-gpu-check-"))
    workdir.mkdir(parents=True, exist_ok=True)

    if args.part == "vllm":  # the child: one part, result to --json
        try:
            result = run_part("vllm-colocate", args.policy, device, args, workdir, mentor=True, vllm=True)
        except Exception as e:
            traceback.print_exc()
            result = {"part": "vllm-colocate", "checks": [{"check": "vLLM colocate part ran", "ok": False,
                                                           "detail": f"{type(e).__name__}: {e}"[:2000]}]}
        Path(args.json).write_text(json.dumps(result, indent=2))
        return 0 if all(c["ok"] for c in result["checks"]) else 1

    env = environment(device)
    say("gpu_check: " + ", ".join(f"{k}={v}" for k, v in env.items()))
    t0 = time.perf_counter()
    policy = save_policy(workdir, args.lab_policy)
    results = []
    for name, mentor in (("transformers-baseline", False), ("transformers-mentor", True)):
        try:
            results.append(run_part(name, policy, device, args, workdir, mentor=mentor, vllm=False))
        except Exception as e:
            traceback.print_exc()
            results.append({"part": name, "checks": [{"check": f"{name} ran", "ok": False,
                                                      "detail": f"{type(e).__name__}: {e}"[:2000]}]})
    results.append(vllm_part(policy, device, args, workdir))
    report(results)
    failed = [f"{r['part']}: {c['check']}" for r in results for c in r.get("checks", []) if not c["ok"]]
    total_s = round(time.perf_counter() - t0, 1)
    say(f"\ngpu_check: {'FAILED: ' + '; '.join(failed) if failed else 'all checks passed'} ({total_s} s; work in "
        f"{workdir})")
    if args.json:
        Path(args.json).write_text(json.dumps({"environment": env, "results": results, "failed": failed,
                                               "total_s": total_s}, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
