"""`mentor demo --lab composed --blocks N`: the composed lab's arms compared in paired blocks (docs/lab.md, "Evidence,
round 4", whose pre-registration fixes the rules this module applies).

- A block is (pre-training seed p, GRPO seed g): every arm starts from seed p's policy and trains on the same problems
  in the same order with the same torch seed (g). Block i is (the (i // grpo_seeds)-th kept seed, i % grpo_seeds).
- The collapse rule: a pre-training seed is kept only if at least `COLLAPSE_MIN` of its step-0 groups (8 attempts at
  T=1 on the library's 300 training problems) have no correct attempt; dropped seeds are recorded and skipped.
- The outcome of a run is its mean held-out accuracy over the last `LAST_EVALS` evaluations.
- Paired differences per block, a cluster bootstrap over policies (`paired_bootstrap`) and the decision (`decide`).
- Blocks run in worker processes (one torch thread each); each finished block is written atomically to
  `<out>/blocks/p<p>-g<g>.json` and reused by a rerun with the same settings, so Ctrl-C (or SIGTERM) keeps them.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mentor.lab.demo_pool import workers_stopped_on_sigterm
from mentor.output import partial_path, write_atomically

COLLAPSE_MIN = 2 / 3
LAST_EVALS = 3
MARGIN = 0.03  # the equivalence margin of the decision rule
COMPARISONS = {"mentor - static_hints": ("mentor", "static_hints"), "mentor - resample": ("mentor", "resample"),
               "static_hints - resample": ("static_hints", "resample"), "mentor - grpo": ("mentor", "grpo"),
               "resample - grpo": ("resample", "grpo"), "learning - mentor": ("learning", "mentor"),
               "learning - static_hints": ("learning", "static_hints"), "learning - resample": ("learning", "resample"),
               "learning - two_draws": ("learning", "two_draws"), "two_draws - mentor": ("two_draws", "mentor")}
# The settings of a block run: the composed demo's, with 1,000 held-out problems and an evaluation every 25 steps.
BLOCK_DEFAULTS: dict[str, Any] = {"heldout_problems": 1000, "eval_every": 25}


def outcome(curve: list[dict[str, Any]], last: int = LAST_EVALS) -> float:
    """Mean held-out accuracy over the last `last` evaluations after step 0.

    >>> outcome([{"step": 0, "heldout_acc": 0.1}, {"step": 25, "heldout_acc": 0.2}, {"step": 50, "heldout_acc": 0.4}])
    0.30000000000000004
    """
    points = [p["heldout_acc"] for p in curve if p["step"] > 0][-last:]
    if not points:
        raise ValueError("outcome: the curve has no evaluation after step 0")
    return sum(points) / len(points)


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def paired_bootstrap(diffs: dict[Any, list[float]], resamples: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Cluster bootstrap of a mean paired difference: `diffs` maps each cluster (a policy) to its blocks' differences.
    Each resample draws as many clusters as there are, with replacement, and takes the mean over all their blocks.
    Returns the observed mean, percentile 95% and 90% intervals, the blocks `n` and the clusters.

    >>> r = paired_bootstrap({0: [0.1, 0.1], 1: [0.1]})
    >>> round(r["mean"], 6), [round(x, 6) for x in r["ci"]], r["n"], r["clusters"]
    (0.1, [0.1, 0.1], 3, 2)
    >>> r = paired_bootstrap({0: [0.0], 1: [1.0]}, resamples=2000)  # a resample is one policy twice, or both
    >>> r["mean"], r["ci"], r["ci90"]
    (0.5, [0.0, 1.0], [0.0, 1.0])
    """
    clusters = [list(v) for v in diffs.values() if v]
    if not clusters:
        raise ValueError("paired_bootstrap: no differences")
    n = sum(len(c) for c in clusters)
    mean = sum(sum(c) for c in clusters) / n
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        drawn = [clusters[rng.randrange(len(clusters))] for _ in clusters]
        means.append(sum(sum(c) for c in drawn) / sum(len(c) for c in drawn))
    means.sort()
    return {"mean": mean, "ci": [_quantile(means, 0.025), _quantile(means, 0.975)],
            "ci90": [_quantile(means, 0.05), _quantile(means, 0.95)], "n": n, "clusters": len(clusters)}


def decide(stats: dict[str, Any], margin: float = MARGIN) -> dict[str, Any]:
    """The pre-registered decision on one comparison: `win` (95% CI above 0), `loss` (below 0), `matches` (90% CI
    inside ±margin), else `unresolved` with the blocks needed for a 95% CI of ±margin, n × (half-width / margin)².

    >>> decide({"ci": [0.01, 0.05], "ci90": [0.02, 0.04], "n": 10})["decision"]
    'win'
    >>> decide({"ci": [-0.02, 0.02], "ci90": [-0.015, 0.015], "n": 10})["decision"]
    'matches'
    >>> decide({"ci": [-0.06, 0.06], "ci90": [-0.05, 0.05], "n": 10})
    {'decision': 'unresolved', 'n_needed': 40}
    """
    lo, hi = stats["ci"]
    if lo > 0:
        return {"decision": "win"}
    if hi < 0:
        return {"decision": "loss"}
    if -margin <= stats["ci90"][0] and stats["ci90"][1] <= margin:
        return {"decision": "matches"}
    half = (hi - lo) / 2
    return {"decision": "unresolved", "n_needed": math.ceil(stats["n"] * (half / margin) ** 2)}


