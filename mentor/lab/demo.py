"""`mentor demo`: the offline CPU lab that shows zero-reward collapse and the mentor's recovery.

Three arms share the pre-trained policy, the seed, the step budget and the hyper-parameters:
- `grpo`: plain GRPO, no hints;
- `static_hints`: a pre-defined hint library (the first answer digits of each problem), given whenever the
  problem's group collapses, through the `graphs/static_hints` graph;
- `mentor`: the four-agent mentor graph, diagnosing each collapsed group live.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mentor.types import InputError

ARMS = ("grpo", "static_hints", "mentor")
# The composed lab also has the retry control (`resample`: collapsed groups re-drawn unhinted) and the mentor that
# chooses by predicted learning (`learning`: `hint_choice: learning`), both in mentor.lab.composed_demo.
COMPOSED_ARMS = ("grpo", "resample", "static_hints", "mentor", "learning")
LABS = ("addition", "composed")  # the default lab (docs/lab.md), and the composed-skills lab (mentor.lab.composed_demo)

# How both hinted arms splice hints into the batch: the lab's best measured setting (see docs/lab.md):
# keep 2 unhinted rows per collapsed group, and train the hinted successes' prefix tokens (off-policy).
# One file, which training/configs/lab_cpu.yaml names as its `mentor:` config too.
LAB_STRATEGY: dict[str, Any] = json.loads((Path(__file__).parent / "strategy.json").read_text())


@dataclass
class DemoSettings:
    """What one demo run does. Defaults are the full demo; `quick()` is the smoke run.

    Args:
        steps: GRPO steps per arm.
        prompts_per_step: problems per step (each gets `num_generations` completions).
        num_generations: GRPO group size G.
        learning_rate: peak learning rate.
        lr_scheduler: TRL/transformers `lr_scheduler_type`; cosine decay steadies the end of a short run.
        train_problems: hard training problems (operands 100-999).
        heldout_problems: held-out hard problems, never trained on, decoded greedily.
        eval_every: steps between held-out evaluations (the curve).
        seeds: one run per seed and arm.
        arms: which arms to run.
        pretrain: overrides of the lab's pre-training hyper-parameters.
        strategy: mentor config keys saying how both hinted arms splice hints (default: `LAB_STRATEGY`).
        static_hint_digits: leading answer digits of the `static_hints` library's hint (1 to 3; default 3, the
            best library measured, docs/lab.md); hint dependence is measured with a hint of this many digits.
        jobs: runs (arm and seed) trained at once, each in its own process on one CPU thread; 0 (the
            default) starts every run at once, up to two per core, so that no core idles while the
            slowest arm finishes.
        lab: `addition` (the default lab) or `composed` (the composed-skills lab: a seed selects its own pre-trained
            policy too, and `static_hints` is that seed's best fixed "reveal step k" rule; see docs/lab.md).
    """

    steps: int = 600
    prompts_per_step: int = 8
    num_generations: int = 8
    learning_rate: float = 1e-3
    lr_scheduler: str = "cosine"
    train_problems: int = 4000
    heldout_problems: int = 500
    eval_every: int = 50
    seeds: list[int] = field(default_factory=lambda: [0])
    arms: list[str] = field(default_factory=lambda: list(ARMS))
    pretrain: dict[str, Any] = field(default_factory=dict)
    strategy: dict[str, Any] = field(default_factory=lambda: dict(LAB_STRATEGY))
    static_hint_digits: int = 3
    jobs: int = 0
    lab: str = "addition"

    def __post_init__(self):
        at_least = {"steps": 1, "prompts_per_step": 1, "num_generations": 2, "train_problems": 1,
                    "heldout_problems": 1, "eval_every": 1, "jobs": 0}
        for name, low in at_least.items():
            if getattr(self, name) < low:
                raise InputError(f"{name} must be at least {low}, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise InputError(f"learning_rate must be above 0, got {self.learning_rate}")
        if not 1 <= self.static_hint_digits <= 3:
            raise InputError(f"static_hint_digits must be 1, 2 or 3 (4 would be the whole answer), "
                             f"got {self.static_hint_digits}")
        if self.lab not in LABS:
            raise InputError(f"lab: unknown lab {self.lab!r}; the labs are {list(LABS)}")
        if not self.seeds:
            raise InputError("seeds: give at least one seed")
        known = COMPOSED_ARMS if self.lab == "composed" else ARMS
        unknown = set(self.arms) - set(known)
        if unknown or not self.arms:
            raise InputError(f"arms: unknown arm(s) {sorted(unknown)}; the {self.lab} lab's arms are {list(known)}")

    @classmethod
    def quick(cls) -> DemoSettings:
        return cls(steps=20, heldout_problems=100, eval_every=10, train_problems=500)

    @classmethod
    def for_lab(cls, lab: str, quick: bool = False) -> DemoSettings:
        """The full (or quick) settings of a lab: the composed lab trains at its own learning rate and strategy."""
        settings = cls.quick() if quick else cls()
        if lab == "composed":
            from mentor.lab.composed_demo import COMPOSED_DEFAULTS, COMPOSED_STRATEGY

            settings = replace(settings, lab=lab, strategy=dict(COMPOSED_STRATEGY),
                               **{k: v for k, v in COMPOSED_DEFAULTS.items() if not quick or k not in QUICK_KEYS})
        return settings


QUICK_KEYS = ("steps", "heldout_problems", "eval_every", "train_problems")


def arm_config(arm: str, strategy: dict[str, Any]) -> dict[str, Any] | None:
    """The mentor config of an arm (None: no mentor), splicing hints by `strategy`."""
    if arm == "grpo":
        return None
    if arm == "static_hints":
        return {**strategy, "graph": "graphs/static_hints/graph.py:graph"}
    return dict(strategy)


def run_arm(arm: str, seed: int, policy_dir: str, settings: DemoSettings, out_dir: Path,
            steps_queue=None, library: dict[str, Any] | None = None) -> dict[str, Any]:
    """Trains one arm from the pre-trained policy; returns its figures. With `steps_queue` (a worker process),
    TRL's progress bar is off and the queue gets `(arm, seed, None)` for each finished step and
    `(arm, seed, accuracy)` for each held-out evaluation instead. `library`: the composed lab's chosen rule."""
    if settings.lab == "composed":
        return _run_composed_arm(arm, seed, policy_dir, settings, out_dir, steps_queue, library or {})
    from mentor.lab import data as labdata
    from mentor.lab.sampling import completions, evaluate, first_digits
    from mentor.policy import load_checkpoint
    from mentor.rewards import arithmetic_reward
    from mentor.tasks import arithmetic

    model, tokenizer = load_checkpoint(policy_dir)
    heldout = labdata.generate_problems("hard", settings.heldout_problems, seed=10_000, split="heldout")
    dataset = labdata.make_dataset("hard", settings.train_problems, seed=seed, split="train")
    if arm == "static_hints":  # the pre-defined hint library, one fixed hint per problem
        digits = settings.static_hint_digits
        dataset = dataset.map(lambda row: {"hint": arithmetic.partial_answer_hint(row["answer"], digits)})
    wrong: list[dict[str, Any]] = []  # the held-out problems wrong at the latest evaluation

    def heldout_pass(policy) -> dict[str, Any]:
        """Greedy, unhinted held-out accuracy; also keeps the problems still wrong in `wrong`."""
        outs = completions(policy, tokenizer, heldout, progress=steps_queue is None)
        wrong[:] = [{"problem_id": row["problem_id"], "operands": row["operands"], "answer": row["answer"],
                     "got": arithmetic.extract_answer(out[0])}
                    for out, row in zip(outs, heldout) if not arithmetic.reward(out[0], row["answer"])]
        return {"heldout_acc": (len(heldout) - len(wrong)) / len(heldout)}

    config = arm_config(arm, settings.strategy)
    result = _train(arm, seed, model, tokenizer, settings, out_dir, steps_queue, heldout_pass, dataset,
                    arithmetic_reward, 6, config)
    result["heldout_wrong"] = wrong
    hinted = evaluate(model, tokenizer, heldout, hint_fn=first_digits(settings.static_hint_digits),
                      placement="prefix")
    result["hint_dependence"] = hinted - result["heldout_acc_after"]
    return result


def _train(arm: str, seed: int, model, tokenizer, settings: DemoSettings, out_dir: Path, steps_queue, heldout_pass,
           dataset, reward_func, max_completion_length: int, config: dict[str, Any] | None) -> dict[str, Any]:
    """GRPO on `dataset` from `model`, with the arm's mentor `config` attached (None: none); the held-out curve
    (`heldout_pass(model)` -> a dict with `heldout_acc`, at step 0 and every `eval_every` steps), the per-step reward
    and collapse rates, and the mentor's interventions."""
    import torch
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from mentor import Mentor
    from mentor.traces import TraceStore
    from mentor.traces.viewer import write_html

    curve: list[dict[str, Any]] = []

    class HeldoutCurve(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            if state.global_step % settings.eval_every == 0 or state.global_step == state.max_steps:
                curve.append({"step": state.global_step, **heldout_pass(model)})
                if steps_queue is not None:
                    steps_queue.put((arm, seed, curve[-1]["heldout_acc"]))
            if steps_queue is not None:
                steps_queue.put((arm, seed, None))

    run_dir = out_dir / f"{arm}-seed{seed}"
    args = GRPOConfig(
        output_dir=str(run_dir), use_cpu=True, bf16=False, beta=0.0, seed=seed, report_to="none",
        learning_rate=settings.learning_rate, lr_scheduler_type=settings.lr_scheduler, max_steps=settings.steps,
        per_device_train_batch_size=settings.prompts_per_step * settings.num_generations,
        num_generations=settings.num_generations, max_completion_length=max_completion_length, temperature=1.0,
        logging_steps=1, save_strategy="no", gradient_checkpointing=False, disable_tqdm=steps_queue is not None)
    torch.manual_seed(seed)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward_func], args=args, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[HeldoutCurve()])
    if steps_queue is not None:
        trainer.remove_callback(PrinterCallback)  # the log dicts TRL prints when its bar is off
    if config is not None:
        Mentor.from_config(config).attach(trainer)
    curve.append({"step": 0, **heldout_pass(model)})
    before = curve[0]["heldout_acc"]
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0
    logs = [log for log in trainer.state.log_history if "reward" in log]
    result = {
        "heldout_acc_before": before, "heldout_acc_after": curve[-1]["heldout_acc"], "curve": curve,
        "train_s": train_s, "reward": [log["reward"] for log in logs],
        "collapse_rate_before": [log.get("mentor/collapse_rate_before", log["frac_reward_zero_std"]) for log in logs],
        "collapse_rate_after": [log.get("mentor/collapse_rate_after", log["frac_reward_zero_std"]) for log in logs],
    }
    if config is not None:
        result["recovered"] = [log.get("mentor/recovered", 0.0) for log in logs]
        result["reliance"] = [log["mentor/reliance"] for log in logs if "mentor/reliance" in log]
        store = TraceStore(run_dir, readonly=True)
        hints = [r["hint"] for r in store if r.get("hint")]
        result["interventions"] = store.count()
        result["hint_tokens_per_intervention"] = (
            sum(len(tokenizer(h, add_special_tokens=False)["input_ids"]) for h in hints)
            / max(result["interventions"], 1))
        store.close()
        page, _ = write_html(run_dir, run_dir / "traces.html", config=config)
        result["traces"] = str(page.relative_to(out_dir))
    else:
        result["interventions"], result["hint_tokens_per_intervention"] = 0, 0.0
    return result


