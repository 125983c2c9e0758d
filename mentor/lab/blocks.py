"""`mentor demo --lab composed --blocks N`: the composed lab's arms compared in paired blocks (docs/lab.md, "Blocks";
round 4's pre-registration, docs/evidence/round4-retry-control.md, fixes the rules this module applies).

- A block is (pre-training seed p, GRPO seed g): every arm starts from seed p's policy and trains on the same problems
  in the same order with the same torch seed (g). Block i is (the (i // grpo_seeds)-th kept seed, i % grpo_seeds).
  The candidate pre-training seeds are 0, 1, 2, ... or the ones asked for (`pretrain_seeds`), then the next unused.
- The collapse rule: a pre-training seed is kept only if at least `COLLAPSE_MIN` of its step-0 groups (8 attempts at
  T=1 on the library's 300 training problems) have no correct attempt; dropped seeds are recorded and replaced by
  the next candidate, until `drop_cap` seeds are dropped: then the run stops with an InputError.
- The outcome of a run is its mean held-out accuracy over the last `LAST_EVALS` evaluations.
- The analysis, over policies (`compare`): per policy the mean paired difference of its blocks; a paired t-interval,
  an exact sign-flip p and Holm's correction across `PRIMARY` (mentor.evaluation.policy_stats), decided by `decide_t`; the
  cluster bootstrap of round 4 (`paired_bootstrap`, `decide`) as secondary; `harm`: the policies where a hinted arm
  ends below grpo.
- Blocks run in worker processes (one torch thread each); each finished block is written atomically to
  `<out>/blocks/p<p>-g<g>.json` with the code it was made with (`block_folder.code_version`) and the environment it
  ran in (mentor.lab.environment), and reused by a rerun with the same settings, so Ctrl-C (or SIGTERM) keeps them; a seed whose blocks are all there is not pre-trained
  again, so a fresh clone resumes from the committed files alone. A run holds the folder's lock, and refuses a folder
  with blocks of other settings, or made by other code unless `allow_stale`, and warns of blocks made in another
  environment (`block_folder.check_folder`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mentor.evaluation.intervals import MARGIN, decide, paired_bootstrap
from mentor.evaluation.policy_stats import holm, sign_flip_p, t_test
from mentor.lab.block_folder import check_folder, code_version, folder_lock
from mentor.lab.demo_pool import workers_stopped_on_sigterm
from mentor.lab.demo_settings import LIBRARY_ARMS
from mentor.lab.environment import environment
from mentor.output import partial_path, write_atomically
from mentor.types import InputError

COLLAPSE_MIN = 2 / 3
LAST_EVALS = 3
COMPARISONS = {"mentor - static_hints": ("mentor", "static_hints"), "mentor - resample": ("mentor", "resample"),
               "static_hints - resample": ("static_hints", "resample"), "mentor - grpo": ("mentor", "grpo"),
               "resample - grpo": ("resample", "grpo"), "learning - mentor": ("learning", "mentor"),
               "learning - static_hints": ("learning", "static_hints"), "learning - resample": ("learning", "resample"),
               "learning - two_draws": ("learning", "two_draws"), "two_draws - mentor": ("two_draws", "mentor"),
               "static_hints - grpo": ("static_hints", "grpo"), "learning - grpo": ("learning", "grpo"),
               "two_draws - grpo": ("two_draws", "grpo"),
               # Issue 42's arms (docs/evidence/sdpo42.md): SDPO alone, with the library's
               # hint and with the mentor's hint as the teacher's feedback, and against GRPO with the mentor.
               "sdpo_mentor - sdpo": ("sdpo_mentor", "sdpo"), "sdpo_mentor - sdpo_library": ("sdpo_mentor", "sdpo_library"),
               "sdpo_mentor - mentor": ("sdpo_mentor", "mentor"), "sdpo_library - sdpo": ("sdpo_library", "sdpo"),
               # Issue 55's arms (docs/evidence/round6-lab-memory-iw.md): the memory and the off-policy correction.
               "memory - learning": ("memory", "learning"), "mentor_iw - mentor": ("mentor_iw", "mentor"),
               "memory - mentor": ("memory", "mentor"), "memory - grpo": ("memory", "grpo"),
               "mentor_iw - grpo": ("mentor_iw", "grpo")}
# Each round's primary comparisons, Holm-corrected together; the rest are secondary. Round 5's
# (docs/evidence/round5-fresh-policies.md), the lab's round 6 (docs/evidence/round6-lab-memory-iw.md) and round 7
# (docs/evidence/round7-lab-memory-repeats.md): `primaries` tells them apart by the arms a run trains.
PRIMARY = ("learning - two_draws", "learning - mentor", "mentor - static_hints")
PRIMARY_LAB_ROUND_6 = ("memory - learning", "mentor_iw - mentor", "mentor - resample")
PRIMARY_LAB_ROUND_7 = ("memory - learning", "learning - mentor")
HINTED_ARMS = ("static_hints", "mentor", "learning", "two_draws", "memory", "mentor_iw")
ALPHA = 0.05
DROP_CAP_MIN = 4  # a run stops once max(DROP_CAP_MIN, seeds needed) seeds are dropped by the collapse rule
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


def decide_t(stats: dict[str, Any], margin: float = MARGIN, alpha: float = ALPHA) -> dict[str, Any]:
    """Round 4's four cases on the t-interval over policies, after Holm: `win` / `loss` when the (Holm-adjusted, for a
    primary comparison) t-test p is below `alpha`, by the mean's sign; `matches` when the 90% t-interval is inside
    ±margin; else `unresolved` with the policies needed for a 95% t-interval of ±margin. Fewer than 2 policies have no
    interval: `too_few_policies`, never a win.

    >>> decide_t({"policy_mean": 0.04, "t_ci": None, "t_ci90": None, "t_p": None, "holm_p": None, "policies": 1})
    {'decision': 'too_few_policies'}
    >>> decide_t({"policy_mean": 0.04, "t_ci": [0.01, 0.07], "t_ci90": [0.02, 0.06], "t_p": 0.01, "holm_p": 0.07,
    ...           "policies": 6})
    {'decision': 'unresolved', 'n_needed': 6}
    """
    if stats["t_ci"] is None:
        return {"decision": "too_few_policies"}
    p = stats["t_p"] if stats["holm_p"] is None else stats["holm_p"]
    if p < alpha:
        return {"decision": "win" if stats["policy_mean"] > 0 else "loss"}
    if -margin <= stats["t_ci90"][0] and stats["t_ci90"][1] <= margin:
        return {"decision": "matches"}
    half = (stats["t_ci"][1] - stats["t_ci"][0]) / 2
    return {"decision": "unresolved", "n_needed": math.ceil(round(stats["policies"] * (half / margin) ** 2, 6))}


def per_policy(blocks: list[dict[str, Any]], a: str, b: str) -> dict[int, list[float]]:
    """Each pre-training seed's blocks' differences a − b."""
    diffs: dict[int, list[float]] = {}
    for block in blocks:
        diffs.setdefault(block["pretrain_seed"], []).append(block["outcome"][a] - block["outcome"][b])
    return diffs


def primaries(arms: list[str]) -> tuple[str, ...]:
    """The primary comparisons of a run of `arms`: the lab's round 6's when it trains `mentor_iw`, round 7's when it
    trains `memory` without it, else round 5's.

    >>> primaries(["grpo", "resample", "mentor", "learning", "memory", "mentor_iw"])[1]
    'mentor_iw - mentor'
    >>> primaries(["grpo", "mentor", "learning", "memory"]), primaries(["mentor"])[0]
    (('memory - learning', 'learning - mentor'), 'learning - two_draws')
    """
    if "mentor_iw" in arms:
        return PRIMARY_LAB_ROUND_6
    return PRIMARY_LAB_ROUND_7 if "memory" in arms else PRIMARY


def paired(blocks: list[dict[str, Any]], arms: list[str]) -> dict[str, Any]:
    """Every comparison whose two arms ran. Primary, over policies: `per_policy` (each policy's mean difference),
    `policies`, `policy_mean`, `t_ci`, `t_ci90`, `t_p`, `sign_flip_p`, `holm_p` (for `primaries(arms)`, else None) and
    `decision` (`decide_t`, with `n_needed` policies when unresolved).
    Secondary: round 4's cluster bootstrap (`mean`, `ci`, `ci90`, `n` blocks, `clusters`) and its `bootstrap_decision`
    (with `bootstrap_n_needed` when unresolved)."""
    out = {}
    for name, (a, b) in COMPARISONS.items():
        if a not in arms or b not in arms or not blocks:
            continue
        diffs = per_policy(blocks, a, b)
        means = {seed: sum(d) / len(d) for seed, d in sorted(diffs.items())}
        boot = paired_bootstrap(diffs)
        secondary = {("bootstrap_" + k): v for k, v in decide(boot).items()}
        values = list(means.values())
        out[name] = {**boot, **secondary, "per_policy": {str(s): m for s, m in means.items()}, "policies": len(means),
                     "policy_mean": sum(values) / len(values), **t_test(values), "sign_flip_p": sign_flip_p(values),
                     "holm_p": None}
    primary = {name: out[name]["t_p"] for name in primaries(arms) if name in out and out[name]["t_p"] is not None}
    for name, p in holm(primary).items():
        out[name]["holm_p"] = p
    for stats in out.values():
        stats.update(decide_t(stats))
    return out


def harm(blocks: list[dict[str, Any]], arms: list[str]) -> dict[str, Any]:
    """Per hinted arm run beside grpo: the policies (mean over their blocks) where it ends below grpo."""
    out = {}
    for arm in (a for a in HINTED_ARMS if a in arms and "grpo" in arms and blocks):
        means = {seed: sum(d) / len(d) for seed, d in sorted(per_policy(blocks, arm, "grpo").items())}
        below = [seed for seed, m in means.items() if m < 0]
        out[arm] = {"policies_below_grpo": len(below), "policies": len(means), "below": below}
    return out


def settings_key(settings) -> str:
    """What makes a finished block reusable: every setting but the seeds and jobs."""
    spec = {k: v for k, v in asdict(settings).items() if k not in ("seeds", "jobs")}
    if spec["sdpo_templates"] == "trl":  # added after issue 42's run: its default keeps earlier blocks' keys
        del spec["sdpo_templates"]
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:16]


class _Quiet:
    """A steps queue that drops the reports: workers print no per-step progress bars."""

    def put(self, item) -> None:
        pass


def prepare_policy(seed: int, settings, collapse_min: float | None = None) -> dict[str, Any]:
    """Seed `seed`'s policy (pre-trained on a cache miss), its step-0 collapse share and the collapse rule's verdict
    (at `collapse_min`, default `COLLAPSE_MIN`: the parent passes its own, since a spawned worker re-imports this
    module), and, when `static_hints` runs, its library rule."""
    from mentor.lab import composed_demo as cd
    from mentor.lab.composed_eval import composed_failure_rows
    from mentor.lab.data import generate_problems
    from mentor.policy import torch_threads

    with torch_threads(1):
        policy = cd.policy(seed, settings.pretrain)
        problems = generate_problems("hard", cd.LIBRARY_PROBLEMS, seed=seed, split="train", lab="composed")
        collapsed = len(composed_failure_rows(policy, problems, seed=seed)) / len(problems)
        bar = COLLAPSE_MIN if collapse_min is None else collapse_min
        info = {"seed": seed, "policy": policy, "collapsed_share": collapsed, "kept": collapsed >= bar}
        if info["kept"] and set(LIBRARY_ARMS) & set(settings.arms):
            info["library"] = cd.choose_library(policy, seed)
    return info


def run_block(pretrain_seed: int, grpo_seed: int, policy: dict[str, Any], settings, out_dir: Path,
              code: dict[str, str]) -> dict[str, Any]:
    """Every arm of one block, one after the other in this process; written to `<out>/blocks/p<p>-g<g>.json` with
    `code`, the version of the code that made it, and the `environment` it ran in."""
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
             "library_step": (policy.get("library") or {}).get("step"), "collapsed_share": policy["collapsed_share"],
             "settings_key": settings_key(settings), "code": code, "environment": environment(),
             "outcome": {arm: outcome(r["curve"]) for arm, r in runs.items()}, "runs": runs,
             "wall_s": time.perf_counter() - t0}
    write_atomically(out_dir / "blocks" / f"{name}.json", [json.dumps(block, indent=1)])
    return block


def finished_block(out_dir: Path, name: str, settings) -> dict[str, Any] | None:
    """The block's file if it was written with these settings, else None (the block runs). A file cut short (a copy
    or a commit that stopped half-way; the run itself writes atomically) runs again, with a warning naming it: its
    block is deterministic, so rerunning it loses nothing, and the new file replaces it."""
    path = out_dir / "blocks" / f"{name}.json"
    if not path.exists():
        return None
    try:
        block = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        block = f"{type(e).__name__}: {e}"
    if not isinstance(block, dict):
        print(f"warning: {path} is not a finished block ({str(block)[:200]}): running block {name} again; its new "
              "file will replace this one", file=sys.stderr, flush=True)
        return None
    return block if block.get("settings_key") == settings_key(settings) else None


def candidate_seeds(asked: list[int] | None):
    """The pre-training seeds to try, in order: `asked` (default: none), then every unused seed counting up from
    the largest asked one (or 0), so that a seed the collapse rule drops is replaced by the next unused one.

    >>> import itertools
    >>> list(itertools.islice(candidate_seeds([100, 102]), 4)), list(itertools.islice(candidate_seeds(None), 3))
    ([100, 102, 103, 104], [0, 1, 2])
    """
    yield from asked or ()
    yield from itertools.count(max(asked) + 1 if asked else 0)


def run_blocks(out: str | Path, settings, n_blocks: int, grpo_seeds: int = 2, jobs: int = 2,
               pretrain_seeds: list[int] | None = None, allow_stale: bool = False) -> dict[str, Any]:
    """Runs `n_blocks` blocks (rounded up to whole pre-training seeds of `grpo_seeds` blocks; finished ones are
    reused) on at most `jobs` worker processes, a block before a new seed's pre-training whenever one is ready; writes
    results.json (the demo's keys, plus `blocks`, `blocks_dropped`, `paired` and `harm`) and report.html. The
    pre-training seeds are `pretrain_seeds` (exactly the number of seeds the blocks need) or 0, 1, 2, ...; a seed the
    collapse rule drops is replaced by the next unused one, until max(DROP_CAP_MIN, seeds needed) are dropped: then
    the run stops (InputError) with the dropped seeds in `results.json.partial`. On Ctrl-C or SIGTERM the finished
    blocks stay in `<out>/blocks/` and their summary goes to `results.json.partial`. The run holds `<out>`'s lock
    and first checks its block files (`check_folder`: other settings refused; other code refused unless
    `allow_stale`; another environment warned of)."""
    if n_blocks < 1 or grpo_seeds < 1 or jobs < 1:
        raise ValueError(f"blocks, grpo_seeds and jobs must be at least 1, got {n_blocks}, {grpo_seeds}, {jobs}")
    needed = math.ceil(n_blocks / grpo_seeds)  # pre-training seeds kept by the collapse rule
    if pretrain_seeds is not None and (len(set(pretrain_seeds)) != len(pretrain_seeds) or len(pretrain_seeds) != needed
                                       or min(pretrain_seeds) < 0):
        raise ValueError(f"pretrain_seeds: {needed} distinct seeds of at least 0 for {n_blocks} block(s) of "
                         f"{grpo_seeds} GRPO seed(s) each, got {pretrain_seeds}")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        code = code_version()
        check_folder(out_dir, settings_key(settings), code, environment(), allow_stale)
        return _run_blocks(out_dir, settings, needed, grpo_seeds, jobs, pretrain_seeds, code)


def _run_blocks(out_dir: Path, settings, needed: int, grpo_seeds: int, jobs: int, pretrain_seeds: list[int] | None,
                code: dict[str, str]) -> dict[str, Any]:
    """`run_blocks` in its locked, checked folder, for `needed` kept pre-training seeds."""
    import multiprocessing

    t0 = time.perf_counter()
    drop_cap = max(DROP_CAP_MIN, needed)
    policies: dict[int, dict[str, Any]] = {}  # every seed tried, by seed
    blocks: dict[str, dict[str, Any]] = {}
    files: dict[int, dict[str, dict[str, Any] | None]] = {}  # each candidate seed's finished block files
    ready: list[tuple[int, int]] = []  # blocks of kept seeds not yet submitted, in order
    running: dict[Any, tuple[str, Any]] = {}
    candidates = candidate_seeds(pretrain_seeds)
    print(f"{needed * grpo_seeds} block(s) of {len(settings.arms)} arms ({', '.join(settings.arms)}), "
          f"{settings.steps} GRPO steps each, {jobs} worker(s)", flush=True)

    def seeds_in_play() -> int:
        return sum(p["kept"] for p in policies.values()) + sum(kind == "policy" for kind, _ in running.values())

    def dropped() -> list[int]:
        return [s for s, p in sorted(policies.items()) if not p["kept"]]

    def keep_partial() -> None:  # the summary so far, for an interrupted or stopped run
        write_atomically(partial_path(out_dir / "results.json"),
                         [json.dumps(summary(settings, policies, blocks, t0, False, code), indent=2)])

    def reuse(seed: int) -> None:
        for g, (name, block) in enumerate(files.pop(seed).items()):
            if block is not None:
                blocks[name] = block
                print(f"block {name}: reused", flush=True)
            else:
                ready.append((seed, g))

    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    with workers_stopped_on_sigterm(pool):
        try:
            while True:
                while len(running) < jobs and (ready or (seeds_in_play() < needed and len(dropped()) < drop_cap)):
                    if ready:
                        p, g = ready.pop(0)
                        running[pool.submit(run_block, p, g, policies[p], settings, out_dir, code)] = ("block", (p, g))
                        continue
                    seed = next(candidates)
                    files[seed] = {f"p{seed}-g{g}": finished_block(out_dir, f"p{seed}-g{g}", settings)
                                   for g in range(grpo_seeds)}
                    found = list(files[seed].values())
                    if all(b is not None and "collapsed_share" in b for b in found):  # no pre-training needed
                        policies[seed] = {"seed": seed, "policy": found[0]["policy"], "kept": True,
                                          "collapsed_share": found[0]["collapsed_share"]}
                        print(f"seed {seed}: every block finished ({100 * found[0]['collapsed_share']:.0f}% of "
                              "step-0 groups collapsed: kept)", flush=True)
                        reuse(seed)
                    else:
                        running[pool.submit(prepare_policy, seed, settings, COLLAPSE_MIN)] = ("policy", seed)
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
                        if info["kept"]:
                            reuse(info["seed"])
                    else:
                        block = future.result()
                        blocks[block["name"]] = block
                        print(f"block {block['name']} ({len(blocks)} done, {block['wall_s']:.0f} s): "
                              + ", ".join(f"{a} {v:.3f}" for a, v in block["outcome"].items()), flush=True)
                        keep_partial()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            # A block its worker wrote before this process heard of it is in the summary too (the file is there).
            names = [f"p{seed}-g{g}" for seed, info in policies.items() if info["kept"] for g in range(grpo_seeds)]
            for name in names:
                if name not in blocks and (block := finished_block(out_dir, name, settings)) is not None:
                    blocks[name] = block
            keep_partial()
            print(f"interrupted: {len(blocks)} finished block(s) kept in {out_dir / 'blocks'}; their summary is in "
                  f"{partial_path(out_dir / 'results.json')}", flush=True)
            raise
        pool.shutdown()
    if seeds_in_play() < needed:  # the drop cap, reached: no results.json, the dropped seeds in the partial summary
        keep_partial()
        raise InputError(f"the collapse rule dropped {len(dropped())} pre-training seed(s) ({dropped()}) and kept "
                         f"{seeds_in_play()} of the {needed} needed, so the run stopped; a policy is kept only if at "
                         f"least {COLLAPSE_MIN:.3f} of its step-0 groups collapse: pre-train these policies less, or "
                         f"give other seeds. Their collapse shares are in {partial_path(out_dir / 'results.json')} "
                         "(`blocks_dropped`)")
    from mentor.lab.report import write_report

    results = summary(settings, policies, blocks, t0, True, code)
    write_atomically(out_dir / "results.json", [json.dumps(results, indent=2)])
    partial_path(out_dir / "results.json").unlink(missing_ok=True)
    write_report(results, out_dir)
    print(table(results))
    print(f"wrote {out_dir / 'results.json'} and {out_dir / 'report.html'} in {results['wall_s']:.0f} s")
    return results


def summary(settings, policies: dict[int, dict[str, Any]], blocks: dict[str, dict[str, Any]], t0: float,
            complete: bool, code: dict[str, str]) -> dict[str, Any]:
    """results.json: the demo's keys (`arms` over every block's runs), plus the blocks (each with the `code` that
    made it), the dropped seeds, the paired comparisons, the harm counts and the `code` and `environment` of this
    run."""
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
            "paired": paired(done, settings.arms), "harm": harm(done, settings.arms), "complete": complete,
            "code": code, "environment": environment(), "wall_s": time.perf_counter() - t0}


def table(results: dict[str, Any]) -> str:
    """The paired comparisons as a markdown table: the primary analysis over policies, then the secondary bootstrap."""
    def interval(ci) -> str:
        return "none" if ci is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"

    lines = ["| comparison | mean over policies | 95% t-interval | sign-flip p | Holm p | policies | decision | "
             "bootstrap 95% CI (blocks) |", "|---|---:|---|---:|---:|---:|---|---|"]
    for name, s in results["paired"].items():
        decision = s["decision"] + (f" (policies needed ≈ {s['n_needed']})" if "n_needed" in s else "")
        holm_p = "" if s["holm_p"] is None else f"{s['holm_p']:.3f}"
        lines.append(f"| {name} | {s['policy_mean']:+.3f} | {interval(s['t_ci'])} | {s['sign_flip_p']:.3f} | "
                     f"{holm_p} | {s['policies']} | {decision} | {interval(s['ci'])} ({s['n']}) |")
    for arm, h in results.get("harm", {}).items():
        lines.append(f"\n{arm} ends below grpo on {h['policies_below_grpo']} of {h['policies']} policies")
    return "\n".join(lines)
