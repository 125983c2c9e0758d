"""`mentor demo`: the offline CPU lab that shows zero-reward collapse and the mentor's recovery.

Three arms share the pre-trained policy, the seed, the step budget and the hyper-parameters:
- `grpo`: plain GRPO, no hints;
- `static_hints`: a pre-defined hint library (the first answer digits of each problem), given whenever the
  problem's group collapses, through the `graphs/static_hints` graph;
- `mentor`: the four-agent mentor graph, diagnosing each collapsed group live.

The parts, one job each: `demo_settings` (arms, labs, `DemoSettings`), this module (training each arm and
gathering the figures), `demo_pool` (the runs in parallel processes), `demo_cli` (`mentor demo`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mentor.lab.demo_pool import cores, run_parallel
from mentor.lab.demo_settings import ARMS, COMPOSED_ARMS, LAB_STRATEGY, LIBRARY_ARMS, SDPO_ARMS, DemoSettings
from mentor.lab.environment import environment

STATIC_LIBRARY: dict[str, Any] = {"graph": "graphs/static_hints/graph.py:graph"}  # it reads the `hint` column


def arm_config(arm: str, strategy: dict[str, Any], library: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The mentor config of an arm (None: no mentor), splicing hints by `strategy`. `library`: the config keys of the
    `static_hints` arm's library (default `STATIC_LIBRARY`; the composed lab's is the seed's chosen rule). The arms
    `resample`, `learning`, `two_draws`, `memory`, `mentor_iw` and the SDPO arms are the composed lab's
    (mentor.lab.composed_demo)."""
    if arm in ("grpo", "sdpo"):
        return None
    if arm in ("sdpo_library", "sdpo_mentor"):  # no re-attempt under SDPO: the keys that would shape one are left out
        from mentor.trl.sdpo_hook import REATTEMPT_KEYS

        keys = {**strategy, **(library or STATIC_LIBRARY)} if arm == "sdpo_library" else strategy
        return {key: value for key, value in keys.items() if key not in REATTEMPT_KEYS}
    if arm == "static_hints":
        return {**strategy, **(library or STATIC_LIBRARY)}
    if arm in ("resample", "learning", "two_draws", "memory", "mentor_iw"):
        from mentor.lab.composed_demo import CANDIDATE_COLUMNS, RESAMPLE_CONFIG

        learning = {"hint_choice": "learning", "hint_candidates": list(CANDIDATE_COLUMNS)}
        return {**strategy, **{"resample": RESAMPLE_CONFIG, "learning": learning,
                               "two_draws": {"hint_choice": "learning", "graph_draws": 2},
                               "memory": {**learning, "hint_memory": True},
                               "mentor_iw": {"correct_off_policy": True}}[arm]}
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
    from mentor.models.checkpoint import load_checkpoint
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
    """GRPO (or, for `SDPO_ARMS`, TRL's SDPO) on `dataset` from `model`, with the arm's mentor `config` attached
    (None: none); the held-out curve (`heldout_pass(model)` -> a dict with `heldout_acc`, at step 0 and every
    `eval_every` steps), the per-step reward and collapse rates, and the mentor's interventions."""
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
    common = dict(
        output_dir=str(run_dir), use_cpu=True, bf16=False, beta=0.0, seed=seed, report_to="none",
        learning_rate=settings.learning_rate, lr_scheduler_type=settings.lr_scheduler, max_steps=settings.steps,
        per_device_train_batch_size=settings.prompts_per_step * settings.num_generations,
        num_generations=settings.num_generations, max_completion_length=max_completion_length, temperature=1.0,
        logging_steps=1, save_strategy="no", gradient_checkpointing=False, disable_tqdm=steps_queue is not None)
    # SDPO's defaults (an EMA teacher, rebuilt from the checkpoint's folder), with environment feedback read: the
    # mentor's hint, where one is given; without a mentor, no row has any, and successful rollouts alone teach.
    sdpo = arm in SDPO_ARMS
    if sdpo:
        from trl.experimental.sdpo import SDPOConfig, SDPOTrainer

        from mentor.lab.composed_demo import LAB_SDPO_TEMPLATES

        templates = LAB_SDPO_TEMPLATES if settings.sdpo_templates == "lab" else {}
        args, trainer_class = SDPOConfig(include_environment_feedback=True, **templates, **common), SDPOTrainer
    else:
        args, trainer_class = GRPOConfig(**common), GRPOTrainer
    torch.manual_seed(seed)
    trainer = trainer_class(model=model, reward_funcs=[reward_func], args=args, train_dataset=dataset,
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
    # SDPO logs its own names; its flat groups (all right or all wrong) are what GRPO's zero-std share counts.
    reward, flat = ("self_distillation/reward_mean", "self_distillation/flat_group_fraction") if sdpo \
        else ("reward", "frac_reward_zero_std")
    logs = [log for log in trainer.state.log_history if reward in log]
    result = {
        "heldout_acc_before": before, "heldout_acc_after": curve[-1]["heldout_acc"], "curve": curve,
        "train_s": train_s, "reward": [log[reward] for log in logs],
        "collapse_rate_before": [log.get("mentor/collapse_rate_before", log[flat]) for log in logs],
        "collapse_rate_after": [log.get("mentor/collapse_rate_after", log[flat]) for log in logs],
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
    from mentor.lab.composed_eval import library_config
    from mentor.models.checkpoint import load_checkpoint
    from mentor.rewards import composed_reward

    model, tokenizer = load_checkpoint(policy_dir)
    heldout = cd.heldout(settings.heldout_problems)
    step = library.get("step") if arm in LIBRARY_ARMS else None
    wrong: list[dict[str, Any]] = []

    def heldout_pass(policy) -> dict[str, Any]:
        wrong[:] = cd.wrong(policy, tokenizer, heldout)
        where = Counter(str(w["first_wrong_step"]) for w in wrong)
        return {"heldout_acc": (len(heldout) - len(wrong)) / len(heldout), "first_wrong_steps": dict(sorted(where.items()))}

    rule = {**library_config(step or 1), "hint_placement": settings.strategy["hint_placement"]} \
        if arm in LIBRARY_ARMS else None
    config = arm_config(arm, settings.strategy, rule)
    problems = cd.dataset(settings.train_problems, seed, step, candidates="hint_candidates" in (config or {}))
    result = _train(arm, seed, model, tokenizer, settings, out_dir, steps_queue, heldout_pass, problems,
                    composed_reward, cd.MAX_COMPLETION_LENGTH, config)
    if arm == "resample":
        result["hint_tokens_per_intervention"] = 0.0  # its trace "hint" is a marker the policy never sees
    result["heldout_wrong"] = wrong
    # The arm's own hint (the library's step for static_hints, else step 1) gives `hint_dependence`; every one-step
    # rule, the same for every arm, gives `hint_dependence_by_step`, the figure that compares across arms.
    own = step or 1
    hinted = {k: cd.hinted_accuracy(model, tokenizer, heldout, k) for k in sorted({own, *cd.CANDIDATE_STEPS})}
    result["hint_dependence"] = hinted[own] - result["heldout_acc_after"]
    result["hint_dependence_by_step"] = {str(k): hinted[k] - result["heldout_acc_after"] for k in cd.CANDIDATE_STEPS}
    if step is not None:
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
    jobs = min(settings.jobs or 2 * cores(), len(runs))
    print(f"{len(runs)} run(s) of {settings.steps} GRPO steps, {jobs} at a time")
    if jobs > 1:
        figures = run_parallel(run_arm, runs, jobs, policies, settings, out_dir, libraries)
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
               "arms": summarise_arms(per_seed), "environment": environment(), "wall_s": time.perf_counter() - t0}
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
        if set(LIBRARY_ARMS) & set(settings.arms):
            libraries[seed] = composed_demo.choose_library(policies[seed], seed)
            print(f"seed {seed}: static_hints library = reveal step {libraries[seed]['step']} "
                  f"(rescue rates on {libraries[seed]['groups']} step-0 failures: {libraries[seed]['rescue_rates']})")
    return policies, libraries


__all__ = ["ARMS", "COMPOSED_ARMS", "LAB_STRATEGY", "SDPO_ARMS", "DemoSettings", "arm_config", "run_arm", "run_demo", "summarise_arms"]