def _run_composed_arm(arm: str, seed: int, policy_dir: str, settings: DemoSettings, out_dir: Path, steps_queue,
                      library: dict[str, Any]) -> dict[str, Any]:
    """`run_arm` for the composed lab: its problems, reward and one-step hints; also tracks where the held-out
    attempts first go wrong (`first_wrong_steps` in each curve point) and the groups the hints recovered."""
    from mentor.lab import composed_demo as cd
    from mentor.policy import load_checkpoint
    from mentor.rewards import composed_reward

    model, tokenizer = load_checkpoint(policy_dir)
    heldout = cd.heldout(settings.heldout_problems)
    step = library.get("step") if arm == "static_hints" else None
    wrong: list[dict[str, Any]] = []

    def heldout_pass(policy) -> dict[str, Any]:
        wrong[:] = cd.wrong(policy, tokenizer, heldout)
        where = Counter(str(w["first_wrong_step"]) for w in wrong)
        return {"heldout_acc": (len(heldout) - len(wrong)) / len(heldout), "first_wrong_steps": dict(sorted(where.items()))}

    config = cd.arm_config(arm, step, settings.strategy)
    result = _train(arm, seed, model, tokenizer, settings, out_dir, steps_queue, heldout_pass,
                    cd.dataset(settings.train_problems, seed, step, resample=arm == "resample",
                               candidates=arm == "learning"), composed_reward,
                    cd.MAX_COMPLETION_LENGTH, config)
    if arm == "resample":
        result["hint_tokens_per_intervention"] = 0.0  # its trace "hint" is a marker the policy never sees
    result["heldout_wrong"] = wrong
    result["hint_dependence"] = cd.hinted_accuracy(model, tokenizer, heldout, step) - result["heldout_acc_after"]
    if arm == "static_hints":
        result["library"] = library
    return result