def paired(blocks: list[dict[str, Any]], arms: list[str]) -> dict[str, Any]:
    """Every comparison whose two arms ran: the bootstrap (clusters: pre-training seeds) and the decision."""
    out = {}
    for name, (a, b) in COMPARISONS.items():
        if a not in arms or b not in arms or not blocks:
            continue
        diffs: dict[int, list[float]] = {}
        for block in blocks:
            diffs.setdefault(block["pretrain_seed"], []).append(block["outcome"][a] - block["outcome"][b])
        stats = paired_bootstrap(diffs)
        out[name] = {**stats, **decide(stats)}
    return out


def settings_key(settings) -> str:
    """What makes a finished block reusable: every setting but the seeds and jobs."""
    spec = {k: v for k, v in asdict(settings).items() if k not in ("seeds", "jobs")}
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:16]


class _Quiet:
    """A steps queue that drops the reports: workers print no per-step progress bars."""

    def put(self, item) -> None:
        pass


def prepare_policy(seed: int, settings) -> dict[str, Any]:
    """Seed `seed`'s policy (pre-trained on a cache miss), its step-0 collapse share and the collapse rule's verdict,
    and, when `static_hints` runs, its library rule."""
    from mentor.lab import composed as lab
    from mentor.lab import composed_demo as cd
    from mentor.lab.composed_eval import composed_failure_rows
    from mentor.policy import torch_threads

    with torch_threads(1):
        policy = cd.policy(seed, settings.pretrain)
        problems = lab.generate_problems("hard", cd.LIBRARY_PROBLEMS, seed=seed, split="train")
        collapsed = len(composed_failure_rows(policy, problems, seed=seed)) / len(problems)
        info = {"seed": seed, "policy": policy, "collapsed_share": collapsed, "kept": collapsed >= COLLAPSE_MIN}
        if info["kept"] and "static_hints" in settings.arms:
            info["library"] = cd.choose_library(policy, seed)
    return info


def run_block(pretrain_seed: int, grpo_seed: int, policy: dict[str, Any], settings, out_dir: Path) -> dict[str, Any]:
    """Every arm of one block, one after the other in this process; written to `<out>/blocks/p<p>-g<g>.json`."""
    import torch

    from mentor.lab.demo import run_arm

    torch.set_num_threads(1)
    name = f"p{pretrain_seed}-g{grpo_seed}"
    t0 = time.perf_counter()
    runs = {}
    for arm in settings.arms:
        result = run_arm(arm, grpo_seed, policy["policy"], settings, out_dir / "blocks" / name, _Quiet(),
                         policy.get("library"))
        result.pop("heldout_wrong", None)  # 1,000 problems per arm per block: the curve keeps where they go wrong
        runs[arm] = result
    block = {"name": name, "pretrain_seed": pretrain_seed, "grpo_seed": grpo_seed, "policy": policy["policy"],
             "library_step": (policy.get("library") or {}).get("step"), "settings_key": settings_key(settings),
             "outcome": {arm: outcome(r["curve"]) for arm, r in runs.items()}, "runs": runs,
             "wall_s": time.perf_counter() - t0}
    write_atomically(out_dir / "blocks" / f"{name}.json", [json.dumps(block, indent=1)])
    return block


def finished_block(out_dir: Path, name: str, settings) -> dict[str, Any] | None:
    path = out_dir / "blocks" / f"{name}.json"
    if not path.exists():
        return None
    block = json.loads(path.read_text())
    return block if block.get("settings_key") == settings_key(settings) else None


