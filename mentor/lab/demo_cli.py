"""`mentor demo` on the CLI."""

from __future__ import annotations

from dataclasses import replace

from mentor.lab.demo import run_demo
from mentor.lab.demo_settings import ARMS, COMPOSED_ARMS, MORE_ARMS, SDPO_ARMS, SDPO_TEMPLATES, DemoSettings
from mentor.lab.labs import LABS
from mentor.types import InputError


def cmd_demo(args) -> int:
    settings = DemoSettings.for_lab(args.lab, args.quick)
    overrides = {name: getattr(args, name) for name in ("steps", "eval_every", "heldout_problems", "train_problems",
                                                          "static_hint_digits", "jobs", "sdpo_templates")
                 if getattr(args, name) is not None}
    if args.seeds:
        try:
            overrides["seeds"] = [int(s) for s in args.seeds.split(",")]
        except ValueError:
            raise InputError(f"--seeds: give comma-separated integers such as 0,1,2, got {args.seeds!r}") from None
    if args.arms:
        overrides["arms"] = args.arms.split(",")
    if args.blocks is None:
        if args.pretrain_seeds or args.grpo_seeds is not None or args.allow_stale_blocks:
            raise InputError("--pretrain-seeds, --grpo-seeds and --allow-stale-blocks choose the blocks of --blocks N; "
                             "give --blocks too")
        run_demo(args.out, replace(settings, **overrides))  # replace() re-checks the settings
        return 0
    from mentor.lab.blocks import BLOCK_DEFAULTS, run_blocks

    if args.lab != "composed" or args.seeds or args.quick:
        raise InputError("--blocks: runs the composed lab's paired blocks; give --lab composed, and no --seeds "
                         "(a block's seeds come from its number, its policies from --pretrain-seeds) or --quick")
    pretrain_seeds = parse_seed_list("--pretrain-seeds", args.pretrain_seeds) if args.pretrain_seeds else None
    grpo_seeds = args.grpo_seeds
    if grpo_seeds is None:  # with named pre-training seeds, the blocks per seed follow from their count
        grpo_seeds = args.blocks // len(pretrain_seeds) if pretrain_seeds and args.blocks >= len(pretrain_seeds) else 2
    if args.blocks < 1 or grpo_seeds < 1:
        raise InputError(f"--blocks and --grpo-seeds must be at least 1, got {args.blocks} and {grpo_seeds}")
    if pretrain_seeds and args.blocks != len(pretrain_seeds) * grpo_seeds:
        raise InputError(f"--pretrain-seeds names {len(pretrain_seeds)} seed(s), so --blocks must be "
                         f"{len(pretrain_seeds)} x --grpo-seeds ({grpo_seeds}) = {len(pretrain_seeds) * grpo_seeds}, "
                         f"got {args.blocks}")
    jobs = overrides.pop("jobs", 2)
    if not 1 <= jobs <= 2:
        raise InputError(f"--jobs: a blocked run uses 1 or 2 worker processes, got {jobs}")
    overrides = {"arms": list(COMPOSED_ARMS), **BLOCK_DEFAULTS, **overrides}
    run_blocks(args.out, replace(settings, **overrides), args.blocks, grpo_seeds, jobs, pretrain_seeds,
               args.allow_stale_blocks)
    return 0


def parse_seed_list(flag: str, text: str) -> list[int]:
    """Seeds as ranges and lists, in the order given: "100-123", "0,3,5", "100-103,110".

    >>> parse_seed_list("--pretrain-seeds", "100-102,7")
    [100, 101, 102, 7]
    """
    seeds: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi if dash else lo)
        except ValueError:
            raise InputError(f"{flag}: give seeds (0 or more) as ranges and lists such as 100-123 or 0,3,5, got "
                             f"{text!r}") from None
        if last < first:
            raise InputError(f"{flag}: the range {part.strip()!r} ends below its start; write it as {last}-{first}")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        repeats = sorted({s for s in seeds if seeds.count(s) > 1})
        raise InputError(f"{flag}: name each seed once, got {text!r} (repeats {repeats})")
    return seeds


def add_demo_command(sub) -> None:
    """Registers `mentor demo` on the CLI's sub-parsers."""
    demo = sub.add_parser("demo", help="the offline CPU lab: zero-reward collapse and the mentor's recovery")
    demo.add_argument("--out", default="runs/demo", help="output folder (default: runs/demo)")
    demo.add_argument("--lab", default="addition", choices=list(LABS),
                      help="addition (default: the CPU lab) or composed (the composed-skills lab, docs/lab.md)")
    demo.add_argument("--quick", action="store_true", help="a smoke run in under 2 minutes")
    demo.add_argument("--steps", type=int, help="GRPO steps per arm")
    demo.add_argument("--seeds", help="comma-separated seeds (default: 0)")
    demo.add_argument("--arms", help=f"comma-separated arms (default: {','.join(ARMS)}; the composed lab also has "
                                     f"{','.join(a for a in COMPOSED_ARMS + SDPO_ARMS + MORE_ARMS if a not in ARMS)})")
    demo.add_argument("--eval-every", dest="eval_every", type=int, help="steps between held-out evaluations")
    demo.add_argument("--heldout-problems", dest="heldout_problems", type=int, help="held-out problems")
    demo.add_argument("--train-problems", dest="train_problems", type=int,
                      help="hard training problems each run draws its prompts from (default: 4000); fewer than "
                           "steps x 8 prompts makes a run see problems again, as hint_memory's memory needs")
    demo.add_argument("--static-hint-digits", dest="static_hint_digits", type=int,
                      help="answer digits of the static_hints library's hint, 1 to 3 (default: 3)")
    demo.add_argument("--jobs", type=int,
                      help="runs trained at once, one process each (default: all, up to 2 per core; with --blocks: "
                           "worker processes, 1 or 2, default 2)")
    demo.add_argument("--sdpo-templates", dest="sdpo_templates", choices=SDPO_TEMPLATES,
                      help="the SDPO arms' teacher reprompt: trl (TRL's default templates, the default) or lab (the "
                           "lab's own hint line; docs/evidence/sdpo42.md)")
    demo.add_argument("--blocks", type=int, help="composed lab: N paired blocks (pre-training seed x GRPO seed) of "
                                                 f"the arms {','.join(COMPOSED_ARMS)}, analysed over policies "
                                                 "(docs/evidence/round5-fresh-policies.md)")
    demo.add_argument("--grpo-seeds", dest="grpo_seeds", type=int,
                      help="with --blocks: GRPO seeds per pre-training seed (default: 2, or with --pretrain-seeds "
                           "the blocks over the seeds named)")
    demo.add_argument("--pretrain-seeds", dest="pretrain_seeds",
                      help="with --blocks: the pre-training seeds (policies), as ranges and lists such as 100-123 or "
                           "0,3,5 (default: 0, 1, 2, ...); one the collapse rule drops is replaced by the next unused "
                           "seed")
    demo.add_argument("--allow-stale-blocks", dest="allow_stale_blocks", action="store_true",
                      help="with --blocks: reuse finished blocks made by other code (another version of the lab, "
                           "hook, graphs or prompts, or one that recorded none), with a warning listing them; "
                           "without it such blocks stop the run (docs/lab.md, 'The machinery, round 5')")
    demo.set_defaults(func=cmd_demo)