def summarise_arms(per_seed: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Mean and spread over seeds of each arm's figures; the per-seed runs are kept under `runs`."""
    arms = {}
    for arm, runs in per_seed.items():
        after = [r["heldout_acc_after"] for r in runs]
        arms[arm] = {
            "heldout_acc_before": sum(r["heldout_acc_before"] for r in runs) / len(runs),
            "heldout_acc_after": sum(after) / len(after),
            "heldout_acc_after_per_seed": after,
            "spread": max(after) - min(after),
            "hint_dependence": sum(r["hint_dependence"] for r in runs) / len(runs),
            "hint_tokens_per_intervention": sum(r["hint_tokens_per_intervention"] for r in runs) / len(runs),
            "interventions": sum(r["interventions"] for r in runs) / len(runs),
            "runs": runs,
        }
    return arms


def run_demo(out: str | Path, settings: DemoSettings) -> dict[str, Any]:
    """Pre-trains (or loads) the lab policy, runs every arm for every seed, writes results.json and report.html."""
    import torch

    from mentor.lab.report import write_report

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)  # a 0.8M-parameter model: extra threads only spin, and 10x slower on a busy machine
    t0 = time.perf_counter()
    policies, libraries = _policies(settings)
    runs = [(arm, seed) for seed in settings.seeds for arm in settings.arms]
    jobs = min(settings.jobs or 2 * _cores(), len(runs))
    print(f"{len(runs)} run(s) of {settings.steps} GRPO steps, {jobs} at a time")
    if jobs > 1:
        figures = _run_parallel(runs, jobs, policies, settings, out_dir, libraries)
    else:
        figures = [run_arm(arm, seed, policies[seed], settings, out_dir, library=libraries.get(seed))
                   for arm, seed in runs]
    per_seed: dict[str, list[dict[str, Any]]] = {arm: [] for arm in settings.arms}
    for (arm, seed), result in zip(runs, figures):
        per_seed[arm].append(result)
        print(f"{arm}, seed {seed}: held-out accuracy {result['heldout_acc_before']:.3f} -> "
              f"{result['heldout_acc_after']:.3f}")
    results = {"lab": settings.lab, "steps": settings.steps, "settings": asdict(settings),
               "policy": policies[settings.seeds[0]], "policies": {str(s): p for s, p in policies.items()},
               "arms": summarise_arms(per_seed), "wall_s": time.perf_counter() - t0}
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    write_report(results, out_dir)
    print(f"\n{'arm':<14}{'before':>8}{'after':>8}{'dependence':>12}{'hint tokens':>13}")
    for arm, figures in results["arms"].items():
        print(f"{arm:<14}{figures['heldout_acc_before']:>8.3f}{figures['heldout_acc_after']:>8.3f}"
              f"{figures['hint_dependence']:>12.3f}{figures['hint_tokens_per_intervention']:>13.2f}")
    print(f"wrote {out_dir / 'results.json'} and {out_dir / 'report.html'} in {results['wall_s']:.0f} s")
    return results