def run_blocks(out: str | Path, settings, n_blocks: int, grpo_seeds: int = 2, jobs: int = 2) -> dict[str, Any]:
    """Runs `n_blocks` blocks (rounded up to whole pre-training seeds of `grpo_seeds` blocks; finished ones are
    reused) on at most `jobs` worker processes, a block before a new seed's pre-training whenever one is ready; writes
    results.json (the demo's keys, plus `blocks`, `blocks_dropped` and `paired`) and report.html. On Ctrl-C or
    SIGTERM the finished blocks stay in `<out>/blocks/` and their summary goes to `results.json.partial`."""
    import multiprocessing

    if n_blocks < 1 or grpo_seeds < 1 or jobs < 1:
        raise ValueError(f"blocks, grpo_seeds and jobs must be at least 1, got {n_blocks}, {grpo_seeds}, {jobs}")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    needed = math.ceil(n_blocks / grpo_seeds)  # pre-training seeds kept by the collapse rule
    policies: dict[int, dict[str, Any]] = {}  # every seed tried, by seed
    blocks: dict[str, dict[str, Any]] = {}
    ready: list[tuple[int, int]] = []  # blocks of kept seeds not yet submitted, in order
    running: dict[Any, tuple[str, Any]] = {}
    next_seed = 0
    print(f"{needed * grpo_seeds} block(s) of {len(settings.arms)} arms ({', '.join(settings.arms)}), "
          f"{settings.steps} GRPO steps each, {jobs} worker(s)", flush=True)

    def seeds_in_play() -> int:
        return sum(p["kept"] for p in policies.values()) + sum(kind == "policy" for kind, _ in running.values())

    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    with workers_stopped_on_sigterm(pool):
        try:
            while True:
                while len(running) < jobs and (ready or seeds_in_play() < needed):
                    if ready:
                        p, g = ready.pop(0)
                        running[pool.submit(run_block, p, g, policies[p], settings, out_dir)] = ("block", (p, g))
                    else:
                        running[pool.submit(prepare_policy, next_seed, settings)] = ("policy", next_seed)
                        next_seed += 1
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    kind, _ = running.pop(future)
                    if kind == "policy":
                        info = future.result()
                        policies[info["seed"]] = info
                        print(f"seed {info['seed']}: {100 * info['collapsed_share']:.0f}% of step-0 groups collapsed: "
                              + ("kept" if info["kept"] else "dropped (collapse rule)"), flush=True)
                        for g in range(grpo_seeds) if info["kept"] else ():
                            name = f"p{info['seed']}-g{g}"
                            if (block := finished_block(out_dir, name, settings)) is not None:
                                blocks[name] = block
                                print(f"block {name}: reused", flush=True)
                            else:
                                ready.append((info["seed"], g))
                    else:
                        block = future.result()
                        blocks[block["name"]] = block
                        print(f"block {block['name']} ({len(blocks)} done, {block['wall_s']:.0f} s): "
                              + ", ".join(f"{a} {v:.3f}" for a, v in block["outcome"].items()), flush=True)
                        write_atomically(partial_path(out_dir / "results.json"),
                                         [json.dumps(summary(settings, policies, blocks, t0, False), indent=2)])
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            write_atomically(partial_path(out_dir / "results.json"),
                             [json.dumps(summary(settings, policies, blocks, t0, False), indent=2)])
            print(f"interrupted: {len(blocks)} finished block(s) kept in {out_dir / 'blocks'}; their summary is in "
                  f"{partial_path(out_dir / 'results.json')}", flush=True)
            raise
        pool.shutdown()
    from mentor.lab.report import write_report

    results = summary(settings, policies, blocks, t0, True)
    write_atomically(out_dir / "results.json", [json.dumps(results, indent=2)])
    partial_path(out_dir / "results.json").unlink(missing_ok=True)
    write_report(results, out_dir)
    print(table(results))
    print(f"wrote {out_dir / 'results.json'} and {out_dir / 'report.html'} in {results['wall_s']:.0f} s")
    return results


def summary(settings, policies: dict[int, dict[str, Any]], blocks: dict[str, dict[str, Any]], t0: float,
            complete: bool) -> dict[str, Any]:
    """results.json: the demo's keys (`arms` over every block's runs), plus the blocks, the dropped seeds and the
    paired comparisons."""
    from mentor.lab.demo import summarise_arms

    done = sorted(blocks.values(), key=lambda b: (b["pretrain_seed"], b["grpo_seed"]))
    kept = sorted(s for s, p in policies.items() if p["kept"])
    per_arm = {arm: [b["runs"][arm] for b in done] for arm in settings.arms}
    return {"lab": "composed", "steps": settings.steps, "settings": asdict(settings),
            "policy": policies[kept[0]]["policy"] if kept else None,
            "policies": {str(s): policies[s]["policy"] for s in kept},
            "arms": summarise_arms(per_arm) if done else {},
            "blocks": [{k: v for k, v in b.items() if k != "runs"} for b in done],
            "blocks_dropped": [{k: v for k, v in p.items() if k != "library"}
                               for _, p in sorted(policies.items()) if not p["kept"]],
            "collapse_rule": f"keep a pre-training seed only if at least {COLLAPSE_MIN:.3f} of its step-0 groups "
                             "(8 attempts at T=1 on 300 training problems) have no correct attempt",
            "outcome": f"mean held-out accuracy over the last {LAST_EVALS} evaluations",
            "paired": paired(done, settings.arms), "complete": complete, "wall_s": time.perf_counter() - t0}


def table(results: dict[str, Any]) -> str:
    """The paired comparisons as a markdown table."""
    lines = ["| comparison | mean | 95% CI | 90% CI | blocks (policies) | decision |", "|---|---:|---|---|---:|---|"]
    for name, s in results["paired"].items():
        decision = s["decision"] + (f" (n needed ≈ {s['n_needed']})" if "n_needed" in s else "")
        lines.append(f"| {name} | {s['mean']:+.3f} | [{s['ci'][0]:+.3f}, {s['ci'][1]:+.3f}] | "
                     f"[{s['ci90'][0]:+.3f}, {s['ci90'][1]:+.3f}] | {s['n']} ({s['clusters']}) | {decision} |")
    return "\n".join(lines)