def _policies(settings: DemoSettings) -> tuple[dict[int, str], dict[int, dict[str, Any]]]:
    """Each seed's pre-trained policy (pre-trained on first use, then cached) and, in the composed lab, its
    `static_hints` library: the fixed rule that rescues most of its step-0 failures."""
    from mentor.lab.pretrain import pretrained_policy

    if settings.lab != "composed":
        print("pre-training the lab policy on the easy level (cached after the first run)")
        policy_dir = pretrained_policy(**settings.pretrain)
        return {seed: policy_dir for seed in settings.seeds}, {}
    from mentor.lab import composed_demo

    policies, libraries = {}, {}
    for seed in settings.seeds:
        print(f"pre-training the composed lab's policy of seed {seed} (cached after the first run)")
        policies[seed] = composed_demo.policy(seed, settings.pretrain)
        if "static_hints" in settings.arms:
            libraries[seed] = composed_demo.choose_library(policies[seed], seed)
            print(f"seed {seed}: static_hints library = reveal step {libraries[seed]['step']} "
                  f"(rescue rates on {libraries[seed]['groups']} step-0 failures: {libraries[seed]['rescue_rates']})")
    return policies, libraries


def _cores() -> int:
    """CPU cores this process may use (its affinity on Linux)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _run_in_worker(arm, seed, policy_dir, settings, out_dir, steps_queue, library) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    return run_arm(arm, seed, policy_dir, settings, out_dir, steps_queue, library)


def _run_parallel(runs, jobs, policies, settings, out_dir, libraries) -> list[dict[str, Any]]:
    """Each run in its own process; one progress bar per run, fed by the workers' step and evaluation reports."""
    import multiprocessing

    from tqdm.auto import tqdm

    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no torch or thread state inherited
    with ctx.Manager() as manager, ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        steps_queue = manager.Queue()
        bars = {run: tqdm(total=settings.steps, desc=f"{run[0]}, seed {run[1]}", position=i, mininterval=1.0)
                for i, run in enumerate(runs)}

        def show_progress():
            while (report := steps_queue.get()) is not None:
                arm, seed, accuracy = report
                if accuracy is None:
                    bars[arm, seed].update()
                else:
                    bars[arm, seed].set_postfix_str(f"held-out {accuracy:.3f}", refresh=False)

        reader = threading.Thread(target=show_progress, daemon=True)
        reader.start()
        futures = [pool.submit(_run_in_worker, arm, seed, policies[seed], settings, out_dir, steps_queue,
                               libraries.get(seed)) for arm, seed in runs]
        try:
            return [f.result() for f in futures]
        finally:
            steps_queue.put(None)
            reader.join()
            for bar in bars.values():
                bar.close()


def cmd_demo(args) -> int:
    settings = DemoSettings.for_lab(args.lab, args.quick)
    overrides = {name: getattr(args, name) for name in ("steps", "eval_every", "heldout_problems",
                                                          "static_hint_digits", "jobs")
                 if getattr(args, name) is not None}
    if args.seeds:
        try:
            overrides["seeds"] = [int(s) for s in args.seeds.split(",")]
        except ValueError:
            raise InputError(f"--seeds: give comma-separated integers such as 0,1,2, got {args.seeds!r}") from None
    if args.arms:
        overrides["arms"] = args.arms.split(",")
    if args.blocks is None:
        run_demo(args.out, replace(settings, **overrides))  # replace() re-checks the settings
        return 0
    from mentor.lab.blocks import BLOCK_DEFAULTS, run_blocks

    if args.lab != "composed" or args.seeds or args.quick:
        raise InputError("--blocks: runs the composed lab's paired blocks; give --lab composed, and no --seeds "
                         "(a block's seeds come from its number) or --quick")
    if args.blocks < 1 or args.grpo_seeds < 1:
        raise InputError(f"--blocks and --grpo-seeds must be at least 1, got {args.blocks} and {args.grpo_seeds}")
    jobs = overrides.pop("jobs", 2)
    if not 1 <= jobs <= 2:
        raise InputError(f"--jobs: a blocked run uses 1 or 2 worker processes, got {jobs}")
    overrides = {"arms": list(COMPOSED_ARMS), **BLOCK_DEFAULTS, **overrides}
    run_blocks(args.out, replace(settings, **overrides), args.blocks, args.grpo_seeds, jobs)
    return 0


def add_demo_command(sub) -> None:
    """Registers `mentor demo` on the CLI's sub-parsers."""
    demo = sub.add_parser("demo", help="the offline CPU lab: zero-reward collapse and the mentor's recovery")
    demo.add_argument("--out", default="runs/demo", help="output folder (default: runs/demo)")
    demo.add_argument("--lab", default="addition", choices=LABS,
                      help="addition (default: the CPU lab) or composed (the composed-skills lab, docs/lab.md)")
    demo.add_argument("--quick", action="store_true", help="a smoke run in under 2 minutes")
    demo.add_argument("--steps", type=int, help="GRPO steps per arm")
    demo.add_argument("--seeds", help="comma-separated seeds (default: 0)")
    demo.add_argument("--arms", help=f"comma-separated arms (default: {','.join(ARMS)})")
    demo.add_argument("--eval-every", dest="eval_every", type=int, help="steps between held-out evaluations")
    demo.add_argument("--heldout-problems", dest="heldout_problems", type=int, help="held-out problems")
    demo.add_argument("--static-hint-digits", dest="static_hint_digits", type=int,
                      help="answer digits of the static_hints library's hint, 1 to 3 (default: 3)")
    demo.add_argument("--jobs", type=int,
                      help="runs trained at once, one process each (default: all, up to 2 per core; with --blocks: "
                           "worker processes, 1 or 2, default 2)")
    demo.add_argument("--blocks", type=int, help="composed lab: N paired blocks (pre-training seed x GRPO seed) of "
                                                 f"the arms {','.join(COMPOSED_ARMS)}, with paired bootstrap CIs "
                                                 "(docs/lab.md, 'Evidence, round 4')")
    demo.add_argument("--grpo-seeds", dest="grpo_seeds", type=int, default=2,
                      help="with --blocks: GRPO seeds per pre-training seed (default: 2)")
    demo.set_defaults(func=cmd_demo)
